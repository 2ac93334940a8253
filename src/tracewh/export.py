"""Export the views as a Parquet lake: one folder per view, hive-partitioned by run (and rank).

The lake is what Spark, Trino, polars, pyarrow and BI tools read without tracewh:

    DIR/manifest.json                       tracewh version, metric lock, schemas, rows per run
    DIR/kernels/run_id=<run>/rank=<r>/*.parquet
    DIR/runs/run_id=<run>/*.parquet

Partition values are percent-encoded by DuckDB and decoded by every hive reader. Column types
are the views' own (BIGINT ns stays BIGINT). Export is incremental: a run whose sources,
views and tracewh version are unchanged since the last export is skipped.
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
from .errors import storage_fault
from .mistakes import check_runs
from .resources import sql_dir
from .store import rank_partitioned
from .warehouse import first_row, set_memory_limit, views_checksum

MANIFEST = "manifest.json"
PART = "part_0.parquet"
STAGING = ".staging"  # where a run is written before it is renamed into the lake
_EMPTY_RUN = "__empty__"  # holds a zero-row file so that a view with no rows still has a schema


@dataclass
class ExportReport:
    exported: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
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
                force: bool = False) -> ExportReport:
    """Write (or bring up to date) the Parquet lake at `out`.

    A kill or a full disk never leaves a lake that says more than it holds: the manifest first
    stops vouching for the runs about to change, each run is written in a hidden staging folder
    and renamed into place when whole, and the manifest is replaced (never rewritten in place)
    last."""
    try:
        return _export_lake(con, out, runs, force)
    except (OSError, duckdb.Error) as exc:  # named by the lake, not a hidden staging file
        fault = storage_fault(exc, "export the lake", out)
        if fault is None:
            raise
        raise fault from None


def _export_lake(con: duckdb.DuckDBPyConnection, out: Path, runs: list[str] | None,
                 force: bool) -> ExportReport:
    started = time.perf_counter()
    set_memory_limit(con, os.environ.get("TRACEWH_MEMORY_LIMIT", "1GB"))
    out.mkdir(parents=True, exist_ok=True)
    known = _read_manifest(out).get("runs", {})
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
                                              if r not in gone and r not in changing})
    for run in sorted(gone):
        _remove_run(out, views, run)
        known.pop(run, None)
        report.removed.append(run)
    staging = out / STAGING
    try:
        for run in sorted(changing):
            remove_tree(staging)
            counts = {view: _copy_run(con, staging, view, run) for view in views}
            _remove_run(out, views, run)
            for folder in sorted(staging.glob("*/run_id=*")):
                (out / folder.parent.name).mkdir(exist_ok=True)
                os.replace(folder, out / folder.parent.name / folder.name)
            known[run] = {"fingerprint": fingerprints[run], "rows": counts}
            report.exported.append(run)
            report.rows += sum(counts.values())
        for view in views:
            _keep_schema_file(con, out, view)
    finally:
        remove_tree(staging)
    _write_manifest(out, views, schemas, known)
    report.bytes = sum(p.stat().st_size for p in out.rglob("*.parquet")
                       if STAGING not in p.parts)
    report.seconds = time.perf_counter() - started
    return report


def _write_manifest(out: Path, views: list[str], schemas: dict, runs: dict) -> None:
    manifest = {
        "tracewh_version": __version__,
        "views_checksum": views_checksum(),
        "metrics_lock": _metrics_lock(),
        "layout": {view: ["run_id", "rank"] if _by_rank(schemas[view]) else ["run_id"]
                   for view in views},
        "schemas": schemas,
        "runs": dict(sorted(runs.items())),
    }
    with written_whole(out / MANIFEST, "write the lake's manifest") as scratch:
        scratch.write_text(json.dumps(manifest, indent=2) + "\n")


def _partition_name(run: str) -> str:
    return "run_id=" + quote(run, safe="")


def _fits_a_folder_name(run: str) -> bool:
    return len(_partition_name(run).encode()) <= 255


def _copy_run(con: duckdb.DuckDBPyConnection, out: Path, view: str, run: str) -> int:
    """One Parquet file per partition, written with a COPY each. (Measured: DuckDB's own
    PARTITION_BY wrote the 8-million-row kernels view 9x slower than eight filtered COPYs.)"""
    rows = con.execute(f'SELECT count(*) FROM "{view}" WHERE run_id = ?', [run]).fetchall()[0][0]
    if rows == 0:
        return 0
    run_dir = out / view / _partition_name(run)
    if not _by_rank(_schema(con, view)):
        _copy(con, f'SELECT * EXCLUDE (run_id) FROM "{view}" WHERE run_id = ?', [run],
              run_dir / PART)
        return rows
    ranks = con.execute(f'SELECT DISTINCT rank FROM "{view}" WHERE run_id = ? ORDER BY 1', [run]).fetchall()
    for (rank,) in ranks:
        _copy(con, f'SELECT * EXCLUDE (run_id, rank) FROM "{view}" WHERE run_id = ? AND rank = ?',
              [run, rank], run_dir / f"rank={rank}" / PART)
    return rows


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
    by_rank = _by_rank(_schema(con, view))
    target = (empty / "rank=0" if by_rank else empty) / PART
    if target.exists():
        return
    dropped = "run_id, rank" if by_rank else "run_id"
    target.parent.mkdir(parents=True, exist_ok=True)
    with written_whole(target, "export the lake") as scratch:
        _copy(con, f'SELECT * EXCLUDE ({dropped}) FROM "{view}" LIMIT 0', [], scratch)


def _runs_on_disk(out: Path, views: list[str]) -> set[str]:
    """Runs with a partition in the lake: what a lost or damaged manifest no longer lists."""
    return {unquote(partition.name.removeprefix("run_id="))
            for view in views for partition in (out / view).glob("run_id=*")} - {_EMPTY_RUN}


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
    """A view of a rank's events is partitioned by rank too (tracewh.store.rank_partitioned)."""
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
    if not isinstance(manifest, dict) or manifest.get("views_checksum") != views_checksum():
        return {}  # views changed: every run is exported again
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
