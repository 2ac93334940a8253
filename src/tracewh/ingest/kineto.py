"""Decode a PyTorch profiler (Kineto) Chrome-trace JSON file into one Arrow table of events.

The decode runs in a worker process: msgspec parses straight into small typed structs (the
`args` object of each event stays raw JSON text, to be read by SQL), then the events become
Arrow columns. Everything else (which event is a kernel, times in UTC, ranks, iterations,
collectives) is done by sql/ingest/kineto/. Format facts: shared/reference/kineto_format.md.
"""

from __future__ import annotations

import gc
import gzip
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import msgspec
import pyarrow as pa

from ..errors import IngestError

Id = Union[int, str, None]  # pids and tids are integers, or strings such as "Spans"

# Events that carry no warehouse row: flow arrows (the correlation id is in args already),
# metadata, counters; python_function stacks are skipped as HolisticTraceAnalysis does.
_SKIPPED_PHASES = frozenset({"s", "f", "t", "M", "C", "i", "I", "n", "b", "e"})
_SKIPPED_CATEGORIES = frozenset({"python_function", "ac2g", "async_cpu_to_gpu", "async_gpu",
                                 "fwdbwd", "forward_backward", "fwd_bwd", "Trace", "overhead"})


class Event(msgspec.Struct):
    ph: str = ""
    cat: Union[str, None] = None
    name: Union[str, None] = None
    pid: Id = None
    tid: Id = None
    ts: Union[float, None] = None
    dur: Union[float, None] = None
    args: msgspec.Raw = msgspec.Raw()


class ExactEvent(Event):
    """The same event with `ts` kept as its literal text (19-digit epoch-µs with ns decimals)."""

    ts: msgspec.Raw = msgspec.Raw()


class Trace(msgspec.Struct):
    traceEvents: list[Event]  # required: JSON without it is not a trace
    baseTimeNanoseconds: Union[int, None] = None
    distributedInfo: msgspec.Raw = msgspec.Raw()
    deviceProperties: msgspec.Raw = msgspec.Raw()
    # free-form facts, kept as written (their types vary between PyTorch versions)
    schemaVersion: Any = None
    displayTimeUnit: Any = None
    trace_id: Any = None
    host_name: Any = None
    cupti_version: Any = None
    cuda_runtime_version: Any = None
    cuda_driver_version: Any = None


class ExactTrace(Trace):
    traceEvents: list[ExactEvent]


_DECODERS = {
    (False, False): msgspec.json.Decoder(Trace),
    (True, False): msgspec.json.Decoder(ExactTrace),
    (False, True): msgspec.json.Decoder(list[Event]),     # legacy autograd exporter: a bare array
    (True, True): msgspec.json.Decoder(list[ExactEvent]),
}

SCHEMA = pa.schema([
    ("ph", pa.string()), ("cat", pa.string()), ("name", pa.string()),
    ("pid", pa.string()), ("tid", pa.string()),
    ("ts", pa.float64()),          # µs: relative to baseTimeNanoseconds, or epoch
    ("ts_text", pa.string()),      # the literal ts, only for 19-digit epoch-µs files
    ("dur", pa.float64()),         # µs
    ("args", pa.string()),         # the args object as JSON text
])


@dataclass
class Decoded:
    """One decoded trace: its events and its top-level facts."""

    events: pa.Table
    base_time_ns: int | None
    metadata: dict = field(default_factory=dict)   # JSON-able top-level keys
    skipped: int = 0                               # events with no warehouse row
    repairs: list[str] = field(default_factory=list)


