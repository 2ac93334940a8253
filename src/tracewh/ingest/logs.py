"""Training logs: DeepSpeed `time (ms) | ...` timer lines, Megatron iteration lines, DeepSpeed
`memory (MB) | ...` lines, or a user's regular expression, decoded into one row per number
(store.log_values); sql/views/log_timers.sql and log_iterations.sql give them their shape."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa

from ..errors import IngestError

LOG_SUFFIXES = (".log",)

_STAMP = re.compile(r"^\[(\d{4}-?\d\d-?\d\d)[ T](\d\d:\d\d:\d\d)(?:[,.](\d{1,9}))?\]")
# '[Rank 3]' (DeepSpeed), '[rank-7/8]' (Primus and other Megatron launchers)
_RANK = re.compile(r"\[Rank (\d+)\]|\[rank-(\d+)(?:/\d+)?\]", re.I)
_COLOUR = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")  # ANSI escape sequences (colour, bold)
_TIMERS = re.compile(r"\btime \(ms\)\s*\|(.*)$")
_MEMORY = re.compile(r"\(after (\d+) iterations\) memory \(MB\)\s*\|(.*)$")
_ITERATION = re.compile(r"\biteration\s*=?\s*(\d+)\s*/\s*(\d+)\s*\|(.*)$")
_NUMBER = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf)"
# 'name: 1.5', and 'name: 32208.7/32208.7' (Megatron's current/running-average pairs)
_PIECE = re.compile(rf"^\s*([^\s:=|][^:=|]*?)\s*[:=]\s*({_NUMBER})(?:\s*/\s*({_NUMBER}))?\s*$",
                    re.I)
_SPECIAL_GROUPS = {"rank", "step", "ts", "name", "ms"}


_CHUNK_LINES = 65_536          # lines decoded between two appends to the temp table
_HEAD_BYTES = 4 << 20          # the log's start kept as text: Megatron prints its arguments there
_SCHEMA = pa.schema([("line_no", pa.int32()), ("line_rank", pa.int32()), ("ts_ns", pa.int64()),
                     ("kind", pa.string()), ("step", pa.int32()), ("name", pa.string()),
                     ("value", pa.float64())])


@dataclass
class DecodedLog:
    rows: int                  # in temp table _log_lines of the cursor that decoded the log
    warnings: list[str] = field(default_factory=list)
    text: str = ""             # the log's first _HEAD_BYTES, for a Megatron arguments block


def _key(name: str) -> str:
    """'elapsed time per iteration (ms)' -> 'elapsed_time_per_iteration_ms', 'TFLOPs' -> 'tflops'."""
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def _pieces(text: str, normalize: bool, skipped: list[str] | None = None
            ) -> list[tuple[str, float]] | None:
    """'a: 1.5 | b: 2/2.5 |' -> [('a', 1.5), ('b', 2.0), ('b_avg', 2.5)] (a pair is the value
    and its running average); None when a piece is not `name: number`, unless `skipped` is
    given: such a piece's name is added to it and the others are kept."""
    found = []
    for piece in text.split("|"):
        if not piece.strip():
            continue
        match = _PIECE.match(piece)
        if not match:
            if skipped is None:
                return None
            skipped.append(piece.split(":")[0].strip())
            continue
        name = _key(match.group(1)) if normalize else match.group(1).strip()
        found.append((name, float(match.group(2))))
        if match.group(3) is not None:
            found.append((f"{name}_avg" if normalize else f"{name} avg", float(match.group(3))))
    return found or None


def _stamp_ns(line: str) -> int | None:
    match = _STAMP.match(line)
    if not match:
        return None
    when = datetime.strptime(match.group(1).replace("-", "") + " " + match.group(2),
                             "%Y%m%d %H:%M:%S").replace(tzinfo=timezone.utc)
    fraction = (match.group(3) or "").ljust(9, "0")
    return int(when.timestamp()) * 1_000_000_000 + int(fraction or 0)


