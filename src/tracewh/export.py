"""Export the views as a Parquet lake: one folder per view, hive-partitioned by run.

The lake is what Spark, Trino, polars, pyarrow and BI tools read without tracewh:

    DIR/manifest.json                          tracewh version, metric lock, schemas, rows per run
    DIR/kernels/run_id=<run>/part_0.parquet    a view of ranks' events: a row group per rank
    DIR/runs/run_id=<run>/part_0.parquet
    DIR/.tracewh.lock                          held by the export writing the lake (folderlock)

Partition values are percent-encoded and decoded by every hive reader. Column types are the
views' own (BIGINT ns stays BIGINT; an ENUM is a string). Export is incremental: a run whose
sources, views and tracewh version are unchanged since the last export is skipped.

Each view is computed once per export, in one streamed scan of the runs being written (a
query per run and rank recomputed the view over the whole warehouse each time: 40 runs took
489 s). Its rows go to one Parquet writer per run, in row groups that each hold one rank, so a
reader filtering on rank skips the others' by the row groups' statistics (a folder per rank
made a 1,024-rank run 11,000 files). Rows wait in memory per (run, rank) only up to a budget,
taken from DuckDB's limit, and nothing is sorted, so memory stays bounded whatever the size of
a run. Some runs (`--run`, or those changed) are read through a view's `<view>_of(runs)` table
macro when it has one, so that a run's export does not compute the view for every run.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote

import duckdb

from . import __version__
from .atomic import remove_tree, written_whole
from .errors import TracewhError, storage_fault
from .folderlock import hold_folder
from .mistakes import check_runs
from .resources import sql_dir
from .store import rank_partitioned
from .warehouse import first_row, memory_limit_bytes, set_memory_limit, views_checksum

MANIFEST = "manifest.json"
LAYOUT = 2  # 2: a file per view and run, a row group per rank (1: a folder per rank)
PART = "part_0.parquet"
STAGING = ".staging"  # where runs are written before they are renamed into the lake
INGESTED = "ingested"  # the manifest's record of the files `ingest --engine spark` decoded
_EMPTY_RUN = "__empty__"  # holds a zero-row file so that a view with no rows still has a schema
# What the Arrow side holds is taken from DuckDB's limit, so that the export stays within the
# limit plus the interpreter's own (gpu_op_launches of the 8 M-op bench at 1GB: 1,529 MiB with
# 122,880-row batches, 64 MB waiting and DuckDB at the whole limit; 1,152 MiB so).
BATCH_ROWS = 16_384  # rows DuckDB hands over at a time: fewer in flight (1,323 MiB with only this)
GROUP_ROWS = 1_048_576  # most rows in a row group
ARROW_SHARE = 128 << 20  # the most taken from DuckDB's limit for Arrow's side (an eighth below 1GB)


@dataclass
class ExportReport:
    exported: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    rows: int = 0
    bytes: int = 0
    seconds: float = 0.0


def public_views(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [name for (name,) in con.execute(
        "SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal "
        "AND database_name = current_database() AND view_name NOT LIKE '\\_%' ESCAPE '\\' "
        "ORDER BY view_name").fetchall()]


def lake_views(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The views a lake holds, one folder each, partitioned by run: those with a run_id column.
    A view of no run (op_shapes: each distinct op shape with its model's answer, shared by the
    runs) stays out; perf_ops carries those answers per op."""
    runs = {name for (name,) in con.execute(
        "SELECT table_name FROM duckdb_columns() WHERE database_name = current_database() "
        "AND schema_name = 'main' AND column_name = 'run_id'").fetchall()}
    return [view for view in public_views(con) if view in runs]