def read_bytes(path: Path) -> bytes:
    """The file's JSON text; gzip is recognised by its magic bytes, not the name."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(data)
        except (EOFError, OSError, zlib.error) as exc:
            raise IngestError(path, f"corrupt or truncated gzip ({exc})",
                              "copy the file again from where the profiler wrote it") from None
    return data


def decode(path: Path) -> Decoded:
    """Parse a trace file; lenient where profilers are sloppy, strict where data would be lost."""
    data = read_bytes(path)
    if not data.strip():
        raise IngestError(path, "empty file", "nothing to ingest")
    repairs: list[str] = []
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of small objects, no cycles: the collector only costs time
    try:
        trace = _parse(path, data, repairs)
        if _needs_exact_ts(trace):
            trace = _parse(path, data, repairs, exact=True)
        return _to_arrow(path, trace, repairs)
    finally:
        if gc_was_enabled:
            gc.enable()


def _parse(path: Path, data: bytes, repairs: list[str], exact: bool = False) -> Trace:
    legacy = data.lstrip()[:1] == b"["
    decoder = _DECODERS[(exact, legacy)]
    try:
        parsed = decoder.decode(data)
    except msgspec.ValidationError:
        parsed = _parse_generic(path, data, exact, legacy)
    except msgspec.DecodeError as exc:
        _raise_if_truncated(path, data, exc)
        data = _repair(data, repairs)
        try:
            parsed = decoder.decode(data)
        except msgspec.ValidationError:
            parsed = _parse_generic(path, data, exact, legacy)
        except msgspec.DecodeError as again:
            raise IngestError(path, f"not valid JSON ({again})",
                              "check the file; tracewh repairs only the known profiler faults") from None
    if legacy:
        return (ExactTrace if exact else Trace)(traceEvents=parsed)
    return parsed


def _parse_generic(path: Path, data: bytes, exact: bool, legacy: bool) -> Trace:
    """Slow path for traces whose fields have unusual types (numbers as names, ...)."""
    try:
        doc = msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise IngestError(path, f"not valid JSON ({exc})") from None
    if legacy:
        doc = {"traceEvents": doc}
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise IngestError(path, "JSON, but not a Chrome trace: no traceEvents array",
                          "give a PyTorch profiler (Kineto) trace")
    events = []
    event_type = ExactEvent if exact else Event
    for raw in doc["traceEvents"]:
        if not isinstance(raw, dict):
            continue
        args = raw.get("args")
        ts = raw.get("ts")
        events.append(event_type(
            ph=str(raw.get("ph", "")), cat=_text(raw.get("cat")), name=_text(raw.get("name")),
            pid=_id(raw.get("pid")), tid=_id(raw.get("tid")),
            ts=msgspec.Raw(msgspec.json.encode(ts)) if exact else _number(ts),
            dur=_number(raw.get("dur")),
            args=msgspec.Raw(msgspec.json.encode(args)) if args is not None else msgspec.Raw()))
    doc["traceEvents"] = []
    trace = msgspec.convert(
        {k: v for k, v in doc.items() if k in Trace.__struct_fields__ and k not in
         ("distributedInfo", "deviceProperties")}, ExactTrace if exact else Trace, strict=False)
    trace.traceEvents = events
    for key in ("distributedInfo", "deviceProperties"):
        if key in doc:
            setattr(trace, key, msgspec.Raw(msgspec.json.encode(doc[key])))
    return trace


def _text(value) -> str | None:
    return None if value is None else str(value)


def _id(value) -> Id:
    return value if isinstance(value, (int, str)) or value is None else str(value)


def _number(value) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _raise_if_truncated(path: Path, data: bytes, exc: msgspec.DecodeError) -> None:
    if "truncated" in str(exc):
        where = "inside traceEvents" if b'"traceEvents"' in data else "before any event"
        raise IngestError(
            path, f"truncated JSON: the file ends at byte {len(data):,} {where}, without the "
            "closing ]} of the trace", "copy the file again; a partial trace is not stored") from None


_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
# A "name" value with unescaped quotes inside (pytorch#113001):
#   "name": "Library("_inductor_test", "IMPL")", "pid": 1,
# The value ends at the first quote followed by the next key, a closing brace or the line end.
_NAME_VALUE = re.compile(rb'("name":\s*")([^\n]*?)(?="\s*(?:,\s*"[^"\n]+"\s*:|\}|,?\s*$))', re.M)
_BARE_QUOTE = re.compile(rb'(?<!\\)"')


def _repair(data: bytes, repairs: list[str]) -> bytes:
    """Fix the faults real profilers write: invalid UTF-8, raw control characters, and
    unescaped quotes inside names. Each repair applied is recorded for the source's warnings."""
    text = data.decode("utf-8", errors="replace").encode("utf-8")
    if text != data:
        repairs.append("invalid UTF-8 replaced")
    fixed = _CONTROL.sub(b" ", text)
    if fixed != text:
        repairs.append("control characters replaced")
    quoted = _NAME_VALUE.sub(lambda m: m.group(1) + _BARE_QUOTE.sub(rb'\\"', m.group(2)), fixed)
    if quoted != fixed:
        repairs.append("unescaped quotes in names escaped")
    return quoted


def _needs_exact_ts(trace: Trace) -> bool:
    """April-2024 traces: epoch µs with ns decimals (19 significant digits), no base time.
    A double cannot hold them, so such files are parsed again with `ts` kept as text."""
    if trace.baseTimeNanoseconds is not None:
        return False
    for event in trace.traceEvents:
        ts = event.ts
        if ts is not None and ts > 1e15 and ts != int(ts):
            return True
    return False