def decode(con, path: Path, user: re.Pattern | None = None) -> DecodedLog:
    """Every timer, iteration and memory number of the log at `path`, one row each, appended to
    temp table _log_lines of `con` (a cursor of the file's own) a chunk of lines at a time, so
    that memory stays bounded whatever the log's size; `user`: a --log-pattern
    (compile_pattern), tried first on every line."""
    con.register("_log_schema", _SCHEMA.empty_table())
    con.execute("CREATE OR REPLACE TEMP TABLE _log_lines AS FROM _log_schema")
    con.unregister("_log_schema")
    state = _Reading()
    try:
        with path.open("rb") as handle:
            chunk: list[bytes] = []
            for raw in handle:
                chunk.append(raw)
                if len(chunk) == _CHUNK_LINES:
                    _read_chunk(con, chunk, user, state)
                    chunk = []
            _read_chunk(con, chunk, user, state)
    except OSError as exc:
        raise IngestError(path, f"cannot read: {exc.strerror or exc}") from None
    if not state.rows:
        raise IngestError(path, "no timer line: not a training log tracewh reads",
                          "expected DeepSpeed 'time (ms) | ...' or Megatron 'iteration N/M | ...' "
                          "lines; give other formats with --log-pattern")
    return DecodedLog(state.rows, state.warnings(), "".join(state.head))


@dataclass
class _Reading:
    """What decode knows between chunks."""
    line_no: int = 0
    rows: int = 0
    head: list[str] = field(default_factory=list)
    head_bytes: int = 0
    seen: Counter = field(default_factory=Counter)  # (rank, timer) -> lines so far: its step
    unparsed: list[int] = field(default_factory=list)
    not_finite: list[int] = field(default_factory=list)  # nan, inf, 1e309: no time a timer takes
    invalid_utf8: int = 0
    cut: int | None = None
    stamped: bool = False
    last: dict = field(default_factory=dict)  # rank -> the last line read: a repeat is skipped
    repeated: int = 0
    fields_skipped: Counter = field(default_factory=Counter)  # iteration fields not numbers

    def warnings(self) -> list[str]:
        said = []
        if self.unparsed:
            said.append(f"{len(self.unparsed)} timer line(s) not parsed (line {_lines(self.unparsed)})")
        if self.not_finite:
            said.append(f"{len(self.not_finite)} line(s) with a value that is no finite number "
                        f"(nan, inf, 1e309): those values not stored (line {_lines(self.not_finite)})")
        if self.invalid_utf8:
            said.append(f"invalid UTF-8 replaced ({self.invalid_utf8} byte sequence(s))")
        if self.cut:
            said.append(f"last line ({self.cut}) cut short: not stored")
        if self.stamped:
            said.append("log time stamps carry no zone: taken as UTC")
        if self.repeated:
            said.append(f"{self.repeated} line(s) printed twice in a row: read once")
        if self.fields_skipped:
            said.append("iteration fields that are no single number not stored: "
                        + ", ".join(f"'{name}'" for name in sorted(self.fields_skipped)[:5]))
        return said


def _read_chunk(con, chunk: list[bytes], user: re.Pattern | None, state: _Reading) -> None:
    """Decode `chunk` (raw lines, each with its newline but the file's last) into _log_lines."""
    lines = []
    for raw in chunk:
        line = raw.decode("utf-8", errors="replace")
        state.invalid_utf8 += line.count("\ufffd") - raw.count("\ufffd".encode())
        if state.head_bytes < _HEAD_BYTES:
            state.head.append(line)
            state.head_bytes += len(raw)
        line = line.rstrip("\n").removesuffix("\r") if line.endswith("\n") else line
        if "\x1b" in line:
            line = _COLOUR.sub("", line)
        lines.append(line)
    rows: dict[str, list] = {name: [] for name in _SCHEMA.names}
    user_hits = _user_hits(lines, user) if user is not None else [None] * len(lines)
    for raw, line, hit in zip(chunk, lines, user_hits):
        state.line_no += 1
        found = _read_line(line, hit, state.fields_skipped)
        if found is None:
            continue
        if state.last.get(found[1]) == line:  # a logger with two handlers prints each line twice
            state.repeated += 1
            continue
        state.last[found[1]] = line
        if not raw.endswith(b"\n"):
            state.cut = state.line_no  # a cut line's last number may be cut too: not stored
            continue
        kind, rank, step, values = found
        if values is None:
            state.unparsed.append(state.line_no)
            continue
        stamp = _stamp_ns(line)
        state.stamped |= stamp is not None
        if not all(math.isfinite(value) for _, value in values):
            state.not_finite.append(state.line_no)
        for name, value in values:
            if kind == "timer":
                state.seen[rank, name] += 1  # the line is a step even where its value is not kept
            if not math.isfinite(value):
                continue
            rows["line_no"].append(state.line_no)
            rows["line_rank"].append(rank)
            rows["ts_ns"].append(stamp)
            rows["kind"].append(kind)
            rows["step"].append(state.seen[rank, name] if kind == "timer" and step is None else step)
            rows["name"].append(name)
            rows["value"].append(value)
    if rows["name"]:
        con.register("_log_chunk", pa.table(rows, schema=_SCHEMA))
        try:
            con.execute("INSERT INTO _log_lines SELECT * FROM _log_chunk")
        finally:
            con.unregister("_log_chunk")
        state.rows += len(rows["name"])


