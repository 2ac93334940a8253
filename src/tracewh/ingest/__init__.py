"""Ingest trace files into the warehouse: one transaction per file, keyed by content hash."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import duckdb

from ..errors import IngestError, TracewhError
from ..resources import sql_dir
from ..warehouse import first_row, utc_now
from . import nsys, nsys_report
from .discover import KINETO_JSON, NSYS_REPORT, NSYS_SQLITE, Candidate, RankRule, discover
from .sqlscript import run_script, set_variables


@dataclass
class FileResult:
    path: Path
    status: str            # ingested | skipped | replaced | failed
    run_id: str | None = None
    rows: int = 0
    bytes: int = 0
    seconds: float = 0.0
    message: str = ""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ingest_paths(
    con: duckdb.DuckDBPyConnection,
    paths: list[Path],
    run: str | None = None,
    rank_rules: list[RankRule] | None = None,
    replace: bool = False,
    on_file: Callable[[FileResult], None] | None = None,
    on_start: Callable[[list[Candidate]], None] | None = None,
) -> list[FileResult]:
    """Ingest every trace under `paths`; a bad file is reported and the others still load."""
    candidates, errors = discover(paths, run)
    results = [FileResult(Path(e.path), "failed", message=str(e)) for e in errors]
    if on_start:
        on_start(candidates)
    for result in results:
        on_file and on_file(result)
    for candidate in candidates:
        result = ingest_file(con, candidate, rank_rules or [], replace)
        results.append(result)
        on_file and on_file(result)
    return results


def ingest_file(con: duckdb.DuckDBPyConnection, candidate: Candidate, rules: list[RankRule],
                replace: bool) -> FileResult:
    started = time.perf_counter()
    path = candidate.path
    result = FileResult(path, "failed", candidate.run_id)
    try:
        source_path = path
        if candidate.format == NSYS_REPORT:
            source_path = nsys_report.export_sqlite(path)
        result.bytes = source_path.stat().st_size
        digest = sha256_of(source_path)
        known = first_row(con, "SELECT file_id, run_id FROM store.sources WHERE sha256 = ?",
                          [digest])
        if known and not replace:
            result.status, result.run_id = "skipped", known[1]
            result.message = f"{path}: already ingested (run {known[1]!r}, file_id {known[0]})"
            return result
        stale = con.execute("SELECT file_id FROM store.sources WHERE path = ? OR sha256 = ?",
                            [str(path), digest]).fetchall()
        if stale and not replace:
            raise IngestError(path, "this path was ingested before with different content",
                              "use --replace to re-ingest it")
        con.execute("BEGIN TRANSACTION")
        try:
            for (old_id,) in stale:
                remove_source(con, old_id)
            result.rows = _load(con, candidate, source_path, digest, rules)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        result.status = "replaced" if stale else "ingested"
    except IngestError as exc:
        result.message = str(exc)
    except OSError as exc:
        result.message = str(IngestError(path, f"cannot read: {exc.strerror or exc}"))
    except duckdb.Error as exc:
        result.message = str(IngestError(path, f"could not be loaded: {str(exc).splitlines()[0]}"))
    finally:
        result.seconds = time.perf_counter() - started
    return result


def _load(con, candidate: Candidate, source_path: Path, digest: str, rules: list[RankRule]) -> int:
    file_id = first_row(con, "SELECT nextval('store.file_id_seq')")[0]
    con.execute(
        "INSERT INTO store.runs (run_id, root, created_at) SELECT ?, ?, ? "
        "WHERE NOT EXISTS (SELECT 1 FROM store.runs WHERE run_id = ?)",
        [candidate.run_id, str(candidate.run_root), utc_now(), candidate.run_id])
    if candidate.format in (NSYS_SQLITE, NSYS_REPORT):
        info = nsys.load(con, source_path, candidate.run_id, file_id, rules)
        fmt, tool, schema = NSYS_SQLITE, info.tool_version, info.schema_version
        has_utc, origin, host, warnings = (info.utc_epoch_ns is not None, info.origin_ns,
                                           info.host, info.warnings)
    elif candidate.format == KINETO_JSON:
        raise IngestError(candidate.path, "Kineto JSON ingest is not available in this version")
    else:
        raise TracewhError(f"{candidate.path}: unknown format {candidate.format}")
    set_variables(con, file_id=file_id)
    rows = first_row(con, (sql_dir() / "source_rows.sql").read_text())[0]
    con.execute(
        "INSERT INTO store.sources VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [file_id, candidate.run_id, str(candidate.path), digest, fmt, tool, schema,
         source_path.stat().st_size, rows, has_utc, origin, host,
         "; ".join(warnings) or None, utc_now()])
    return rows


def remove_source(con: duckdb.DuckDBPyConnection, file_id: int) -> None:
    set_variables(con, file_id=file_id)
    run_script(con, sql_dir() / "remove_source.sql")