def _to_arrow(path: Path, trace: Trace, repairs: list[str]) -> Decoded:
    kept = [e for e in trace.traceEvents
            if e.ph not in _SKIPPED_PHASES and e.cat not in _SKIPPED_CATEGORIES and e.ts is not None]
    skipped = len(trace.traceEvents) - len(kept)
    if not kept:
        raise IngestError(path, "empty trace: no complete events (ph X) to store",
                          "profile with activities=[CPU, CUDA] and at least one step")
    exact = isinstance(trace, ExactTrace)
    columns = {
        "ph": [e.ph for e in kept],
        "cat": [e.cat for e in kept],
        "name": [e.name for e in kept],
        "pid": [None if e.pid is None else str(e.pid) for e in kept],
        "tid": [None if e.tid is None else str(e.tid) for e in kept],
        "ts": [None for _ in kept] if exact else [e.ts for e in kept],
        "ts_text": [bytes(e.ts).decode() for e in kept] if exact else [None] * len(kept),
        "dur": [e.dur for e in kept],
        "args": [bytes(e.args).decode("utf-8", "replace") if e.args else None for e in kept],
    }
    if exact:
        columns["ts"] = [float(t) for t in columns["ts_text"]]
    table = pa.table({name: pa.array(values, SCHEMA.field(name).type)
                      for name, values in columns.items()}, schema=SCHEMA)
    return Decoded(table, trace.baseTimeNanoseconds, _metadata(trace), skipped, repairs)


def _metadata(trace: Trace) -> dict:
    out = {key: getattr(trace, key) for key in (
        "schemaVersion", "displayTimeUnit", "trace_id", "host_name", "cupti_version",
        "cuda_runtime_version", "cuda_driver_version", "baseTimeNanoseconds")}
    for key in ("distributedInfo", "deviceProperties"):
        raw = getattr(trace, key)
        out[key] = msgspec.json.decode(raw) if raw else None
    return {key: value for key, value in out.items() if value is not None}


# ---------------------------------------------------------------------------------------------
# Loading (main process): the decoded events through sql/ingest/kineto/ into the stored tables.

def load(con, path: Path, decoded: Decoded, run_id: str, file_id: int, rules: list,
         alone_in_run: bool):
    """Write one decoded trace (inside the caller's transaction); returns its SourceFacts."""
    import json

    from .discover import rank_from_filename, rank_from_map
    from .ranks import claim, taken_ranks
    from .source import SourceFacts
    from .sqlscript import run_folder, set_variables

    meta = decoded.metadata
    dist = meta.get("distributedInfo") if isinstance(meta.get("distributedInfo"), dict) else {}
    warnings = [f"repaired: {r}" for r in decoded.repairs]
    taken = taken_ranks(con, run_id)
    rank, source = rank_from_map(rules, path, None, True), "rank-map"
    if rank is None and isinstance(dist.get("rank"), int):
        rank, source = dist["rank"], "distributedInfo"
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

    relative = decoded.base_time_ns is None and _max_ts(decoded.events) < 1e14
    if relative:
        warnings.append("relative timestamps without baseTimeNanoseconds: times are not UTC")
    con.register("_kineto_events", decoded.events)
    try:
        set_variables(
            con, run_id=run_id, file_id=file_id, rank=rank, rank_source=source,
            base_ns=decoded.base_time_ns, world_size=_int(dist.get("world_size")),
            backend=dist.get("backend"), host=meta.get("host_name"),
            device_properties=json.dumps(meta.get("deviceProperties") or []))
        run_folder(con, "ingest/kineto")
        origin = con.execute("SELECT min(start_ns) FROM _ev").fetchall()[0][0]
        if dist:
            con.execute("UPDATE store.runs SET metadata = ? WHERE run_id = ? AND metadata IS NULL",
                        [json.dumps({"distributedInfo": dist}), run_id])
    finally:
        con.unregister("_kineto_events")
        for name in ("_ev", "_iterations", "_host", "_nvtx", "_launches", "_gpu",
                     "_gpu_iteration", "_comm_args", "_nccl"):
            con.execute(f"DROP TABLE IF EXISTS temp.{name}")
    tool = f"PyTorch profiler (Kineto), schema {meta.get('schemaVersion', '?')}"
    return SourceFacts("kineto-json", tool, str(meta.get("schemaVersion", "")) or None,
                       not relative, origin, meta.get("host_name"), warnings,
                       json.dumps(meta, default=str))


def _max_ts(events: pa.Table) -> float:
    import pyarrow.compute as pc

    value = pc.max(events.column("ts")).as_py()
    return value if value is not None else 0.0


def _int(value) -> int | None:
    return value if isinstance(value, int) else None
