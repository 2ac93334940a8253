"""One trace file decoded on its own into Parquet fragments of the stored tables: the work a Spark
executor does for `tracewh ingest --engine spark` (tracewh.spark_ingest drives it).

    task = FileTask(candidate, file_id=3, files_in_run=8, taken=((0, "/t/rank0.json"),))
    outcome = decode_to_fragments(task, Path("lake/_files"))

The file goes through tracewh's own ingest (the same decoders, mapping SQL, derive entries) into
a private scratch warehouse, which differs from the shared warehouse of `tracewh ingest` in
three things only, each handed over by the driver:
- its file id: the scratch sequence is advanced to the id the file would get in one ingest of
  every file in order (row ids are file_id * 2^32 + the row's number in its file, so they
  follow);
- the ranks earlier files of its run hold (`taken`): stored as placeholder sources and ranks,
  so that process-order numbering, the lone-file default and rank clashes see what one ingest
  would have seen;
- how many files its run has (`files_in_run`), which decides the lone-file default.
The file's rows of every stored table that holds rows of a source are then written as one
Parquet file each into a folder named by those inputs, renamed into place when whole, so a
killed task leaves nothing that looks complete and a rerun with the same inputs reuses it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..store.catalog import stored_tables
from ..store.derive import spanning
from .discover import Candidate, RankRule

RESULT = "file.json"  # the outcome beside the fragments; written last, so present = complete
# filled again over the whole lake once the files have landed (their ids are global)
_DERIVED_AFTER = {fill for e in spanning() for fill in e.fills if "." not in fill}
_PLACEHOLDER = -1  # file ids below it are the placeholders of earlier files' ranks


@dataclass(frozen=True)
class FileTask:
    candidate: Candidate
    file_id: int
    files_in_run: int
    taken: tuple[tuple[int, str], ...] = ()  # (rank, path) held by earlier files of the run
    rules: tuple[RankRule, ...] = ()
    digest: str = ""

    def key(self) -> str:
        """The folder of this decode's fragments: every input that shapes its rows, this
        tracewh's code among them."""
        inputs = json.dumps([_code_version(), str(self.candidate.path), self.candidate.format,
                             self.candidate.run_id, str(self.candidate.run_root), self.file_id,
                             self.files_in_run, sorted(self.taken),
                             [(r.pattern, r.pid, r.rank) for r in self.rules]])
        return f"{self.file_id}-{self.digest[:16]}-{hashlib.sha256(inputs.encode()).hexdigest()[:12]}"


@lru_cache(maxsize=1)
def _code_version() -> str:
    """What makes the stored rows besides the file: tracewh, its migrations, its SQL."""
    from .. import __version__
    from ..resources import sql_dir
    from ..warehouse import load_migrations, views_checksum

    digest = hashlib.sha256(f"{__version__}/{views_checksum()}".encode())
    for migration in load_migrations():
        digest.update(migration.checksum.encode())
    for script in sorted(sql_dir().rglob("*.sql")):
        digest.update(script.read_bytes())
    return digest.hexdigest()[:16]


@dataclass
class Outcome:
    """What the driver needs of a decoded file (kept as JSON beside its fragments)."""

    key: str
    path: str
    status: str  # ingested | failed
    file_id: int
    consumed_id: bool  # the file drew its id (a file failing before that does not)
    run_id: str
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    rows: int = 0
    bytes: int = 0
    seconds: float = 0.0
    ranks: list[tuple[int, str]] = field(default_factory=list)  # (rank, rank_source)
    tables: list[str] = field(default_factory=list)  # the fragments written

    @classmethod
    def load(cls, folder: Path) -> "Outcome":
        data = json.loads((folder / RESULT).read_text())
        data["ranks"] = [tuple(r) for r in data["ranks"]]
        return cls(**data)


def decode_to_fragments(task: FileTask, files_dir: Path, memory_limit: str = "1GB") -> Outcome:
    """Decode the task's file into `files_dir/<key>/` (reused when already there)."""
    folder = files_dir / task.key()
    if (folder / RESULT).exists():
        return Outcome.load(folder)
    from ..warehouse import connect
    from . import ingest_candidates

    scratch = Path(tempfile.mkdtemp(prefix="tracewh-decode-"))
    partial = files_dir / f".partial-{task.key()}-{os.getpid()}-{time.monotonic_ns()}"
    try:
        con = connect(scratch / "file.duckdb")
        try:
            con.execute("SET memory_limit = ?", [memory_limit])
            _seed(con, task)
            result = ingest_candidates(con, [task.candidate], list(task.rules),
                                       {task.candidate.run_id: task.files_in_run})[0]
            drawn = con.execute("SELECT nextval('store.file_id_seq')").fetchone()[0]
            outcome = Outcome(task.key(), str(task.candidate.path),
                              "ingested" if result.status == "ingested" else "failed",
                              task.file_id, drawn > task.file_id, task.candidate.run_id,
                              result.message, list(result.warnings), result.rows, result.bytes,
                              result.seconds)
            partial.mkdir(parents=True)
            if outcome.status == "ingested":
                outcome.ranks = [tuple(r) for r in con.execute(
                    "SELECT rank, rank_source FROM store.ranks WHERE file_id = ? "
                    "ORDER BY rank", [task.file_id]).fetchall()]
                outcome.tables = _write_fragments(con, task.file_id, partial)
        finally:
            con.close()
        (partial / RESULT).write_text(json.dumps(outcome.__dict__))
        try:
            os.rename(partial, folder)
        except OSError:  # another task wrote the same inputs first: its fragments stand
            if not (folder / RESULT).exists():
                raise
        return Outcome.load(folder)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(partial, ignore_errors=True)


def _seed(con, task: FileTask) -> None:
    """The scratch sequence at the task's file id; the ranks earlier files hold, as placeholders."""
    if task.file_id > 1:
        con.execute("SELECT max(nextval('store.file_id_seq')) FROM range(?)", [task.file_id - 1])
    run = task.candidate.run_id
    for number, (rank, path) in enumerate(task.taken):
        placeholder = _PLACEHOLDER - number
        con.execute("INSERT INTO store.sources (file_id, run_id, path, sha256, format, bytes, "
                    "rows, has_utc, ingested_at) VALUES (?, ?, ?, ?, 'placeholder', 0, 0, "
                    "false, now())", [placeholder, run, path, f"placeholder {placeholder}"])
        con.execute("INSERT INTO store.ranks (run_id, rank, file_id, rank_source) "
                    "VALUES (?, ?, ?, 'placeholder')", [run, rank, placeholder])


def _write_fragments(con, file_id: int, folder: Path) -> list[str]:
    """The file's rows of each stored table that holds a source's rows (and its run's row),
    one Parquet file per table that has any."""
    written = []
    for table, columns in sorted(stored_tables(con).items()):
        if table in _DERIVED_AFTER or ("file_id" not in columns and table != "runs"):
            continue
        where = "file_id = ?" if "file_id" in columns else \
            "run_id IN (SELECT run_id FROM store.sources WHERE file_id = ?)"
        if not con.execute(f'SELECT EXISTS (SELECT 1 FROM store."{table}" WHERE {where})',
                           [file_id]).fetchone()[0]:
            continue
        target = str(folder / f"{table}.parquet").replace("'", "''")
        con.execute(f"COPY (SELECT * FROM store.\"{table}\" WHERE {where}) TO '{target}' "
                    "(FORMAT PARQUET, COMPRESSION zstd)", [file_id])
        written.append(table)
    return written
