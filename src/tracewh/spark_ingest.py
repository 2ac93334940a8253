"""`tracewh ingest --engine spark --lake DIR PATH...`: trace files decoded on Spark's executors
straight into a Parquet lake, the same lake `tracewh ingest` + `tracewh export` make of them.

    spark = spark_session("local[2]")
    results = ingest_lake(spark, [Path("traces/")], Path("lake/"))

Files are the unit of parallelism:
1. the driver discovers the files, groups them into runs and names them, as `tracewh ingest`
   does (tracewh.ingest.discover, the same messages);
2. the executors hash them; the driver leaves out files the lake holds and repeated contents;
3. the executors decode each file on its own (tracewh.ingest.fragments) into Parquet fragments
   of the stored tables under DIR/_files/, given the file id and the ranks earlier files of its
   run hold as one ingest in file order would have them. Those follow from the outcomes of the
   files before, so the driver plans from the outcomes it has and decodes again only the files
   whose rows depend on what changed: a file id (when a file before failed after drawing its
   id), or the ranks taken (process-order numbering, the lone-file default, a clash);
4. the driver loads the fragments into a scratch warehouse, fills what spans files (the kernel
   names; op shapes, whose ids are shared by the files) and writes the lake with `tracewh
   export`'s own code, whose manifest, written last, records the files ingested.
A kill before the manifest leaves the lake as it was (the fragments are a cache, each folder
renamed into place when whole); the same command again reuses the fragments whose inputs did
not change and completes it.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .errors import IngestError
from .export import INGESTED, ExportReport, _read_manifest, export_lake
from .ingest import FileResult, _failed, sha256_of
from .ingest.discover import Candidate, RankRule, discover
from .ingest.formats import FORMATS
from .ingest.fragments import RESULT, FileTask, Outcome, decode_to_fragments

FILES = "_files"  # DIR/_files/<key>/: a decoded file's fragments (hidden from the lake's readers)


@dataclass
class SparkIngest:
    results: list[FileResult] = field(default_factory=list)
    export: ExportReport | None = None
    decoded: int = 0  # files decoded on the executors (a file decoded again counts again;
    # one whose fragments an earlier ingest left does not)
    seconds: float = 0.0


def ingest_lake(spark, paths: list[Path], lake: Path, run: str | None = None,
                rank_rules: list[RankRule] | None = None, memory_limit: str = "512MB",
                on_note=None) -> SparkIngest:
    """Ingest every trace under `paths` into the lake at `lake` on `spark`'s executors."""
    started = time.perf_counter()
    lake = Path(lake).resolve()
    files_dir = lake / FILES
    files_dir.mkdir(parents=True, exist_ok=True)
    rules = tuple(rank_rules or ())
    report = SparkIngest()
    candidates, errors, notes = discover(paths, run, list(rules))
    for note in notes:
        on_note and on_note(note)
    report.results += [FileResult(Path(e.path), "failed", message=str(e)) for e in errors]
    candidates = [c for c in candidates if FORMATS[c.format].trace]
    vouched = _read_manifest(lake).get(INGESTED, {}).get("files", [])
    files_per_run = Counter(c.run_id for c in candidates)
    new, copies = _new_files(spark, candidates, vouched, report.results)
    outcomes: dict[int, Outcome] = {}
    # each round settles at least the first file not settled yet (every file before it is), so
    # one round per file at most; most ingests need one, and one more for what ranks taken change
    for _ in range(len(new) + 1):
        tasks = _plan(new, vouched, outcomes, files_per_run, rules)
        todo = [(i, task) for i, task in tasks.items() if i not in outcomes
                or not _still_holds(outcomes[i], task)]
        if not todo:
            break
        decoded, count = _decode(spark, [task for _, task in todo], files_dir, memory_limit)
        report.decoded += count
        outcomes.update((i, outcome) for (i, _), outcome in zip(todo, decoded))
    else:
        raise IngestError(lake, "the files' ranks and ids did not settle",
                          "please report it with the files")
    report.results += _settle_copies(copies, new, outcomes)
    landed = []
    for i, (candidate, digest, size) in new.items():
        outcome = outcomes[i]
        report.results.append(FileResult(
            candidate.path, outcome.status, candidate.run_id, outcome.rows, size,
            outcome.seconds, outcome.message, tuple(outcome.warnings)))
        if outcome.status == "ingested":
            landed.append({"key": outcome.key, "path": str(candidate.path), "sha256": digest,
                           "file_id": outcome.file_id, "run_id": candidate.run_id,
                           "ranks": [rank for rank, _ in outcome.ranks]})
    if landed:
        files = sorted(vouched + landed, key=lambda f: f["file_id"])
        report.export = _assemble_and_export(files, lake, {"files": files})
        _forget_others(files_dir, {f["key"] for f in files})
    report.seconds = time.perf_counter() - started
    return report


