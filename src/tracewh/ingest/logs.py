"""Training logs: DeepSpeed `time (ms) | ...` timer lines, Megatron iteration lines, DeepSpeed
`memory (MB) | ...` lines, or a user's regular expression, decoded into one row per number
(store.log_values); sql/views/log_timers.sql and log_iterations.sql give them their shape."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa

from ..errors import IngestError

LOG_SUFFIXES = (".log",)

_STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d)(?:[,.](\d{1,9}))?\]")
_RANK = re.compile(r"\[Rank (\d+)\]")
_TIMERS = re.compile(r"\btime \(ms\)\s*\|(.*)$")
_MEMORY = re.compile(r"\(after (\d+) iterations\) memory \(MB\)\s*\|(.*)$")
_ITERATION = re.compile(r"\biteration\s*=?\s*(\d+)\s*/\s*(\d+)\s*\|(.*)$")
_NUMBER = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf)"
_PIECE = re.compile(rf"^\s*([^\s:=|][^:=|]*?)\s*[:=]\s*({_NUMBER})\s*$", re.I)
_SPECIAL_GROUPS = {"rank", "step", "ts", "name", "ms"}


@dataclass
class DecodedLog:
    table: pa.Table
    warnings: list[str] = field(default_factory=list)
    text: str = ""  # the whole log, for a Megatron arguments block


def _key(name: str) -> str:
    """'elapsed time per iteration (ms)' -> 'elapsed_time_per_iteration_ms', 'TFLOPs' -> 'tflops'."""
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def _pieces(text: str, normalize: bool) -> list[tuple[str, float]] | None:
    """'a: 1.5 | b: 2 |' -> [('a', 1.5), ('b', 2.0)]; None when a piece is not `name: number`."""
    found = []
    for piece in text.split("|"):
        if not piece.strip():
            continue
        match = _PIECE.match(piece)
        if not match:
            return None
        name = _key(match.group(1)) if normalize else match.group(1).strip()
        found.append((name, float(match.group(2))))
    return found or None


def _stamp_ns(line: str) -> int | None:
    match = _STAMP.match(line)
    if not match:
        return None
    when = datetime.fromisoformat(match.group(1).replace(" ", "T")).replace(tzinfo=timezone.utc)
    fraction = (match.group(2) or "").ljust(9, "0")
    return int(when.timestamp()) * 1_000_000_000 + int(fraction or 0)


def decode(path: Path, user: re.Pattern | None = None) -> DecodedLog:
    """Every timer, iteration and memory number of the log at `path`, one row each; `user`: a
    --log-pattern (compile_pattern), tried first on every line."""
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        raise IngestError(path, f"cannot read: {exc.strerror or exc}") from None
    lines = text.split("\n")
    truncated = bool(lines) and lines[-1] != ""  # no newline after the last line: cut short?
    rows: dict[str, list] = {c: [] for c in ("line_no", "line_rank", "ts_ns", "kind", "step",
                                             "name", "value")}
    seen: Counter = Counter()  # (rank, timer) -> lines so far: the timer's step
    unparsed: list[int] = []
    cut = None
    for number, line in enumerate(lines, start=1):
        found = _read_line(line, user)
        if found is None:
            continue
        if truncated and number == len(lines):
            cut = number  # a cut line's last number may be cut too: not stored
            continue
        kind, rank, step, values = found
        if values is None:
            unparsed.append(number)
            continue
        stamp = _stamp_ns(line)
        for name, value in values:
            if kind == "timer":
                seen[rank, name] += 1
            rows["line_no"].append(number)
            rows["line_rank"].append(rank)
            rows["ts_ns"].append(stamp)
            rows["kind"].append(kind)
            rows["step"].append(seen[rank, name] if kind == "timer" and step is None else step)
            rows["name"].append(name)
            rows["value"].append(value)
    if not rows["name"]:
        raise IngestError(path, "no timer line: not a training log tracewh reads",
                          "expected DeepSpeed 'time (ms) | ...' or Megatron 'iteration N/M | ...' "
                          "lines; give other formats with --log-pattern")
    warnings = []
    if unparsed:
        shown = ", ".join(map(str, unparsed[:10])) + (", ..." if len(unparsed) > 10 else "")
        warnings.append(f"{len(unparsed)} timer line(s) not parsed (line {shown})")
    if cut:
        warnings.append(f"last line ({cut}) cut short: not stored")
    if any(s is not None for s in rows["ts_ns"]):
        warnings.append("log time stamps carry no zone: taken as UTC")
    schema = pa.schema([("line_no", pa.int32()), ("line_rank", pa.int32()), ("ts_ns", pa.int64()),
                        ("kind", pa.string()), ("step", pa.int32()), ("name", pa.string()),
                        ("value", pa.float64())])
    return DecodedLog(pa.table(rows, schema=schema), warnings, text)


def _read_line(line: str, user: re.Pattern | None):
    """(kind, rank, step, [(name, value)] or None when it does not parse), or None for a line
    that is no timer, iteration or memory line."""
    rank_match = _RANK.search(line)
    rank = int(rank_match.group(1)) if rank_match else None
    if user is not None:
        match = user.search(line)
        if match:
            return _read_user(match, rank)
    match = _TIMERS.search(line)
    if match:
        return "timer", rank, None, _pieces(match.group(1), normalize=False)
    match = _MEMORY.search(line)
    if match:
        return "memory", rank, int(match.group(1)), _pieces(match.group(2), normalize=True)
    match = _ITERATION.search(line)
    if match:
        values = _pieces(match.group(3), normalize=True)
        if values is not None:
            values.insert(0, ("train_iterations", float(match.group(2))))
        return "iteration", rank, int(match.group(1)), values
    return None


def compile_pattern(pattern: str | None) -> re.Pattern | None:
    """A --log-pattern, checked: a regular expression with a named group to read."""
    if pattern is None:
        return None
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise IngestError("--log-pattern", f"not a regular expression: {exc}") from None
    if not set(compiled.groupindex) - {"rank", "step", "ts"}:
        raise IngestError("--log-pattern", "no named group to read a timer from",
                          "name them, e.g. 'fwd=(?P<fwd>[0-9.]+)' or "
                          "'(?P<name>\\w+) took (?P<ms>[0-9.]+) ms'")
    return compiled


def _read_user(match: re.Match, rank: int | None):
    groups = {k: v for k, v in match.groupdict().items() if v is not None}
    try:
        rank = int(groups["rank"]) if "rank" in groups else rank
        step = int(groups["step"]) if "step" in groups else None
        if "name" in groups and "ms" in groups:
            values = [(groups["name"].strip(), float(groups["ms"]))]
        else:
            values = [(k, float(v)) for k, v in groups.items() if k not in _SPECIAL_GROUPS]
    except ValueError:
        return "timer", rank, None, None
    return "timer", rank, step, values or None


def load(con, decoded: DecodedLog, run_id: str, file_id: int):
    """Write the log's rows (inside the caller's transaction); returns the source's facts."""
    from ..resources import sql_dir
    from ..sqlscript import set_variables
    from .source import SourceFacts

    set_variables(con, run_id=run_id, file_id=file_id)
    con.register("_log_lines", decoded.table)
    try:
        con.execute((sql_dir() / "ingest" / "logs.sql").read_text())
    finally:
        con.unregister("_log_lines")
    stamps = [s for s in decoded.table.column("ts_ns").to_pylist() if s is not None]
    return SourceFacts("training-log", None, None, True, min(stamps) if stamps else None, None,
                       decoded.warnings, time_base="the lines' time stamps")
