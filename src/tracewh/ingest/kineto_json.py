"""Kineto (PyTorch profiler) Chrome-trace JSON, read: the traceEvents array cut out into a
temporary file for DuckDB's JSON reader (the fast path, sql/ingest/kineto/read_json.sql), or,
for files it refuses (faults the profilers write, 19-digit timestamps, odd layouts), decoded
here: msgspec parses straight into small typed structs (the `args` object of each event stays
raw JSON text), 4 MB of events at a time, into one Arrow table of events. Mapping and writing
the events is tracewh.ingest.kineto. Format facts: shared/reference/kineto_format.md.
"""

from __future__ import annotations

import gc
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Union

import duckdb
import msgspec

from ..errors import IngestError
from .scratch import scratch_file

if TYPE_CHECKING:  # pyarrow is imported by the Python decoder only: 37 MB the fast path spares
    import pyarrow as pa

Id = Union[int, str, None]  # pids and tids are integers, or strings such as "Spans"

# Events that carry no warehouse row: flow arrows (the correlation id is in args already),
# metadata, counters.
SKIPPED_PHASES = frozenset({"s", "f", "t", "M", "C", "i", "I", "n", "b", "e"})
SKIPPED_CATEGORIES = frozenset({"ac2g", "async_cpu_to_gpu", "async_gpu",
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


_EVENT_LISTS = {False: msgspec.json.Decoder(list[Event]), True: msgspec.json.Decoder(list[ExactEvent])}
_DECODERS = {
    (False, False): msgspec.json.Decoder(Trace),
    (True, False): msgspec.json.Decoder(ExactTrace),
    (False, True): msgspec.json.Decoder(list[Event]),     # legacy autograd exporter: a bare array
    (True, True): msgspec.json.Decoder(list[ExactEvent]),
}

@lru_cache(maxsize=None)
def schema() -> pa.Schema:
    """The Python decoder's table of events (the same columns as read_json.sql's view)."""
    import pyarrow as pa

    return pa.schema([
        ("cat", pa.string()), ("name", pa.string()),
        ("pid", pa.int64()),           # OS pid, or the device index of GPU events
        ("tid", pa.int64()),           # OS tid, or the stream of GPU events
        ("tid_text", pa.string()),     # a tid that is not a number (2021: "stream 7")
        ("ts", pa.float64()),          # µs: relative to baseTimeNanoseconds, or epoch
        ("ts_text", pa.string()),      # the literal ts, only for 19-digit epoch-µs files
        ("dur", pa.float64()),         # µs
        ("args", pa.string()),         # the args object as JSON text
    ])


@dataclass
class Decoded:
    """One decoded trace: its top-level keys (traceEvents emptied) and the repairs made; its
    events went to the sink given to decode()."""

    trace: Trace
    repairs: list[str] = field(default_factory=list)


class EventTable:
    """The Python decoder's sink: temp table _trace_events of the file's cursor, filled batch by
    batch, so that DuckDB holds the events within its memory limit (spilling beyond it) where a
    Python list of batches would grow with the file."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        import pyarrow as pa

        self.con, self.rows = con, 0
        con.register("_trace_batch", pa.Table.from_batches([], schema()))
        con.execute("CREATE OR REPLACE TEMP TABLE _trace_events AS FROM _trace_batch")
        con.unregister("_trace_batch")

    def append(self, batch: pa.RecordBatch) -> None:
        self.con.register("_trace_batch", batch)
        self.con.execute("INSERT INTO _trace_events FROM _trace_batch")
        self.con.unregister("_trace_batch")
        self.rows += batch.num_rows

    def clear(self) -> None:  # a decoder gave up half way: the next one starts again
        self.con.execute("DELETE FROM _trace_events")
        self.rows = 0


# Text the whole-file path decodes at most: it holds the text, its Python objects and their
# Arrow columns at once (about 3 times the text). Only files DuckDB's reader refuses and whose
# events are not laid out as Kineto writes them come this way.
_WHOLE_BYTES = 256 << 20


def read_bytes(path: Path) -> bytes:
    """The file's JSON text, for decoding whole; gzip is recognised by its magic bytes."""
    blocks, size = [], 0
    for block in _blocks(path):
        size += len(block)
        if size > _WHOLE_BYTES:
            raise IngestError(path, f"more than {_WHOLE_BYTES >> 20} MB of JSON that neither "
                              "DuckDB's reader nor the streamed decoder can read (faulty JSON "
                              "not laid out one event per block, as the profiler writes it); "
                              "decoding it whole would take several times that in memory",
                              "export the trace again from the profiler")
        blocks.append(block)
    return b"".join(blocks)


# What msgspec raises on text it cannot decode: besides its own errors, UnicodeDecodeError on
# invalid UTF-8 in a string, RecursionError on nesting deeper than its stack allows.
_UNDECODABLE = (msgspec.MsgspecError, UnicodeDecodeError, RecursionError)


def decode(path: Path, sink) -> Decoded:
    """Parse a trace file into `sink` (an EventTable, or a list of Arrow batches); lenient where
    profilers are sloppy, strict where data would be lost."""
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of small objects, no cycles: the collector only costs time
    try:
        decoded = _decode_streaming(path, sink)
        if decoded is None:  # unusual layout or faulty JSON: the whole file at once
            sink.clear()
            data = read_bytes(path)
            if not data.strip():
                raise IngestError(path, "empty file", "nothing to ingest")
            decoded = _decode_whole(path, data, sink)
        return decoded
    except RecursionError:
        raise IngestError(path, "JSON nested too deeply to decode (an object inside thousands of "
                          "others)", "check the file; no profiler writes such nesting") from None
    finally:
        if gc_was_enabled:
            gc.enable()


def _decode_whole(path: Path, data: bytes, sink) -> Decoded:
    repairs: list[str] = []
    trace = _parse(path, data, repairs)
    if _needs_exact_ts(trace.traceEvents, trace.baseTimeNanoseconds):
        trace = _parse(path, data, repairs, exact=True)
    sink.append(_to_batch(trace.traceEvents, exact=isinstance(trace, ExactTrace)))
    return _decoded(trace, repairs)


# Kineto prints one event per block, each starting on a line of its own at one indentation:
#   "traceEvents": [
#     {
#       "ph": "X", "cat": "cpu_op", ...
#     },
#     {
# A boundary between two events is then "}" "," newline <indent> "{": no other place in a
# valid file has it (strings hold no raw newlines, nested objects sit deeper). Cutting there
# lets a big file be read, gunzipped and decoded a slice at a time, so neither its text nor its
# Python objects ever exist whole: only the Arrow columns accumulate.
_CHUNK_BYTES = 4 << 20  # measured: 4 MB slices peak 120 MB lower than 16 MB, at the same speed
_BLOCK_BYTES = 4 << 20
_HEADER_BYTES = 64 << 20  # the first event lies within them (Kineto: within the first KBs)
# Real traces inflate 5-30x (shared/data: 30x at most); 200x is no trace but a gzip bomb, which
# would fill the disk and memory (deflate reaches 1032x). Small files may go up to the floor.
_MAX_INFLATION, _INFLATION_FLOOR = 200, 256 << 20


def _decode_streaming(path: Path, sink, exact: bool = False) -> Decoded | None:
    """Decode the traceEvents array slice by slice into `sink`; None when the file does not have
    Kineto's layout or a slice fails, so that the whole-file path (with its repairs and errors)
    runs. `exact` keeps each ts as its literal text (19-digit epoch µs with ns decimals): the
    first slice that needs it starts the file again that way."""
    blocks = _blocks(path)
    pending, start = b"", None
    for block in blocks:  # read up to the first event, within the first _HEADER_BYTES
        pending += block
        start = _events_start(pending)
        if start is not None or len(pending) >= _HEADER_BYTES:
            break
    if not start:  # never found, or not Kineto's layout
        return None
    array_open, first, indent = start
    header, pending = pending[: array_open + 1], pending[first:]
    base_time = _base_time_hint(header)
    boundary = re.compile(rb"\}[ \t\r]*,[ \t\r]*\n" + re.escape(indent) + rb"\{")
    exhausted, tail, repairs = False, b"", []
    try:
        while tail == b"":
            while len(pending) < 2 * _CHUNK_BYTES and not exhausted:
                block = next(blocks, None)
                exhausted = block is None
                pending += block or b""
            cut = boundary.search(pending, _CHUNK_BYTES)
            if cut is not None:
                chunk, pending = pending[: cut.start() + 1], pending[cut.end() - 1:]
            elif exhausted:  # the last slice: up to the array's closing bracket
                close = re.compile(rb"\}[ \t\r\n]*\]").search(pending)
                if close is None:
                    return None  # truncated, most likely: the whole-file path says so
                chunk, tail = pending[: close.start() + 1], pending[close.end() - 1:]
            else:
                continue
            events = _decode_slice(chunk, repairs, exact)
            if not exact and _needs_exact_ts(events, base_time):
                sink.clear()
                return _decode_streaming(path, sink, exact=True)
            sink.append(_to_batch(events, exact))
            del events, chunk
        trace = _DECODERS[(False, False)].decode(header + tail)
    except _UNDECODABLE:
        return None
    return _decoded(trace, repairs)


def _decode_slice(chunk: bytes, repairs: list[str], exact: bool) -> list[Event]:
    """The events of one slice, repaired when they hold the faults _repair fixes."""
    try:
        return _EVENT_LISTS[exact].decode(b"[" + chunk + b"]")
    except (msgspec.DecodeError, UnicodeDecodeError):
        found: list[str] = []
        events = _EVENT_LISTS[exact].decode(b"[" + _repair(chunk, found) + b"]")
        repairs.extend(r for r in found if r not in repairs)
        return events


def _events_start(text: bytes) -> tuple[int, int, bytes] | bool | None:
    """(index of the events array's "[", index of its first "{", that line's indentation);
    None while the text read so far does not reach the first event; False when the events are
    not laid out one per block."""
    key = text.find(b'"traceEvents"')
    array_open = text.find(b"[", key) if key >= 0 else -1
    first = text.find(b"{", array_open) if array_open >= 0 else -1
    if first < 0:
        return None
    line_start = text.rfind(b"\n", 0, first) + 1
    indent = text[line_start:first]
    if text[array_open + 1:first].strip() or line_start == 0 or indent.strip():
        return False
    return array_open, first, indent


def _base_time_hint(header: bytes) -> int | None:
    match = re.search(rb'"baseTimeNanoseconds"\s*:\s*(\d+)', header)
    return int(match.group(1)) if match else None


def _blocks(path: Path):
    """The file's bytes in blocks, gunzipped when it is gzip (recognised by its magic bytes)."""
    with path.open("rb") as handle:
        if handle.read(2) != b"\x1f\x8b":
            handle.seek(0)
            yield from iter(lambda: handle.read(_BLOCK_BYTES), b"")
            return
        handle.seek(0)
        gunzip = zlib.decompressobj(wbits=31)
        cap = max(_MAX_INFLATION * path.stat().st_size, _INFLATION_FLOOR)
        inflated = 0
        try:
            for block in iter(lambda: handle.read(1 << 20), b""):
                while block:
                    out = gunzip.decompress(block, _BLOCK_BYTES)
                    inflated += len(out)
                    if inflated > cap:
                        raise IngestError(path, f"inflates beyond {cap / 1e6:,.0f} MB, more than "
                                          f"{_MAX_INFLATION}x its size: a gzip bomb, not a trace",
                                          "check where the file came from")
                    yield out
                    block = gunzip.unconsumed_tail
            yield gunzip.flush()
        except zlib.error as exc:
            raise IngestError(path, f"corrupt or truncated gzip ({exc})",
                              "copy the file again from where the profiler wrote it") from None
        if not gunzip.eof:
            raise IngestError(path, "corrupt or truncated gzip (the compressed stream ends early)",
                              "copy the file again from where the profiler wrote it")


def _parse(path: Path, data: bytes, repairs: list[str], exact: bool = False) -> Trace:
    legacy = data.lstrip()[:1] == b"["
    decoder = _DECODERS[(exact, legacy)]
    try:
        parsed = decoder.decode(data)
    except msgspec.ValidationError:
        parsed = _parse_generic(path, data, exact, legacy)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
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


def _raise_if_truncated(path: Path, data: bytes, exc: Exception) -> None:
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
# NaN and Infinity, which Python's json writes and JSON has not (DuckDB's reader takes them)
_NOT_A_NUMBER = re.compile(rb'(?<=[:,\[])(\s*)(?:-?Infinity|NaN)(?=\s*[,\]}])')


def _repair(data: bytes, repairs: list[str]) -> bytes:
    """Fix the faults real profilers write: invalid UTF-8, raw control characters, unescaped
    quotes inside names, and NaN / Infinity. Each repair applied is recorded for the source's warnings."""
    text = data.decode("utf-8", errors="replace").encode("utf-8")
    if text != data:
        repairs.append("invalid UTF-8 replaced")
    fixed = _CONTROL.sub(b" ", text)
    if fixed != text:
        repairs.append("control characters replaced")
    quoted = _NAME_VALUE.sub(lambda m: m.group(1) + _BARE_QUOTE.sub(rb'\\"', m.group(2)), fixed)
    if quoted != fixed:
        repairs.append("unescaped quotes in names escaped")
    numbered = _NOT_A_NUMBER.sub(rb"\1null", quoted)
    if numbered != quoted:
        repairs.append("NaN and Infinity, which JSON has no words for, read as null")
    return numbered


def _needs_exact_ts(events: list[Event], base_time_ns: int | None) -> bool:
    """April-2024 traces: epoch µs with ns decimals (19 significant digits), no base time.
    A double cannot hold them, so such files are parsed again with `ts` kept as text."""
    if base_time_ns is not None:
        return False
    for event in events:
        ts = event.ts
        if ts is not None and ts > 1e15 and ts != int(ts):
            return True
    return False


_INTEGER = re.compile(r"[+-]?[0-9]+")


def _as_int(value: Id) -> int | None:
    """A pid or tid as read_json.sql's TRY_CAST reads it: an integer, also when written as a
    string ("tid": "1441273664", 2021), else None (and an integer beyond BIGINT is None)."""
    if value.__class__ is str and _INTEGER.fullmatch(value):
        value = int(value)
    return value if value.__class__ is int and -(1 << 63) <= value < (1 << 63) else None


def _to_batch(events: list[Event], exact: bool) -> pa.RecordBatch:
    """Events that become warehouse rows, as Arrow columns."""
    kept = [e for e in events
            if (e.ph not in SKIPPED_PHASES or e.name == "[memory]") and e.cat not in SKIPPED_CATEGORIES and e.ts is not None]
    text_ts = [bytes(e.ts).decode() for e in kept] if exact else None
    columns = {
        "cat": [e.cat for e in kept],
        "name": [e.name for e in kept],
        "pid": [_as_int(e.pid) for e in kept],
        "tid": [_as_int(e.tid) for e in kept],
        "tid_text": [e.tid if e.tid.__class__ is str else None for e in kept],
        "ts": [float(t) for t in text_ts] if exact else [e.ts for e in kept],
        "ts_text": text_ts if exact else [None] * len(kept),
        "dur": [e.dur for e in kept],
        "args": [bytes(e.args).decode("utf-8", "replace") if e.args else None for e in kept],
    }
    import pyarrow as pa

    return pa.RecordBatch.from_pydict(
        {name: pa.array(values, schema().field(name).type) for name, values in columns.items()},
        schema=schema())


def _decoded(trace: Trace, repairs: list[str]) -> Decoded:
    trace.traceEvents = []
    return Decoded(trace, repairs)


def trace_metadata(trace: Trace, repairs: list[str]) -> dict:
    out = {key: getattr(trace, key) for key in (
        "schemaVersion", "displayTimeUnit", "trace_id", "host_name", "cupti_version",
        "cuda_runtime_version", "cuda_driver_version", "baseTimeNanoseconds")}
    for key in ("distributedInfo", "deviceProperties"):
        raw = getattr(trace, key)  # kept raw by the decoder, so not yet checked
        try:
            out[key] = msgspec.json.decode(raw) if raw else None
        except UnicodeDecodeError:
            out[key] = msgspec.json.decode(bytes(raw).decode("utf-8", "replace"))
            repairs.append(f"invalid UTF-8 in {key} replaced")
    return {key: value for key, value in out.items() if value is not None}


@dataclass
class Cut:
    trace: Trace            # the top-level keys, with an empty traceEvents
    events_file: Path       # a temporary file holding just the events array
    temporary: list[Path]

    def remove(self) -> None:
        for path in self.temporary:
            path.unlink(missing_ok=True)


_TAIL_BYTES = 4 << 20
_EXACT_TS = re.compile(rb'"ts"\s*:\s*[0-9]{16,}\.[0-9]')


def cut_events(path: Path) -> Cut | None:
    """The traceEvents array cut out into a temporary file, with the rest of the document
    decoded; None when that cannot be done safely (the Python decoder then decides)."""
    import os

    temporary: list[Path] = []
    try:
        source = path
        with path.open("rb") as handle:
            gzipped = handle.read(2) == b"\x1f\x8b"
        if gzipped:  # gunzip once to a temporary file; DuckDB reads plain JSON fastest
            fd, source = scratch_file("gunzipped")
            temporary.append(source)
            with os.fdopen(fd, "wb") as out:
                for block in _blocks(path):
                    out.write(block)
        size = source.stat().st_size
        with source.open("rb") as handle:
            head = handle.read(_TAIL_BYTES)
            handle.seek(max(0, size - _TAIL_BYTES))
            tail_start = handle.tell()
            tail = handle.read()
        key = head.find(b'"traceEvents"')
        array_open = head.find(b"[", key) if key >= 0 else -1
        if array_open < 0 or head.lstrip()[:1] != b"{":
            raise LookupError
        header = head[: array_open + 1]
        if b'"baseTimeNanoseconds"' not in header and _EXACT_TS.search(head):
            raise LookupError  # 19-digit timestamps: only the exact Python path keeps them
        trace, array_close = _close_of_events(header, tail, tail_start)
        if array_close <= array_open:
            raise LookupError
        fd, events_file = scratch_file("events")
        temporary.append(events_file)
        with source.open("rb") as src, os.fdopen(fd, "wb") as dst:
            _copy_range(src, dst, array_open, array_close + 1 - array_open)
        if gzipped:
            source.unlink()
            temporary.remove(source)
        return Cut(trace, events_file, temporary)
    except BaseException as exc:
        for temp in temporary:
            temp.unlink(missing_ok=True)
        if isinstance(exc, (LookupError, OSError, *_UNDECODABLE)):
            return None  # the Python decoder repairs or explains
        raise  # a bad gzip, a bomb: the Python decoder would only say so again


def _close_of_events(header: bytes, tail: bytes, tail_start: int) -> tuple[Trace, int]:
    """The position of the "]" closing traceEvents: the last "]" after which the document,
    with the events left out, still decodes. Also returns that decoded document."""
    decoder = _DECODERS[(False, False)]
    position = len(tail)
    while True:
        position = tail.rfind(b"]", 0, position)
        if position < 0:
            raise LookupError("no end of traceEvents in the last bytes")
        before = tail[:position].rstrip()
        if before.endswith((b"}", b"[")):
            try:
                return decoder.decode(header + tail[position:]), tail_start + position
            except _UNDECODABLE:
                pass


def _copy_range(src, dst, offset: int, count: int) -> None:
    """Copy bytes between files in the kernel when it can (copy_file_range), else in blocks."""
    import os

    try:
        while count > 0:
            done = os.copy_file_range(src.fileno(), dst.fileno(), count, offset)
            if done == 0:
                break
            offset, count = offset + done, count - done
        return
    except (AttributeError, OSError):
        pass
    src.seek(offset)
    while count > 0:
        block = src.read(min(count, _BLOCK_BYTES))
        if not block:
            break
        dst.write(block)
        count -= len(block)