def _digest(candidate: Candidate):
    """A file's content hash and size, or the exception reading it raised (on an executor)."""
    try:
        source = FORMATS[candidate.format].source(candidate.path)
        return sha256_of(source), source.stat().st_size
    except Exception as exc:  # the driver words it as ingest does
        return exc


def _new_files(spark, candidates: list[Candidate], vouched: list[dict],
               results: list[FileResult]) -> tuple[dict[int, tuple[Candidate, str, int]], list]:
    """The candidates to decode, by their place in file order -> (candidate, sha256, bytes); a
    result for each of the others (already in the lake, unreadable); and the later copies of a
    content being decoded, (result, place of the first copy), settled once it is decoded."""
    if not candidates:
        return {}, []
    digests = spark.sparkContext.parallelize(candidates, min(len(candidates), 64)) \
        .map(_digest).collect()
    known = {f["sha256"]: f for f in vouched}
    paths = {f["path"]: f for f in vouched}
    new, first_copy, copies = {}, {}, []
    for i, (candidate, digest) in enumerate(zip(candidates, digests)):
        result = FileResult(candidate.path, "failed", candidate.run_id)
        if isinstance(digest, Exception):
            _failed(None, result, digest)
        elif digest[0] in known:
            same = known[digest[0]]
            result.status, result.run_id, result.bytes = "skipped", same["run_id"], digest[1]
            result.message = (f"{candidate.path}: already ingested (run {same['run_id']!r}, "
                              f"file_id {same['file_id']})")
        elif digest[0] in first_copy:
            result.bytes = digest[1]
            copies.append((result, first_copy[digest[0]]))
            continue
        elif str(candidate.path) in paths:
            result.message = str(IngestError(candidate.path, "this path was ingested before "
                                             "with different content",
                                             "use --replace to re-ingest it"))
        else:
            new[i] = (candidate, *digest)
            first_copy[digest[0]] = i
            continue
        results.append(result)
    return new, copies


def _settle_copies(copies: list, new: dict, outcomes: dict[int, Outcome]) -> list[FileResult]:
    """A later copy of a content is skipped as already ingested when its first copy landed, and
    fails as it failed otherwise (as in one ingest, which decodes it again)."""
    for result, first in copies:
        outcome, candidate = outcomes[first], new[first][0]
        if outcome.status == "ingested":
            result.status, result.run_id = "skipped", candidate.run_id
            result.message = (f"{result.path}: already ingested (run {candidate.run_id!r}, "
                              f"file_id {outcome.file_id})")
        else:
            result.message = outcome.message.replace(str(candidate.path), str(result.path))
    return [result for result, _ in copies]


def _plan(new: dict, vouched: list[dict], outcomes: dict[int, Outcome],
          files_per_run: Counter, rules: tuple) -> dict[int, FileTask]:
    """Each new file's decode inputs as one ingest in file order would give them, from the
    outcomes known so far (a file not decoded yet is taken to draw its id and take no rank)."""
    next_id = max((f["file_id"] for f in vouched), default=0) + 1
    taken: dict[str, dict[int, str]] = defaultdict(dict)
    for f in vouched:
        taken[f["run_id"]].update((rank, f["path"]) for rank in f["ranks"])
    tasks = {}
    for i, (candidate, digest, _) in new.items():
        run = candidate.run_id
        task = tasks[i] = FileTask(candidate, next_id, files_per_run[run],
                                   tuple(sorted(taken[run].items())), rules, digest)
        outcome = outcomes.get(i)
        if outcome is None or not _still_holds(outcome, task):
            next_id += 1  # not known yet: the next round settles it
            continue
        next_id += outcome.consumed_id
        if outcome.status == "ingested":
            taken[run].update((rank, str(candidate.path)) for rank, _ in outcome.ranks)
    return tasks