def _lines(numbers: list[int]) -> str:
    return ", ".join(map(str, numbers[:10])) + (", ..." if len(numbers) > 10 else "")


def _user_hits(lines: list[str], user: re.Pattern) -> list[dict | None]:
    """Per line, the named groups of the --log-pattern's first match in it (None: no match).
    Matched by DuckDB's RE2, in time linear in the line whatever the pattern: Python's
    backtracking engine takes minutes on '(a+)+$' against a line of 34 'a' and cannot be
    stopped by Ctrl-C."""
    import duckdb

    names = group_names(user)
    con = duckdb.connect()
    try:
        con.register("_lines", pa.table({"line": lines}))
        hits = con.execute(
            "SELECT CASE WHEN regexp_matches(line, $p) THEN regexp_extract(line, $p, $names) END "
            "FROM _lines", {"p": user.pattern, "names": names}).fetchall()
    finally:
        con.close()
    # RE2 gives '' for a group that took no part in the match; Python's re, None
    return [None if groups is None else
            {k: v for k, v in groups.items() if not k.startswith("_") and v != ""}
            for (groups,) in hits]


def group_names(pattern: re.Pattern) -> list[str]:
    """A name for every capture group in order (RE2 names them by position): the pattern's own,
    '_N' for an unnamed one."""
    by_index = {index: name for name, index in pattern.groupindex.items()}
    return [by_index.get(i, f"_{i}") for i in range(1, pattern.groups + 1)]


def _read_line(line: str, user_hit: dict | None, fields_skipped: Counter):
    """(kind, rank, step, [(name, value)] or None when it does not parse), or None for a line
    that is no timer, iteration or memory line. `user_hit`: the --log-pattern's groups; an
    iteration field that is no number (`mem usage/free: 1GB/2GB`) is counted in
    `fields_skipped`."""
    rank_match = _RANK.search(line)
    rank = int(rank_match.group(1) or rank_match.group(2)) if rank_match else None
    if user_hit is not None:
        return _read_user(user_hit, rank)
    match = _TIMERS.search(line)
    if match:
        return "timer", rank, None, _pieces(match.group(1), normalize=False)
    match = _MEMORY.search(line)
    if match:
        return "memory", rank, int(match.group(1)), _pieces(match.group(2), normalize=True)
    match = _ITERATION.search(line)
    if match:
        skipped: list[str] = []
        values = _pieces(match.group(3), normalize=True, skipped=skipped)
        fields_skipped.update(skipped)
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
        re2_reads(pattern)
    except re.error as exc:
        raise IngestError("--log-pattern", f"not a regular expression: {exc}") from None
    except ValueError as exc:
        raise IngestError("--log-pattern", f"{exc}",
                          "look-around and back-references are not read: lines are matched "
                          "in linear time") from None
    if not set(compiled.groupindex) - {"rank", "step", "ts"}:
        raise IngestError("--log-pattern", "no named group to read a timer from",
                          "name them, e.g. 'fwd=(?P<fwd>[0-9.]+)' or "
                          "'(?P<name>\\w+) took (?P<ms>[0-9.]+) ms'")
    return compiled


def re2_reads(pattern: str) -> None:
    """ValueError when DuckDB's RE2 (no backtracking) cannot read `pattern`."""
    import duckdb

    with duckdb.connect() as con:
        try:
            con.execute("SELECT regexp_matches('', ?)", [pattern])
        except duckdb.Error as exc:
            raise ValueError(f"not a regular expression RE2 reads: "
                             f"{str(exc).splitlines()[0].split(': ', 1)[-1]}") from None


def _read_user(groups: dict, rank: int | None):
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
    con.execute((sql_dir() / "ingest" / "logs.sql").read_text())
    (first,) = con.execute("SELECT min(ts_ns) FROM _log_lines").fetchone()
    con.execute("DROP TABLE _log_lines")
    return SourceFacts("training-log", None, None, True, first, None, decoded.warnings,
                       time_base="the lines' time stamps")