def run_fingerprints(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """A run's identity for incremental export: its sources' hashes, the views, tracewh."""
    rows = con.execute("SELECT run_id, list(sha256 ORDER BY sha256) FROM sources GROUP BY run_id").fetchall()
    salt = f"{__version__}/{views_checksum()}"
    return {run: hashlib.sha256((salt + "/" + ",".join(shas)).encode()).hexdigest()
            for run, shas in rows}


def export_lake(con: duckdb.DuckDBPyConnection, out: Path, runs: list[str] | None = None,
                force: bool = False, wait: float = 0.0, on_wait=None,
                on_note=None, ingested: dict | None = None) -> ExportReport:
    """Write (or bring up to date) the Parquet lake at `out`.

    One export writes a lake at a time (folderlock: another waits up to `wait` seconds, then
    'lake busy'). A kill or a full disk never leaves a lake that says more than it holds: the
    manifest first stops vouching for the runs about to change, the runs are written in a
    hidden staging folder and renamed into place when whole, and the manifest is replaced
    (never rewritten in place) last, with the rows counted from the files' footers.
    `ingested` (tracewh.spark_ingest) replaces the manifest's record of the files the lake was
    ingested from, in that last write."""
    try:
        with hold_folder(out, "lake", wait, on_wait, on_note):
            return _export_lake(con, out, runs, force, ingested)
    except (OSError, duckdb.Error) as exc:  # named by the lake, not a hidden staging file
        fault = storage_fault(exc, "export the lake", out)
        if fault is None:
            raise
        raise fault from None


def _export_lake(con: duckdb.DuckDBPyConnection, out: Path, runs: list[str] | None,
                 force: bool, ingested: dict | None) -> ExportReport:
    started = time.perf_counter()
    pending_bytes = _leave_room_for_arrow(con, os.environ.get("TRACEWH_MEMORY_LIMIT", "1GB"))
    before = _read_manifest(out)
    known, was_ingested = before.get("runs", {}), before.get(INGESTED)
    fingerprints = run_fingerprints(con)
    wanted = set(runs) if runs else set(fingerprints)
    views = lake_views(con)
    report = ExportReport()
    gone = (set(known) | _runs_on_disk(out, views)) - set(fingerprints)
    changing = {run for run in wanted & set(fingerprints)
                if force or known.get(run, {}).get("fingerprint") != fingerprints[run]}
    report.skipped = sorted(wanted & set(fingerprints) - changing)
    for run in sorted(changing):
        if not _fits_a_folder_name(run):
            report.problems.append(
                f"run {run[:60]!r}...: its name is {len(_partition_name(run).encode())} bytes as "
                "a folder name, above the 255 a file system allows - not exported; the other "
                "runs are")
            changing.discard(run)
    schemas = {view: _schema(con, view) for view in views}
    if gone or changing:  # from here until the last manifest, these runs are not vouched for
        _write_manifest(out, views, schemas, {r: v for r, v in known.items()
                                              if r not in gone and r not in changing},
                        was_ingested)
    for run in sorted(gone):
        _remove_run(out, views, run)
        known.pop(run, None)
        report.removed.append(run)
    staging = out / STAGING
    try:
        remove_tree(staging)
        every_run = changing == set(fingerprints)
        run_forms = _run_forms(con, views)
        written = {view: _write_view(con, staging, view, schemas[view], sorted(changing),
                                     every_run, view in run_forms, pending_bytes)
                   for view in views}
        for run in sorted(changing):
            _remove_run(out, views, run)
            for view in views:
                staged = staging / view / _partition_name(run)
                if staged.exists():
                    (out / view).mkdir(exist_ok=True)
                    os.replace(staged, out / view / staged.name)
            rows = {view: _rows_on_disk(out, view, run)[0] for view in views}
            for view in views:
                if rows[view] != written[view].get(run, 0):
                    raise TracewhError(f"{out}: run {run!r} view {view}: wrote "
                                       f"{written[view].get(run, 0):,} rows but the files hold "
                                       f"{rows[view]:,} - export again")
            known[run] = {"fingerprint": fingerprints[run], "rows": rows}
            report.exported.append(run)
            report.rows += sum(rows.values())
        for view in views:
            _keep_schema_file(con, out, view)
    finally:
        remove_tree(staging)
    _write_manifest(out, views, schemas, known, ingested or was_ingested)
    report.bytes = sum(p.stat().st_size for p in out.rglob("*.parquet")
                       if STAGING not in p.parts)
    report.seconds = time.perf_counter() - started
    return report


def _leave_room_for_arrow(con: duckdb.DuckDBPyConnection, limit: str) -> int:
    """DuckDB's limit is `limit` less Arrow's share (ARROW_SHARE, an eighth of a smaller limit):
    the rows DuckDB hands over wait in Arrow, outside its accounting, for their row group.
    Returns the bytes that may wait: a quarter of the share (the rest: their copies while a row
    group is cut and written, and the batches in flight)."""
    set_memory_limit(con, limit)
    whole = memory_limit_bytes(con)
    share = min(ARROW_SHARE, whole // 8)
    con.execute(f"SET memory_limit = '{whole - share}B'")
    return share // 4


def _write_manifest(out: Path, views: list[str], schemas: dict, runs: dict,
                    ingested: dict | None = None) -> None:
    manifest = {
        "tracewh_version": __version__,
        "views_checksum": views_checksum(),
        "metrics_lock": _metrics_lock(),
        "lake_layout": LAYOUT,
        "layout": {view: ["run_id"] for view in views},  # hive partitions
        "row_groups_by": {view: ["rank"] for view in views if _by_rank(schemas[view])},
        "schemas": schemas,
        "runs": dict(sorted(runs.items())),
    }
    if ingested:
        manifest[INGESTED] = ingested
    with written_whole(out / MANIFEST, "write the lake's manifest") as scratch:
        scratch.write_text(json.dumps(manifest, indent=2) + "\n")


def _partition_name(run: str) -> str:
    return "run_id=" + quote(run, safe="")


def _fits_a_folder_name(run: str) -> bool:
    return len(_partition_name(run).encode()) <= 255


def _write_view(con: duckdb.DuckDBPyConnection, staging: Path, view: str, schema: list,
                runs: list[str], every_run: bool, run_form: bool,
                pending_bytes: int) -> dict[str, int]:
    """Write `view`'s rows of `runs` under `staging`, one file per run, from one scan of the
    view, rows waiting for their row group up to `pending_bytes`; returns the rows written per
    run."""
    if not runs:
        return {}
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    by_rank = _by_rank(schema)
    columns = ", ".join(f'CAST("{name}" AS VARCHAR) AS "{name}"' if kind == "VARCHAR"
                        else f'"{name}"' for name, kind in schema if name != "run_id")
    source, params = f'"{view}"', []
    if not every_run and run_form:  # the view's form that takes the runs
        source, params = f'"{view}_of"(?::VARCHAR[])', [runs]
    where = "" if every_run else f" WHERE run_id IN ({', '.join('?' * len(runs))})"
    reader = con.sql(f'SELECT run_id, {columns} FROM {source}{where}',
                     params=None if every_run else params + runs).to_arrow_reader(BATCH_ROWS)
    file_schema = reader.schema.remove(0)
    writers: dict[str, pq.ParquetWriter] = {}
    pending: dict[tuple[str, int], list] = {}  # (run, rank) -> tables waiting for a row group
    sizes: dict[tuple[str, int], list[int]] = {}  # (run, rank) -> [rows, bytes] waiting
    written: dict[str, int] = {}
    waiting_bytes = 0

    def flush(key: tuple[str, int]) -> None:
        nonlocal waiting_bytes
        parts = pending.pop(key)
        table = pa.concat_tables(parts)
        waiting_bytes -= sizes.pop(key)[1]
        run = key[0]
        if run not in writers:
            target = staging / view / _partition_name(run) / PART
            target.parent.mkdir(parents=True, exist_ok=True)
            writers[run] = pq.ParquetWriter(target, file_schema, compression="zstd")
        writers[run].write_table(table, row_group_size=GROUP_ROWS)
        written[run] = written.get(run, 0) + table.num_rows

    try:
        for batch in reader:
            if batch.num_rows == 0:
                continue
            runs_here = pc.dictionary_encode(batch.column(0))
            codes = runs_here.indices.to_numpy(zero_copy_only=False).astype(np.int64)
            if by_rank:  # a key per (run, rank)
                ranks = pc.fill_null(batch.column("rank"), -1).to_numpy(zero_copy_only=False)
                codes = (codes << 32) + (ranks.astype(np.int64) & 0xFFFFFFFF)
            order = np.argsort(codes, kind="stable")
            keys = codes[order]
            cuts = [0, *(np.flatnonzero(keys[1:] != keys[:-1]) + 1).tolist(), len(keys)]
            table = pa.Table.from_batches([batch]).remove_column(0)
            for first, end in zip(cuts, cuts[1:]):
                key = (runs_here.dictionary[int(keys[first]) >> 32 if by_rank
                                           else int(keys[first])].as_py(),
                       int(keys[first]) & 0xFFFFFFFF if by_rank else 0)
                # a key's own copy: a slice would keep the whole batch alive while it waits
                part = table if len(cuts) == 2 else table.take(pa.array(order[first:end]))
                pending.setdefault(key, []).append(part)
                size = sizes.setdefault(key, [0, 0])
                size[0] += part.num_rows
                size[1] += part.nbytes
                waiting_bytes += part.nbytes
                if size[0] >= GROUP_ROWS:
                    flush(key)
            if waiting_bytes > pending_bytes:
                # the biggest waiting ones go first (running totals: summing every key's parts
                # at each flush took 70 of the 40-run export's 216 s)
                for key in sorted(pending, key=lambda k: sizes[k][1], reverse=True):
                    if waiting_bytes <= pending_bytes // 2:
                        break
                    flush(key)
                pa.default_memory_pool().release_unused()  # back to the system, not kept
        for key in sorted(pending):
            flush(key)
    finally:
        for writer in writers.values():
            writer.close()
    return written


def _run_forms(con: duckdb.DuckDBPyConnection, views: list[str]) -> set[str]:
    """The views with a table macro `<view>_of(want_runs)` giving the rows of some runs (a
    view whose run filter cannot reach all its scans: sql/views/gpu_op_launches.sql)."""
    macros = {name for (name,) in con.execute(
        "SELECT function_name FROM duckdb_functions() WHERE function_type = 'table_macro' "
        "AND database_name = current_database() AND function_name LIKE '%\\_of' ESCAPE '\\'"
    ).fetchall()}
    return {view for view in views if f"{view}_of" in macros}


def _copy(con: duckdb.DuckDBPyConnection, query: str, params: list, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    quoted = str(target).replace("'", "''")
    con.execute(f"COPY ({query}) TO '{quoted}' (FORMAT PARQUET, COMPRESSION zstd)", params)


def _keep_schema_file(con: duckdb.DuckDBPyConnection, out: Path, view: str) -> None:
    """A view with no rows in any run still gets one zero-row file, so readers see its columns."""
    folder = out / view
    has_data = any(p for p in folder.rglob("*.parquet")
                   if f"run_id={_EMPTY_RUN}" not in p.parts) if folder.exists() else False
    empty = folder / f"run_id={_EMPTY_RUN}"
    if has_data:
        shutil.rmtree(empty, ignore_errors=True)
        return
    target = empty / PART
    if target.exists():
        return
    remove_tree(empty)  # a lake of an older layout: its file was elsewhere in the folder
    target.parent.mkdir(parents=True, exist_ok=True)
    with written_whole(target, "export the lake") as scratch:
        _copy(con, f'SELECT * EXCLUDE (run_id) FROM "{view}" LIMIT 0', [], scratch)


def _runs_on_disk(out: Path, views: list[str]) -> set[str]:
    """Runs with a partition in the lake: what a lost or damaged manifest no longer lists."""
    return {unquote(partition.name.removeprefix("run_id="))
            for view in views for partition in (out / view).glob("run_id=*")} - {_EMPTY_RUN}


def _rows_on_disk(out: Path, view: str, run: str) -> tuple[int, list[str]]:
    """The rows of a run's files of a view, from their footers, and a line per file that does
    not read (truncated, not Parquet)."""
    import pyarrow.parquet as pq

    rows, unreadable = 0, []
    for path in sorted((out / view / _partition_name(run)).rglob("*.parquet")):
        try:
            rows += pq.read_metadata(path).num_rows
        except (OSError, ValueError) as exc:
            unreadable.append(f"{path.relative_to(out)} unreadable "
                              f"({str(exc).splitlines()[0][:100]})")
    return rows, unreadable


def check_lake(out: Path) -> tuple[list[str], int]:
    """Compare every (run, view) the manifest names with its files' rows (their footers):
    a line per difference, and the rows found."""
    path = out / MANIFEST
    try:
        manifest = json.loads(path.read_text())
        runs = manifest["runs"]
        views = list(manifest["schemas"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"{path}: no readable lake manifest ({type(exc).__name__}) - run 'tracewh "
                f"export {out}'"], 0
    problems, total = [], 0
    for run, info in runs.items():
        for view in views:
            says = info.get("rows", {}).get(view, 0)
            holds, unreadable = _rows_on_disk(out, view, run)
            total += holds
            if unreadable or holds != says:
                problems.append(f"run={run} view={view}: the manifest says {says:,} rows, the "
                                f"lake holds {holds:,}" + "".join(f"; {u}" for u in unreadable))
    for run in sorted(_runs_on_disk(out, views) - set(runs)):
        problems.append(f"run={run}: in the lake but not in the manifest")
    return problems, total


def _remove_run(out: Path, views: list[str], run: str) -> None:
    for view in views:
        folder = out / view
        for partition in folder.glob("run_id=*") if folder.exists() else []:
            if unquote(partition.name.removeprefix("run_id=")) == run:
                shutil.rmtree(partition)


def _schema(con: duckdb.DuckDBPyConnection, view: str) -> list[list[str]]:
    # an ENUM column (the GPU op names) is a string in Parquet and to every reader of the lake
    return [[name, "VARCHAR" if kind.startswith("ENUM(") else kind] for name, kind in con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = 'main' "
        "AND table_name = ? AND database_name = current_database() ORDER BY column_index",
        [view]).fetchall()]


def _by_rank(schema: list[list[str]]) -> bool:
    """A view of ranks' events gets a row group per rank (tracewh.store.rank_partitioned)."""
    return rank_partitioned(name for name, _ in schema)


def _metrics_lock() -> str | None:
    lock = sql_dir() / "metrics.lock"
    return lock.read_text() if lock.exists() else None


def _read_manifest(out: Path) -> dict:
    path = out / MANIFEST
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except ValueError:  # damaged (an older tracewh rewrote it in place): start over
        return {}
    if not isinstance(manifest, dict) or manifest.get("views_checksum") != views_checksum() \
            or manifest.get("lake_layout", 1) != LAYOUT:
        return {}  # views or layout changed: every run is exported again
    return manifest


def export_chrome_trace(con: duckdb.DuckDBPyConnection, run: str | list[str], out: Path) -> int:
    """Write a run, or several side by side (a list), as a Chrome/Perfetto trace JSON
    (sql/export/chrome_trace.sql makes the events). A name may also be a series (a series_id of
    the series view): its runs in order, labelled with the value that varies ('tp=2: rank 0').
    Each run starts at its own first event. Returns the number of events written."""
    runs, labels = _chrome_trace_runs(con, [run] if isinstance(run, str) else list(run))
    con.execute("SET VARIABLE runs = ?::VARCHAR[]", [runs])
    con.execute("SET VARIABLE labels = ?::VARCHAR[]", [labels])
    result = con.execute((sql_dir() / "export" / "chrome_trace.sql").read_text())
    written = 0
    with written_whole(out, "write the trace") as scratch, scratch.open("w") as handle:
        handle.write('{"displayTimeUnit": "ms", "traceEvents": [\n')
        while rows := result.fetchmany(50_000):
            handle.write("".join((",\n" if written + i else "") + str(row[0])
                                 for i, row in enumerate(rows)))
            written += len(rows)
        handle.write("\n]}\n")
    return written


def _chrome_trace_runs(con: duckdb.DuckDBPyConnection,
                       names: list[str]) -> tuple[list[str], list[str]]:
    """The runs to write and a label for each: a run is itself; a series, each of its runs in
    order, labelled 'varied=value'."""
    runs: list[str] = []
    labels: list[str] = []
    for name in names:
        if first_row(con, "SELECT 1 FROM store.runs WHERE run_id = ?", [name]):
            runs.append(name)
            labels.append(name)
            continue
        check_runs(con, [name], series=True)
        series = con.execute("SELECT run_id, varied || '=' || value FROM series "
                             "WHERE series_id = ? ORDER BY position", [name]).fetchall()
        runs += [run for run, _ in series]
        labels += [label for _, label in series]
    return runs, labels


def chrome_trace_name(run: str) -> str:
    """The file name of a run's trace in a folder: the run's name, cut to what a file system
    allows (255 bytes) with a hash keeping cut names apart."""
    name = run.replace("/", "_")
    if len((name + ".trace.json").encode()) > 255:
        digest = hashlib.sha256(run.encode()).hexdigest()[:12]
        name = name.encode()[:200].decode(errors="ignore") + "-" + digest
    return name + ".trace.json"
