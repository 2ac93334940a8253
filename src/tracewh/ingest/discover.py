"""Find trace files under the paths given to `ingest`, and name the run each belongs to."""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import IngestError, TracewhError
from .card import find_card

NSYS_SQLITE = "nsys-sqlite"
NSYS_REPORT = "nsys-rep"
KINETO_JSON = "kineto-json"
SERIES_CSV = "series-csv"
TRAINING_LOG = "training-log"

_SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True)
class Candidate:
    path: Path
    format: str
    run_id: str
    run_root: Path


def file_format(path: Path) -> str | None:
    """The format a file's name (and for SQLite, its first bytes) says it is; None to skip."""
    by_name = _by_name(path)
    if by_name:
        return by_name
    try:
        with path.open("rb") as handle:
            if handle.read(16) == _SQLITE_MAGIC:
                return NSYS_SQLITE
    except OSError:
        return None
    return None


def _by_name(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(".nsys-rep") or name.endswith(".qdrep"):
        return NSYS_REPORT
    if name.endswith((".json", ".json.gz")):
        return KINETO_JSON
    if name.endswith((".sqlite", ".sqlite3", ".db")):
        return NSYS_SQLITE
    return None


def discover(paths: list[Path], run: str | None = None,
             rules: list[RankRule] | None = None,
             ) -> tuple[list[Candidate], list[IngestError], list[str]]:
    """Files to ingest (directories searched recursively, in natural path order: node2 before
    node10), paths that fail, and notes on what was passed over or grouped and why."""
    found: list[Candidate] = []
    errors: list[IngestError] = []
    notes: list[str] = []
    for given in paths:
        try:
            given.stat()
        except FileNotFoundError:
            errors.append(IngestError(given, "no such file or directory", "check the path"))
            continue
        except OSError as exc:  # e.g. inside a directory this process may not enter
            errors.append(IngestError(given, f"cannot read: {exc.strerror}",
                                      "check the permissions of the file and its directories"))
            continue
        if given.is_dir():
            files, passed_over = _traces_below(given, errors)
            passed_over = [p for p in passed_over if not _read_beside_traces(p)]
            root = given
            if passed_over and files:
                notes.append(f"{given}: passed over {_counted(passed_over)}")
            if not files:
                errors.append(IngestError(given, "no trace files in this folder",
                                          "tracewh reads nsys .sqlite/.nsys-rep and Kineto "
                                          ".json[.gz]" + _zip_hint(passed_over)))
        else:
            files = [given]
            root = given.parent
        for path in _prefer_exports(files):
            problem = not_regular(path)
            if problem:  # a FIFO or /dev/zero would be read forever
                errors.append(IngestError(path, problem, "give the trace file itself"))
                continue
            fmt = file_format(path)
            if fmt is None:
                errors.append(IngestError(path, "not a known trace format",
                                          "give .sqlite (nsys export), .nsys-rep or Kineto "
                                          ".json[.gz]" + _zip_hint([path])))
                continue
            run_id, run_root = run_identity(path, root, run)
            found.append(Candidate(path.resolve(), fmt, run_id, run_root))
    if run is None:
        found = _apart_without_ranks(found, rules or [], notes)
    return found, errors, notes


def _traces_below(folder: Path, errors: list[IngestError]) -> tuple[list[Path], list[Path]]:
    """The trace files below `folder`, and the files passed over: other formats and .json
    files that are not profiler traces (a config.json beside the traces)."""
    traces, passed_over = [], []
    for path in sorted(_walk(folder, errors), key=natural_key):
        if not path.is_file():  # a pipe or device under a trace's name: said, never read
            if _by_name(path):
                traces.append(path)
            continue
        fmt = file_format(path)
        if fmt is None or fmt == KINETO_JSON and _json_head(path) is None:
            passed_over.append(path)
        else:
            traces.append(path)
    return traces, passed_over


def _read_beside_traces(path: Path) -> bool:
    """Is `path` the workload card or DeepSpeed config that ingest reads beside the traces of
    its folder (not a file passed over)?"""
    from .config import find_ds_config

    return path in (find_card(path.parent), find_ds_config(path.parent))


def natural_key(path: Path) -> list:
    """Path order with numbers compared as numbers: node2 before node10."""
    return [int(part) if part.isdigit() else part
            for part in re.split(r"(\d+)", path.as_posix())]


def _counted(paths: list[Path]) -> str:
    """'3 .zip, 1 .json that is not a trace (config.json, ...)'."""
    kinds: dict[str, list[Path]] = {}
    for path in paths:
        kind = ".json that is not a trace" if file_format(path) == KINETO_JSON else \
            (path.suffix or path.name)
        kinds.setdefault(kind, []).append(path)
    return "; ".join(f"{len(group)} {kind} ({', '.join(p.name for p in group[:3])}"
                     f"{', ...' if len(group) > 3 else ''})" for kind, group in kinds.items())


def _zip_hint(paths: list[Path]) -> str:
    if any(p.suffix.lower() == ".zip" for p in paths):
        return ("; a .zip (nsys-jax archive) holds CSV and Parquet summaries, not the trace: "
                "export its .nsys-rep with 'nsys export --type sqlite'")
    return ""


_HEAD_BYTES = 1 << 18
_DIST_RANK = re.compile(rb'"distributedInfo"\s*:\s*\{[^}]*"rank"\s*:\s*(\d+)')


def _json_head(path: Path) -> bytes | None:
    """The start of a Kineto trace (up to its events), or None when the file is plain JSON that
    is not a profiler trace (no "traceEvents" or "schemaVersion" near its start: a config.json).
    An empty or damaged file is a trace gone wrong, for ingest to report."""
    import zlib

    try:
        with path.open("rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except OSError:
        return b""  # ingest reports why it cannot be read
    if head[:2] == b"\x1f\x8b":
        try:
            head = zlib.decompressobj(wbits=31).decompress(head, _HEAD_BYTES)
        except zlib.error:
            return b""  # ingest reports the bad gzip
        if not head.lstrip().startswith(b"{"):
            return b""  # gzip of something else: ingest reports it
    if b'"traceEvents"' in head or b'"schemaVersion"' in head or not head.strip():
        return head.split(b'"traceEvents"')[0]
    return None


def _apart_without_ranks(found: list[Candidate], rules: list[RankRule],
                         notes: list[str]) -> list[Candidate]:
    """Kineto traces that share a folder but say nothing of a rank (no distributedInfo.rank,
    no rank<N> in the name, no --rank-map) are separate single-process captures (three models
    profiled one after the other), not ranks of one job: each becomes its own run."""
    def rankless(c: Candidate) -> bool:
        if c.format != KINETO_JSON or rank_from_filename(c.path) is not None \
                or rank_from_map(rules, c.path, None, True) is not None:
            return False
        head = _json_head(c.path)
        return head is not None and _DIST_RANK.search(head) is None

    per_run: dict[str, list[Candidate]] = {}
    for c in found:
        per_run.setdefault(c.run_id, []).append(c)
    apart = {run_id: [c for c in group if rankless(c)] for run_id, group in per_run.items()
             if len(group) > 1}
    moved = {c.path: f"{c.run_id}/{_stem(c.path)}" for group in apart.values()
             if len(group) > 1 for c in group}
    for run_id, group in apart.items():
        if len(group) > 1:
            notes.append(f"run {run_id!r}: {len(group)} Kineto traces with no rank information "
                         f"are taken as separate runs ({', '.join(moved[c.path] for c in group[:3])}"
                         f"{', ...' if len(group) > 3 else ''}); to make them ranks of one job "
                         "give --rank-map FILE_GLOB=RANK")
    return [Candidate(c.path, c.format, moved[c.path], c.run_root) if c.path in moved else c
            for c in found]


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".json", ".trace", ".pt"):
        name = name.removesuffix(suffix)
    return name


def discover_logs(paths: list[Path], run: str | None = None
                  ) -> tuple[list[Candidate], list[IngestError]]:
    """Training logs (`--log FILE_OR_DIR`; directories give their *.log files, recursively).
    A sweep folder holds one log per configuration, so a log is its own run, named after the
    file without its extension, unless --run names one or the log lies beside traces, whose run
    it joins."""
    found: list[Candidate] = []
    errors: list[IngestError] = []
    for given in paths:
        if given.is_dir():
            files, root = sorted(p for p in _walk(given, errors) if p.suffix == ".log"), given
            if not files:
                errors.append(IngestError(given, "no *.log file in this directory"))
        elif given.exists():
            files, root = [given], given.parent
        else:
            errors.append(IngestError(given, "no such file or directory", "check the path"))
            continue
        for special in [p for p in files if not_regular(p)]:  # a pipe would block the read
            errors.append(IngestError(special, not_regular(special)))
            files.remove(special)
        for path in files:
            if run or _holds_traces(path.parent):
                run_id, run_root = run_identity(path, root, run)
            else:
                run_id, run_root = path.stem, path.parent
            found.append(Candidate(path.resolve(), TRAINING_LOG, run_id, run_root))
    return found, errors


def _holds_traces(directory: Path) -> bool:
    """Trace files lie in `directory` (a DeepSpeed ds_config.json is no trace)."""
    return any(file_format(p) for p in directory.iterdir()
               if p.is_file() and not fnmatch.fnmatch(p.name, "*config*.json"))


def not_regular(path: Path) -> str | None:
    """Why a path is not read, when it is no regular file (links followed); else None."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:  # a broken link
        return f"cannot read: {exc.strerror}"
    if stat.S_ISREG(mode):
        return None
    kinds = {stat.S_IFIFO: "a named pipe", stat.S_IFCHR: "a character device",
             stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}
    return f"not a regular file ({kinds.get(stat.S_IFMT(mode), 'a directory')})"


def _walk(root: Path, errors: list[IngestError]) -> list[Path]:
    """Every file below `root`; a directory that cannot be listed is an error, not a silent skip."""
    def unreadable(exc: OSError) -> None:
        errors.append(IngestError(exc.filename, f"cannot list this directory: {exc.strerror}",
                                  "check its permissions; the files in it were not ingested"))
    return [Path(folder) / name for folder, _, names in os.walk(root, onerror=unreadable)
            for name in names]


def _prefer_exports(files: list[Path]) -> list[Path]:
    """Drop a .nsys-rep whose SQLite export lies beside it: the export is what gets ingested."""
    exported = {p.with_suffix("") for p in files if p.suffix == ".sqlite"}
    return [p for p in files if not (p.suffix in (".nsys-rep", ".qdrep") and p.with_suffix("") in exported)]


def run_identity(path: Path, root: Path, explicit: str | None) -> tuple[str, Path]:
    """The run a file belongs to (DESIGN section 4): --run; the directory of a workload card at
    or above the file; else the file's directory, named by its path below the ingest root."""
    directory = path.parent
    if explicit:
        return explicit, directory
    card_dir = workload_card_dir(directory, stop=root.parent)
    if card_dir is not None:
        directory = card_dir
    try:
        relative = directory.resolve().relative_to(root.resolve())
        name = relative.as_posix()
    except ValueError:
        name = ""
    if name in ("", "."):
        name = directory.resolve().name or "run"
    return name, directory


def workload_card_dir(directory: Path, stop: Path) -> Path | None:
    """The nearest directory at or above `directory` (not above `stop`) holding a workload card:
    a YAML file with a top-level `workload:` key (CCL-Bench layout)."""
    current = directory.resolve()
    stop = stop.resolve()
    while True:
        if find_card(current) is not None:
            return current
        if current == stop or current.parent == current:
            return None
        current = current.parent


@dataclass(frozen=True)
class RankRule:
    pattern: str          # a glob matched against the file's name and its full path
    pid: int | None       # for a report holding several processes
    rank: int


def parse_rank_map(specs: list[str]) -> list[RankRule]:
    """`--rank-map GLOB=RANK` or `GLOB:PID=RANK`, repeatable."""
    rules = []
    for spec in specs:
        key, sep, rank = spec.rpartition("=")
        if not sep or not key or not rank.strip().isdigit():
            raise TracewhError(f"--rank-map {spec!r}: expected FILE_GLOB=RANK or FILE_GLOB:PID=RANK")
        pattern, colon, pid = key.rpartition(":")
        if colon and pid.isdigit():
            rules.append(RankRule(pattern, int(pid), int(rank)))
        else:
            rules.append(RankRule(key, None, int(rank)))
    return rules


def rank_from_map(rules: list[RankRule], path: Path, pid: int | None, single: bool) -> int | None:
    for rule in rules:
        if not (fnmatch.fnmatch(path.name, rule.pattern) or fnmatch.fnmatch(str(path), rule.pattern)):
            continue
        if rule.pid is None and single or rule.pid is not None and rule.pid == pid:
            return rule.rank
    return None


_FILENAME_RANK = re.compile(r"(?:^|[^a-z])(?:rank|worker)[-_]?(\d+)", re.I)


def rank_from_filename(path: Path) -> int | None:
    match = _FILENAME_RANK.search(path.name)
    return int(match.group(1)) if match else None
