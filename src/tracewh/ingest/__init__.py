"""Ingest trace files into the warehouse, keyed by content hash: one transaction per file, or per
batch of small nsys exports (a batch that fails is written again one file at a time)."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter, deque
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import duckdb

from ..errors import IngestError, StorageFault, TracewhError
from ..store import derive as derive_registry, remove_source, source_rows
from ..sqlscript import insert_rows, rollback
from ..warehouse import cursor, first_row, utc_now
from . import card, config
from .discover import (SERIES_CSV, Candidate, RankRule, discover, discover_logs, not_regular,
                       run_identity)
from .formats import FORMATS
from .storage import storage_fault, warehouse_path

UNNAMED = ""  # the run of a series given without --run, until _series_run finds it


@dataclass
class FileResult:
    path: Path
    status: str            # ingested | skipped | replaced | failed
    run_id: str | None = None
    rows: int = 0
    bytes: int = 0
    seconds: float = 0.0
    message: str = ""
    warnings: tuple[str, ...] = ()  # stored in sources.warnings, and printed
    storage_fault: bool = False  # the warehouse's storage failed: later files are not tried


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def decoding_jobs(jobs: int | None) -> int:
    """Files decoded at once: `jobs`, or one per core."""
    return max(1, jobs or os.cpu_count() or 1)


def default_memory_limit(jobs: int | None) -> str:
    """256 MB for each file held at once: the files decoding and the one being written. Below
    what the files in flight need, DuckDB evicts, and each eviction hands the allocator's pages
    back to the OS, to be faulted in again: 8 x 100 MB Kineto bench, 2 cores, 14 interleaved
    pairs of CLI runs, 448MB against 768MB: 460-505k page faults against 235-300k, median 6.72
    against 6.46 s, 12.1 against 11.6 CPU s; peak RSS 466 against 518 MB (what the 3 files in
    flight need: 4GB gives the same)."""
    return f"{256 * (decoding_jobs(jobs) + 1)}MB"


def ingest_paths(
    con: duckdb.DuckDBPyConnection,
    paths: list[Path],
    run: str | None = None,
    rank_rules: list[RankRule] | None = None,
    replace: bool = False,
    jobs: int | None = None,
    series: list[Path] | None = None,
    series_options: dict | None = None,
    logs: list[Path] | None = None,
    log_options: dict | None = None,
    on_file: Callable[[FileResult], None] | None = None,
    on_start: Callable[[list[Candidate]], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> list[FileResult]:
    """Ingest every trace under `paths`; a bad file is reported and the others still load.

    Decoding a file (hashing, parsing, mapping into temporary tables of its own cursor) runs on
    `jobs` worker threads, ahead of the main thread, which writes one file at a time, each in its
    own transaction, so rank numbering and duplicate checks see every earlier file. The heavy
    work is DuckDB's (the nsys reader's, the JSON reader's, the mapping SQL), which runs without
    the GIL, so the threads use every core.
    """
    candidates, errors, notes = discover(paths, run, rank_rules)
    for note in notes:  # what was passed over or grouped apart, and why
        on_note and on_note(note)
    for path in series or []:  # named one by one: a .csv could be anything
        if not path.is_file():
            errors.append(IngestError(path, not_regular(path) if path.exists() else "no such file"))
            continue
        # without --run, the run is the one whose GPUs and time the samples cover (_series_run)
        run_id, root = run_identity(path, path.parent, run) if run else (UNNAMED, path.parent)
        candidates.append(Candidate(path.resolve(), SERIES_CSV, run_id, root))
    if logs:
        found, log_errors = discover_logs(logs, run)
        candidates += found
        errors += log_errors
    results = [FileResult(Path(e.path), "failed", message=str(e)) for e in errors]
    if on_start:
        on_start(candidates)
    for result in results:
        on_file and on_file(result)
    jobs = decoding_jobs(jobs)
    # DuckDB's threads shared out among the files in flight: each file's statements then run on
    # the thread that issues them while the files keep the cores busy side by side; DuckDB's own
    # parallelism inside each statement only added overhead (Kineto bench, 2 cores, 6 runs each:
    # median 10.4 s instead of 12.1, best runs 17.7 CPU s instead of 19.3). Restored at the end
    # for the checkpoint. A file alone still gets them all.
    threads = first_row(con, "SELECT current_setting('threads')")[0]
    # Each file leaves a partial row group at the end of every table it fills; a checkpoint's
    # vacuum merges and recompresses them all, which cost 0.15-0.2 s of CPU per 100 MB Kineto
    # file (bench, 8 files, interleaved runs: 17.8-19.6 -> 15.6-16.5 CPU s). Those row groups
    # scan as fast, so an ingest checkpoints without merging; it vacuums as usual when it
    # replaced a source, whose deleted rows only a vacuum reclaims.
    vacuum_tasks = first_row(con, "SELECT current_setting('max_vacuum_tasks')")[0]
    con.execute("SET max_vacuum_tasks = 0")
    con.execute(f"SET threads = {max(1, threads // min(jobs, max(1, len(candidates))))}")
    try:
        _ingest_candidates(con, candidates, results, jobs, rank_rules or [], replace,
                           {**(series_options or {}), **(log_options or {})}, on_file)
        con.execute(f"SET threads = {threads}")  # the checkpoint uses every thread
        if not any(r.status == "replaced" for r in results):
            _checkpoint(con, said=any(r.storage_fault for r in results))
    finally:
        con.execute(f"SET threads = {threads}")
        con.execute(f"SET max_vacuum_tasks = {vacuum_tasks}")
    return results


def _checkpoint(con: duckdb.DuckDBPyConnection, said: bool) -> None:
    """The write-ahead log moved into the file. A storage fault here loses nothing (every file
    is committed in the log, which DuckDB replays at the next open) but ends the connection: it
    is said once, as such (StorageFault), unless a file's write already said it (`said`)."""
    path = warehouse_path(con)
    try:
        con.execute("CHECKPOINT")
    except duckdb.Error as exc:
        fault = storage_fault(exc)
        if fault is None or said:
            return  # another transaction is open: the checkpoint happens at close instead
        raise StorageFault(
            f"{path}: cannot checkpoint: {fault[0]} - nothing is lost: every file ingested is "
            f"committed in its write-ahead log ({Path(path).name}.wal), which is replayed when "
            "it is next opened, so every command reads it; free space there, and the next "
            "ingest into it finishes the checkpoint") from None


