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


def discover(paths: list[Path], run: str | None = None) -> tuple[list[Candidate], list[IngestError]]:
    """Files to ingest (directories searched recursively, in path order) and paths that fail."""
    found: list[Candidate] = []
    errors: list[IngestError] = []
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
            files = sorted(p for p in _walk(given, errors) if _named_like_a_trace(p))
            root = given
        else:
            files = [given]
            root = given.parent
        for path in _prefer_exports(files):
            problem = _not_regular(path)
            if problem:  # a FIFO or /dev/zero would be read forever
                errors.append(IngestError(path, problem, "give the trace file itself"))
                continue
            fmt = file_format(path)
            if fmt is None:
                errors.append(IngestError(path, "not a known trace format",
                                          "give .sqlite (nsys export), .nsys-rep or Kineto .json[.gz]"))
                continue
            run_id, run_root = run_identity(path, root, run)
            found.append(Candidate(path.resolve(), fmt, run_id, run_root))
    return found, errors


def _named_like_a_trace(path: Path) -> bool:
    """A file found in a folder that is a trace by its name, or an SQLite file by its first
    bytes (those are read only from regular files)."""
    return file_format(path) is not None if path.is_file() else bool(_by_name(path))


def _not_regular(path: Path) -> str | None:
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
