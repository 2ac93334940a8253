"""Kineto (PyTorch profiler) Chrome-trace JSON, mapped and written: the events of a file
(tracewh.ingest.kineto_json reads them) are mapped by sql/ingest/kineto/NN_*.sql (which event is
a kernel, times in UTC, iterations, collectives) into temp tables of the file's own cursor, in a
decoding thread (DuckDB works without the GIL); their rows wait there until the writer moves
them into the stored tables (store.sql) in the file's transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from ..errors import IngestError
from ..resources import sql_dir
from ..sqlscript import run_script, set_variables
from ..store.catalog import run_catalog_script
from ..warehouse import first_row
from . import kineto_json
from .kineto_json import (SKIPPED_CATEGORIES, SKIPPED_PHASES, EventTable, Trace, decode,
                          trace_metadata)
from .source import fault_warnings

# Staging (on the file's own cursor, in a decoding thread) and writing (by the writer).

_SQL = ("ingest", "kineto")
# what the staged view _kineto_cpu_ops reads (22_cpu_op_tree.sql says why it is a view)
_STAGED_VIEW_SOURCES = {"_ev_rows", "_ev_iteration", "_ev_op_tree"}


@dataclass
class Staged:
    """A trace mapped into temp tables (and a view) _kineto_<stored table> of its cursor, waiting
    for its file_id and rank."""

    metadata: dict
    base_time_ns: int | None
    relative_without_base: bool
    origin_ns: int | None
    repairs: list[str]
    reader: str = ""        # duckdb read_json | python msgspec
    unmodelled: tuple = ()  # (category, events) of device events no stored table holds
    faults: list[str] = field(default_factory=list)  # what 90_faults.sql counted, as warnings


def prepare(con: duckdb.DuckDBPyConnection, path: Path, run_id: str) -> Staged:
    """Decode the file and run sql/ingest/kineto/ on it, into temp tables of `con` (a cursor of
    the warehouse that only this file uses; DuckDB runs it without the GIL).

    Fast path: cut the traceEvents array out into a temporary file and let DuckDB's JSON reader
    parse it (in C++, streaming). Files it refuses (faulty JSON that the Python decoder repairs),
    19-digit timestamps and odd layouts take the Python decoder."""
    cut = kineto_json.cut_events(path)
    if cut is not None:
        try:
            return _stage(con, path, run_id, cut.trace, [], "duckdb read_json",
                          events_file=cut.events_file)
        except duckdb.OutOfMemoryException:
            raise  # the Python decoder would need more, outside DuckDB's limit
        except duckdb.Error:
            pass  # the lenient path below repairs or explains
        finally:
            cut.remove()
    decoded = decode(path, EventTable(con))
    return _stage(con, path, run_id, decoded.trace, decoded.repairs, "python msgspec")


def _stage(con: duckdb.DuckDBPyConnection, path: Path, run_id: str, trace: Trace,
           repairs: list[str], reader: str, events_file: Path | None = None) -> Staged:
    """Map the events (read_json.sql's view of `events_file`, else the Python decoder's temp
    table _trace_events) into the staged tables."""
    import json

    meta = trace_metadata(trace, repairs)
    dist = _distributed_info(meta)
    folder = sql_dir().joinpath(*_SQL)
    set_variables(
        con, run_id=run_id, base_ns=trace.baseTimeNanoseconds,
        world_size=_int(dist.get("world_size")), backend=dist.get("backend"),
        host=meta.get("host_name"), device_properties=json.dumps(meta.get("deviceProperties") or []),
        skipped_phases=sorted(SKIPPED_PHASES), skipped_categories=sorted(SKIPPED_CATEGORIES),
        events_file=None if events_file is None else str(events_file))
    if events_file is not None:
        run_script(con, folder / "read_json.sql")
    try:
        for script in sorted(folder.glob("[0-9][0-9]_*.sql")):
            run_script(con, script)
        # allocator events: totals and pairing, shared with nsys (60_memory.sql stages them)
        run_script(con, folder.parent / "memory_totals.sql")
        con.execute("ALTER TABLE _staged_memory_events RENAME TO _kineto_memory_events")
        con.execute("ALTER TABLE _kineto_memory_events DROP COLUMN file_key")  # one file here
        origin = first_row(con, "SELECT min(m) FROM (" + " UNION ALL ".join(
            f"SELECT min(start_ns) AS m FROM _kineto_{t}" for t in
            ("kernels", "memcpy", "memset", "cuda_api", "cpu_ops", "nvtx_ranges")) + ")")[0]
        # GPU-side events of categories no table models (cuda_sync, mtia_ccp_events, ...)
        unmodelled = tuple(con.execute(
            "SELECT coalesce(cat, '(none)'), count(*) FROM _ev WHERE kind = 'other' AND "
            "pid IS DISTINCT FROM getvariable('host_pid') GROUP BY ALL ORDER BY 1").fetchall())
        faults = first_row(con, "SELECT getvariable('event_faults')")[0]
    finally:
        _drop_working_tables(con)
    if origin is None:
        raise IngestError(path, "empty trace: no complete events (ph X) to store",
                          "profile with activities=[CPU, CUDA] and at least one step")
    # without a base time, epoch µs are ~1.7e15 and relative µs stay below ~1e13
    relative = trace.baseTimeNanoseconds is None and origin < 1e17
    return Staged(meta, trace.baseTimeNanoseconds, relative, origin, repairs, reader,
                  unmodelled, _fault_warnings(faults))


def _fault_warnings(faults: dict) -> list[str]:
    """90_faults.sql's counts as the source's warnings."""
    return fault_warnings(faults["negative_durations"], faults["duplicates"],
                          "identical in every field", faults["durations_not_finite"],
                          faults["times_not_finite"])


def _drop_working_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Free what the mapping used on the way; keep the staged rows (and the events, which the
    staged view _kineto_cpu_ops reads)."""
    def working(name: str) -> bool:
        return not name.startswith("_kineto_") and name not in _STAGED_VIEW_SOURCES

    for (name,) in con.execute("SELECT view_name FROM duckdb_views() WHERE temporary").fetchall():
        if working(name):
            con.execute(f'DROP VIEW IF EXISTS temp."{name}"')
    for (name,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall():
        if working(name):
            con.execute(f'DROP TABLE IF EXISTS temp."{name}"')


def load(con, path: Path, staged: Staged, run_id: str, file_id: int, rules: list,
         alone_in_run: bool):
    """Write one staged trace (inside the caller's transaction, on the cursor that staged it);
    returns its SourceFacts."""
    import json

    from .discover import rank_from_filename, rank_from_map
    from .ranks import claim, taken_ranks
    from .source import SourceFacts

    meta = staged.metadata
    dist = _distributed_info(meta)
    warnings = [f"repaired: {r}" for r in staged.repairs] + staged.faults
    taken = taken_ranks(con, run_id)
    rank, source = rank_from_map(rules, path, None, True), "rank-map"
    written = dist.get("rank")
    if rank is None and isinstance(written, int) and written >= 0:
        rank, source = written, "distributedInfo"
    elif rank is None and written is not None:
        warnings.append(f"distributedInfo.rank {written!r} is not a rank: ignored")
    if rank is None and rank_from_filename(path) is not None:
        rank, source = rank_from_filename(path), "filename"
    if rank is None:
        if not (alone_in_run and not taken):
            raise IngestError(path, "no rank in the trace (no distributedInfo.rank, none in the "
                              "file name) and other files share its run",
                              "give it one with --rank-map FILE_GLOB=RANK")
        rank, source = 0, "default"
        warnings.append("no rank in the trace: taken as rank 0")
    claim(taken, rank, source, path, run_id)
    if staged.relative_without_base:
        warnings.append("relative timestamps without baseTimeNanoseconds: times are not UTC")
    if staged.unmodelled:
        warnings.append("device events of categories tracewh does not model, not stored: " +
                        ", ".join(f"{cat} {events:,}" for cat, events in staged.unmodelled))

    set_variables(con, run_id=run_id, rank=rank, rank_source=source, file_id=file_id)
    run_catalog_script(con, sql_dir().joinpath(*_SQL, "store.sql"))
    job = {key: value for key, value in dist.items() if key != "rank"}  # the file's, not the run's
    if job:
        con.execute("UPDATE store.runs SET metadata = json_merge_patch(coalesce(metadata, '{}'), ?) "
                    "WHERE run_id = ? AND json_extract(coalesce(metadata, '{}'), '$.distributedInfo') IS NULL",
                    [json.dumps({"distributedInfo": job}), run_id])
    tool = f"PyTorch profiler (Kineto), schema {meta.get('schemaVersion', '?')}"
    return SourceFacts("kineto-json", tool, str(meta.get("schemaVersion", "")) or None,
                       not staged.relative_without_base, staged.origin_ns, meta.get("host_name"),
                       warnings, json.dumps({**meta, "reader": staged.reader}, default=str),
                       time_base=_time_base(staged))


def _time_base(staged: Staged) -> str:
    """How the trace's times became UTC, in words (store.sources.time_base)."""
    if staged.base_time_ns is not None:
        return "baseTimeNanoseconds + ts"
    return "ts relative, no baseTimeNanoseconds (not UTC)" if staged.relative_without_base \
        else "ts as epoch µs"


def _distributed_info(meta: dict) -> dict:
    info = meta.get("distributedInfo")
    return info if isinstance(info, dict) else {}


def _int(value) -> int | None:
    return value if isinstance(value, int) else None