# Small nsys exports (nsys.SMALL_FILE_BYTES) decoded one after another are written together: one
# transaction, one run of the ~40 mapping statements, each of which costs 1-7 ms of planning
# whatever its rows: about 0.2 s of CPU per batch. 256 exports of 0.2 MB (bench/ingest_per_file.py),
# CPU per file beyond decoding: 119 ms one by one; batches of 4: 50, 8: 28, 16: 13-16, 64: 7.
# A batch is at most 8 MB of files, a few tenths of a second of writing: the progress bar moves
# and Ctrl-C or a crash loses no more than that.
BATCH_FILES = 64
BATCH_BYTES = 8 << 20


def _batch_of(prepared: _Prepared):
    """The batch a decoded file may join (its format's), or None: it is written alone."""
    batch = FORMATS[prepared.candidate.format].batch
    failed = prepared.info is None or isinstance(prepared.info, Exception)
    return batch if batch is not None and not failed and batch.fits(prepared.info) else None


def ingest_candidates(con: duckdb.DuckDBPyConnection, candidates: list[Candidate],
                      rank_rules: list[RankRule], files_per_run: dict[str, int]) -> list[FileResult]:
    """Write discovered files one after another, on this thread, as ingest_paths does; a run's
    files beyond these (decoded elsewhere: tracewh.ingest.fragments) count in `files_per_run`."""
    results: list[FileResult] = []
    _ingest_candidates(con, candidates, results, 1, rank_rules, False, {}, None, files_per_run)
    return results