def _still_holds(outcome: Outcome, task: FileTask) -> bool:
    """Whether a file decoded with other inputs than `task`'s has the rows `task` would give:
    a failure before the file drew its id depends on neither; otherwise the id must be the same,
    and the ranks taken too when the file's ranks follow from them (numbered in process order,
    the lone-file default, a clash, a failure)."""
    if outcome.key == task.key() or (outcome.status == "failed" and not outcome.consumed_id):
        return True
    if outcome.file_id != task.file_id:
        return False
    held = {rank for rank, _ in task.taken}
    return outcome.status == "ingested" and not held & {rank for rank, _ in outcome.ranks} \
        and not {source for _, source in outcome.ranks} & {"process-order", "default"}


def _decode(spark, tasks: list[FileTask], files_dir: Path,
            memory_limit: str) -> tuple[list[Outcome], int]:
    """Each task's outcome: read from its fragments when an earlier ingest (killed, say) wrote
    them, else decoded on an executor, one file per Spark task, the biggest first; and how many
    were decoded."""
    outcomes: dict[int, Outcome] = {}
    for i, task in enumerate(tasks):
        if (files_dir / task.key() / RESULT).exists():
            outcomes[i] = Outcome.load(files_dir / task.key())
    order = sorted((i for i in range(len(tasks)) if i not in outcomes),
                   key=lambda i: -_size(tasks[i].candidate.path))
    if order:
        decoded = spark.sparkContext.parallelize([tasks[i] for i in order], len(order)) \
            .map(lambda task: decode_to_fragments(task, files_dir, memory_limit)).collect()
        outcomes.update(zip(order, decoded))
    return [outcomes[i] for i in range(len(tasks))], len(order)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _assemble_and_export(files: list[dict], lake: Path, ingested: dict) -> ExportReport:
    """The fragments of `files` (in file id order) in a scratch warehouse, what spans files
    filled as ingest fills it, and the lake written from it by `tracewh export`."""
    from .store.derive import fill_entry, spanning
    from .warehouse import connect

    scratch = Path(tempfile.mkdtemp(prefix="tracewh-lake-"))
    try:
        con = connect(scratch / "lake.duckdb")
        try:
            folders = [lake / FILES / f["key"] for f in files]
            by_table: dict[str, list[str]] = defaultdict(list)
            for folder in folders:
                for table in Outcome.load(folder).tables:
                    by_table[table].append(str(folder / f"{table}.parquet"))
            for table, parts in sorted(by_table.items()):
                if table != "runs":
                    con.execute(f'INSERT INTO store."{table}" BY NAME '
                                "SELECT * FROM read_parquet(?)", [parts])
            _runs(con, by_table.get("runs", []))
            for derived in spanning():  # numbered across files: as one ingest numbers them
                if derived.per_source:  # in file order, one file at a time
                    for f in files:
                        fill_entry(con, derived.name, f["file_id"], f["file_id"])
                else:
                    fill_entry(con, derived.name, files[0]["file_id"], files[-1]["file_id"])
            return export_lake(con, lake, ingested=ingested)
        finally:
            con.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _runs(con, parts: list[str]) -> None:
    """store.runs as one ingest leaves it: a run's row from its first file, and the first
    distributedInfo any of its files brings (sql/ingest/kineto: kineto.load)."""
    for part in parts:
        con.execute("INSERT INTO store.runs SELECT * FROM read_parquet(?) r "
                    "WHERE NOT EXISTS (SELECT 1 FROM store.runs s WHERE s.run_id = r.run_id)",
                    [part])
        con.execute(
            "UPDATE store.runs s SET metadata = json_merge_patch(coalesce(s.metadata, '{}'), "
            "json_object('distributedInfo', json_extract(r.metadata, '$.distributedInfo'))) "
            "FROM read_parquet(?) r WHERE s.run_id = r.run_id "
            "AND json_extract(coalesce(s.metadata, '{}'), '$.distributedInfo') IS NULL "
            "AND json_extract(r.metadata, '$.distributedInfo') IS NOT NULL", [part])


def _forget_others(files_dir: Path, keep: set[str]) -> None:
    """Fragments no file of the lake uses (decoded with inputs that did not hold, or left by a
    killed ingest), once the manifest no longer needs them."""
    for folder in files_dir.iterdir():
        if folder.name not in keep:
            shutil.rmtree(folder, ignore_errors=True) if folder.is_dir() else folder.unlink()