def _ingest_candidates(con, candidates, results, jobs, rank_rules, replace, options,
                       on_file, files_per_run=None) -> None:
    files_per_run = files_per_run or Counter(c.run_id for c in candidates
                                             if FORMATS[c.format].trace)
    queue = iter(candidates)
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="tracewh-decode") as pool:
        def submit(c):
            return pool.submit(_prepare, con, c, replace, options)

        # `jobs` files decoding and one being written: the next file starts decoding as soon as
        # one is taken for writing, else a core idles whenever the file behind it is decoded
        # already (the first two finish together). Kineto bench, 2 cores, 12 interleaved pairs
        # of CLI runs: median 7.56 -> 7.12 s (0.05 s of it the faster warehouse creation), cores
        # busy 82% -> 88% of the time, the same CPU, peak RSS 418 -> 470 MB. Sessions before
        # measured 1% for 3% more CPU, when each file still held 29 MB more in memory.
        ahead = deque(submit(c) for c in islice(queue, jobs))

        def take() -> _Prepared:
            prepared = ahead.popleft().result()
            ahead.extend(submit(c) for c in islice(queue, 1))
            return prepared

        def joins(batch: list[_Prepared]) -> bool:
            """The next file decoded goes into `batch` (a file of the same content goes into
            the next one, to be skipped as already ingested). With --replace each file is
            written alone, as its old version's removal frees ranks for the files after it."""
            nxt = ahead[0].result() if ahead and not replace else None
            return (nxt is not None and _batch_of(nxt) is _batch_of(batch[0])
                    and len(batch) < BATCH_FILES
                    and sum(p.result.bytes for p in batch) + nxt.result.bytes <= BATCH_BYTES
                    and nxt.digest not in {p.digest for p in batch})

        while ahead:
            prepared = take()
            if _batch_of(prepared):
                batch = [prepared]
                while joins(batch):
                    batch.append(take())
                done = _finish_batch(con, batch, rank_rules, replace, options)
                not_written = len(batch) - len(done)
            else:
                alone = files_per_run[prepared.candidate.run_id] == 1
                done, not_written = [_finish(prepared, rank_rules, replace, alone, options)], 0
            for result in done:
                if result.storage_fault:  # every later file would meet it too: say so once, stop
                    untried = not_written + len(ahead) + sum(1 for _ in queue)
                    for future in ahead:
                        _close(future.result().cursor)
                    ahead.clear()
                    if untried:
                        result.message += f"; stopped there, {untried} file(s) after it not tried"
                results.append(result)
                on_file and on_file(result)


@dataclass
class _Prepared:
    """A file decoded into temporary tables of its own cursor, waiting to be written."""

    candidate: Candidate
    result: FileResult
    cursor: duckdb.DuckDBPyConnection | None = None
    source_path: Path | None = None
    digest: str | None = None
    info: object = None
    started: float = 0.0


def _prepare(con: duckdb.DuckDBPyConnection, candidate: Candidate, replace: bool,
             options: dict) -> _Prepared:
    prepared = _Prepared(candidate, FileResult(candidate.path, "failed", candidate.run_id),
                         started=time.perf_counter())
    try:
        prepared.cursor = cursor(con)
        # its statements run while the CLI draws its own progress bar: DuckDB draws none
        prepared.cursor.execute("SET enable_progress_bar = false")
        fmt = FORMATS[candidate.format]
        source_path = prepared.source_path = fmt.source(candidate.path)
        prepared.result.bytes = source_path.stat().st_size
        before = _identity(source_path)
        prepared.digest = sha256_of(source_path)
        if _already_ingested(prepared.cursor, prepared.digest) and not replace:
            return prepared  # _finish reports the skip
        prepared.info = fmt.prepare(prepared.cursor, source_path, candidate, options)
        _unchanged_since(source_path, before, prepared.digest)
    except Exception as exc:  # reported by _finish, in file order
        prepared.info = exc
    return prepared


def _identity(path: Path) -> tuple[int, ...]:
    stat = path.stat()
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns


def _unchanged_since(path: Path, before: tuple[int, ...], digest: str) -> None:
    """Refuse a file written while it was hashed and decoded (a job still writing it, a copy in
    progress): its hash and its rows would describe different versions, and the version the hash
    names would later be skipped as already ingested. A write changes size or mtime, unless it
    falls in the same tick of the kernel's coarse clock (1-10 ms) as a write just before
    reading began: a file written in the last seconds is hashed again instead."""
    written_lately = time.time_ns() - before[3] < 5_000_000_000
    if _identity(path) != before or written_lately and sha256_of(path) != digest:
        raise IngestError(path, "changed while being read (still being written or copied?)",
                          "ingest it again once whatever writes it has finished")


def _already_ingested(con: duckdb.DuckDBPyConnection, digest: str):
    return first_row(con, "SELECT file_id, run_id FROM store.sources WHERE sha256 = ?", [digest])


def _finish(prepared: _Prepared, rules: list[RankRule], replace: bool, alone: bool,
            options: dict) -> FileResult:
    result, con, path = prepared.result, prepared.cursor, prepared.candidate.path
    try:
        if isinstance(prepared.info, Exception):
            raise prepared.info
        known = _already_ingested(con, prepared.digest)
        if known and not replace:
            result.status, result.run_id = "skipped", known[1]
            result.message = f"{path}: already ingested (run {known[1]!r}, file_id {known[0]})"
            return result
        stale = con.execute("SELECT file_id FROM store.sources WHERE path = ? OR sha256 = ?",
                            [str(path), prepared.digest]).fetchall()
        if stale and not replace:
            raise IngestError(path, "this path was ingested before with different content",
                              "use --replace to re-ingest it")
        con.execute("BEGIN TRANSACTION")
        try:
            for (old_id,) in stale:
                remove_source(con, old_id)
            _load(con, prepared, rules, alone, options)
            con.execute("COMMIT")
        except BaseException:
            rollback(con)
            raise
        result.status = "replaced" if stale else "ingested"
    except Exception as exc:
        _failed(con, result, exc)
    finally:
        _close(con)
        result.seconds = time.perf_counter() - prepared.started
    return result


def _failed(con, result: FileResult, exc: Exception) -> None:
    """Record why a file failed in its result, or re-raise when the ingest must stop (Ctrl-C)."""
    result.warnings = ()
    if isinstance(exc, IngestError):
        result.message = str(exc)
    elif isinstance(exc, OSError):
        result.message = str(IngestError(result.path, f"cannot read: {exc.strerror or exc}",
                                         "check its permissions, or copy it somewhere readable"))
    elif _interrupted(exc):  # Ctrl-C reached DuckDB while this file was read: the ingest stops
        raise exc
    else:
        result.message = _fault_message(con, result.path, exc, result)


def _finish_batch(con: duckdb.DuckDBPyConnection, batch: list[_Prepared], rules: list[RankRule],
                  replace: bool, options: dict) -> list[FileResult]:
    """Write a batch of small files (nsys exports) in one transaction. When it fails, it is rolled back
    and each file is written alone, so that a bad file fails by itself, with its own message.
    Returns the files' results, up to a storage fault (the files after it are not tried)."""
    writer = cursor(con)
    try:
        writer.execute("SET enable_progress_bar = false")
        if len(batch) > 1:
            try:
                return _write_batch(writer, batch, rules, replace, options)
            except Exception as exc:
                if _interrupted(exc):
                    raise
        results = []
        for prepared in batch:
            try:
                results += _write_batch(writer, [prepared], rules, replace, options)
            except Exception as exc:
                _failed(writer, prepared.result, exc)
                results.append(prepared.result)
            if results[-1].storage_fault:
                break
        return results
    finally:
        _close(writer)
        for prepared in batch:
            _close(prepared.cursor)
            prepared.result.seconds = time.perf_counter() - prepared.started


def _write_batch(con: duckdb.DuckDBPyConnection, batch: list[_Prepared], rules: list[RankRule],
                 replace: bool, options: dict) -> list[FileResult]:
    """Write small files of one format (files already stored are skipped, files whose ranks
    clash are failed) in one transaction; raises, having rolled it back, when that transaction
    fails."""
    how = _batch_of(batch[0])
    known = {}  # sha256 or path -> (file_id, run_id, sha256) of stored sources
    for file_id, run_id, path, digest in con.execute(
            "SELECT file_id, run_id, path, sha256 FROM store.sources "
            "WHERE list_contains(?, sha256) OR list_contains(?, path)",
            [[p.digest for p in batch], [str(p.candidate.path) for p in batch]]).fetchall():
        known[digest] = known[path] = (file_id, run_id, digest)
    todo, stale = [], {}
    for prepared in batch:
        result, path = prepared.result, prepared.candidate.path
        same = known.get(prepared.digest)
        if same and not replace:
            result.status, result.run_id = "skipped", same[1]
            result.message = f"{path}: already ingested (run {same[1]!r}, file_id {same[0]})"
        elif str(path) in known and not replace:
            result.message = str(IngestError(path, "this path was ingested before with different "
                                             "content", "use --replace to re-ingest it"))
        else:
            stale[len(todo)] = {known[k][0] for k in (prepared.digest, str(path)) if k in known}
            todo.append(prepared)
    how.stage(con, [(key, p.info) for key, p in enumerate(todo)])
    con.execute("BEGIN TRANSACTION")
    try:
        for key in range(len(todo)):
            for old_id in sorted(stale[key]):
                remove_source(con, old_id)
        ranks, clashes = how.ranks(con, [(key, p.source_path, p.info, p.candidate.run_id)
                                         for key, p in enumerate(todo)], rules)
        for key, exc in clashes.items():
            if stale[key]:  # its old version must stay: the whole transaction goes
                raise exc
            todo[key].result.message = str(exc)
        written = [(key, p) for key, p in enumerate(todo) if key in ranks]
        if written:
            file_ids = _file_ids(con, len(written))
            entries = [(p, file_id, how.facts(p.info))
                       for (_, p), file_id in zip(written, file_ids)]
            _register(con, entries, options)
            how.write(con, [(key, *rank, p.candidate.run_id, file_id)
                            for (key, p), file_id in zip(written, file_ids) for rank in ranks[key]])
            _record(con, entries)
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        for p in todo:
            p.result.rows, p.result.warnings, p.result.message = 0, (), ""
        raise
    for key, p in written:
        p.result.status = "replaced" if stale[key] else "ingested"
    return [p.result for p in batch]


def _file_ids(con: duckdb.DuckDBPyConnection, count: int) -> list[int]:
    """`count` new file ids, consecutive (the SQL of a batch selects its files by their range)."""
    ids = sorted(r[0] for r in con.execute(
        "SELECT nextval('store.file_id_seq') FROM range(?)", [count]).fetchall())
    if ids[-1] - ids[0] != count - 1:
        raise TracewhError(f"file ids {ids} are not consecutive")
    return ids


def _interrupted(exc: BaseException) -> bool:
    """DuckDB's word for Ctrl-C: an InterruptException, or RuntimeError('Query interrupted')."""
    return isinstance(exc, duckdb.InterruptException) or (
        type(exc) is RuntimeError and "interrupted" in str(exc).lower())


def _fault_message(con, path: Path, exc: Exception, result: FileResult) -> str:
    """The one line for a file that failed: a storage fault of the warehouse (said once, the
    ingest stops), too little memory, a file DuckDB cannot load, or a fault of tracewh's own."""
    if not isinstance(exc, duckdb.Error):  # a fault of tracewh's own on this file: it fails alone
        return str(IngestError(path, f"could not be decoded: {type(exc).__name__}: "
                                     f"{_first_line(exc)}", "please report it with the file"))
    fault = storage_fault(exc)
    if fault:
        result.storage_fault = True
        return f"{warehouse_path(con)}: {fault[0]} while writing {path} - {fault[1]}"
    if isinstance(exc, duckdb.OutOfMemoryException):  # the file is fine, the limit tight
        limit = first_row(con, "SELECT current_setting('memory_limit')")[0]
        return str(IngestError(path, f"needs more memory than the memory limit ({limit}) allows",
                               "give a larger --memory-limit, or fewer --jobs"))
    return str(IngestError(path, f"could not be loaded: {_first_line(exc)}",
                           "the file may be damaged or from an unsupported exporter; re-export it"))



def _close(con: duckdb.DuckDBPyConnection | None) -> None:
    if con is not None:
        con.close()


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0]


def _load(con: duckdb.DuckDBPyConnection, prepared: _Prepared, rules: list[RankRule],
          alone: bool, options: dict) -> None:
    """Write one file (any format) inside the caller's transaction."""
    candidate = prepared.candidate
    file_id = _file_ids(con, 1)[0]
    unnamed = candidate.run_id == UNNAMED  # a series given without --run: named by its rows
    if not unnamed:
        _register(con, [(prepared, file_id, None)], options)
    facts = FORMATS[candidate.format].load(con, candidate, prepared.source_path, prepared.info,
                                           file_id, rules, alone, options)
    if unnamed:
        prepared.candidate = _series_run(con, candidate, file_id)
        prepared.result.run_id = prepared.candidate.run_id
        _register(con, [(prepared, file_id, None)], options)
    _record(con, [(prepared, file_id, facts)])


def _series_run(con: duckdb.DuckDBPyConnection, candidate: Candidate, file_id: int) -> Candidate:
    """The run a series given without --run belongs to: the one run whose GPUs and time its
    samples cover (sql/ingest/series_run.sql); none or several is an error naming the runs."""
    from ..resources import sql_dir
    from ..sqlscript import set_variables

    set_variables(con, file_id=file_id, run_id=UNNAMED)
    cursor_ = con.execute((sql_dir() / "ingest" / "series_run.sql").read_text())
    names = [d[0] for d in cursor_.description]
    runs = [dict(zip(names, row)) for row in cursor_.fetchall()]
    fits = [r["run_id"] for r in runs if r["fits"]]
    if len(fits) == 1:
        con.execute("UPDATE store.samples SET run_id = ? WHERE file_id = ?", [fits[0], file_id])
        return Candidate(candidate.path, candidate.format, fits[0], candidate.run_root)
    if fits:
        raise IngestError(candidate.path, f"its samples cover the GPUs and time of {len(fits)} runs "
                          f"({', '.join(fits)})", "name one with --run")
    first = con.execute("SELECT min(ts_ns), max(ts_ns), string_agg(DISTINCT host, ', ') "
                        "FROM store.samples WHERE file_id = ?", [file_id]).fetchone()
    said = f"its samples ({_utc(first[0])} to {_utc(first[1])} UTC" + (
        f", on {first[2]})" if first[2] else ")")
    if not runs:
        raise IngestError(candidate.path, f"{said} fit no run: the warehouse holds no run with "
                          "UTC-timed GPU work", "ingest the traces first, or name the run with --run")
    near = "; ".join(f"{r['run_id']} {_utc(r['start_ns'])} to {_utc(r['end_ns'])}"
                     + (f" on {', '.join(sorted(r['hosts']))}" if r["hosts"] else "") for r in runs[:5])
    raise IngestError(candidate.path, f"{said} cover the GPUs and time of no run (runs: {near}"
                      + (f"; {len(runs) - 5} more" if len(runs) > 5 else "") + ")",
                      "name the run with --run")


def _utc(ns: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ns // 1_000_000_000)) + \
        f".{ns % 1_000_000_000 // 1_000_000:03d}"


def _register(con: duckdb.DuckDBPyConnection, entries: list[tuple], options: dict) -> None:
    """For files about to be written ((prepared, file_id, facts)): their runs in store.runs,
    each with its workload card, and the run parameters found around each file. The warnings of
    the latter go to the file's result."""
    cards, params = {}, []
    said = options.setdefault("config_warnings_said", set())  # once per ingest, not per file
    for prepared, file_id, _ in entries:
        card_warnings = []
        candidate = prepared.candidate
        if candidate.run_id not in cards:
            con.execute(
                "INSERT INTO store.runs (run_id, root, created_at) SELECT ?, ?, ? "
                "WHERE NOT EXISTS (SELECT 1 FROM store.runs WHERE run_id = ?)",
                [candidate.run_id, str(candidate.run_root), utc_now(), candidate.run_id])
            cards[candidate.run_id], card_warnings = card.read_card(candidate.run_root)
            found = cards[candidate.run_id]
            if found:  # the workload card beside the traces: batch size, sequence length, ...
                con.execute(
                    "UPDATE store.runs SET description = coalesce(description, $description), "
                    "batch_size = coalesce(batch_size, $batch_size), "
                    "seq_len = coalesce(seq_len, $seq_len), "
                    "gpus_per_node = coalesce(gpus_per_node, $gpus_per_node), "
                    "metadata = coalesce(metadata, $metadata) WHERE run_id = $run",
                    {**found, "run": candidate.run_id})
        found = cards[candidate.run_id]
        found_params, prepared.result.warnings, config_warnings = config.collect(
            candidate.path, candidate.run_id, candidate.run_root,
            found and json.loads(found["metadata"])["workload_card"],
            FORMATS[candidate.format].config_text(prepared.info), options)
        new = [w for w in dict.fromkeys(card_warnings + config_warnings) if w not in said]
        said.update(new)
        prepared.result.warnings = new + prepared.result.warnings
        params += [(candidate.run_id, file_id, k, v, source) for k, v, source in found_params]
    insert_rows(con, "store.run_params", params)


def _record(con: duckdb.DuckDBPyConnection, entries: list[tuple]) -> None:
    """What the files just written ((prepared, file_id, facts), consecutive file ids) imply
    (derive), and their rows of store.sources; each result gets its rows and warnings."""
    first, last = entries[0][1], entries[-1][1]
    derive(con, first, last)
    rows = source_rows(con, first, last)
    sources = []
    for prepared, file_id, facts in entries:
        candidate, result = prepared.candidate, prepared.result
        facts.warnings += result.warnings  # the run parameters' warnings (_register)
        result.rows, result.warnings = rows.get(file_id, 0), tuple(facts.warnings)
        sources.append((file_id, candidate.run_id, str(candidate.path), prepared.digest,
                        facts.format, facts.tool_version, facts.schema_version,
                        prepared.source_path.stat().st_size, result.rows, facts.has_utc,
                        facts.origin_ns, facts.host, "; ".join(facts.warnings) or None,
                        utc_now(), facts.metadata, facts.time_base))
    insert_rows(con, "store.sources (file_id, run_id, path, sha256, format, tool_version, "
                "schema_version, bytes, rows, has_utc, origin_ns, host, warnings, ingested_at, "
                "metadata, time_base)", sources)


def derive(con: duckdb.DuckDBPyConnection, first_file_id: int, last_file_id: int) -> None:
    """What the stored rows of the sources first_file_id to last_file_id imply beyond themselves:
    every entry of the derive registry (tracewh.store.derive)."""
    derive_registry.fill(con, first_file_id, last_file_id)
