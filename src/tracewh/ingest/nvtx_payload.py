"""NVTX extended payloads of an nsys export: NCCL's communicator, message size, reduction, root,
peer and init rank, decoded from NVTX_EVENTS.binaryData by the schemas the export describes.

nsys writes the blobs only with `nsys export --include-blobs=true` (META_DATA_EXPORT
EXPORT_PARAM_INCLUDE_BLOBS). A blob is a 32-byte header of four little-endian u64 (domain id,
schema id, payload size, payload offset from the blob's start; nsys 2026.x, as nsys-ai reads it)
and then the payload: a C struct whose fields NVTX_PAYLOAD_SCHEMA_ENTRIES name, with their type
and byte offset (NULL = 0). Decoding is generic over those entries; only the fields NCCL names
(FIELDS) are kept, one Arrow row per event, which sql/ingest/nsys/ joins to the NVTX ranges.
A blob that does not fit its schema is counted in the source's warnings, never fatal.
"""

from __future__ import annotations

import sqlite3
import struct
from collections import Counter

# NCCL's payload field names (src/include/nvtx_payload_schemas.h) -> staged column
FIELDS = {
    "NCCL communicator ID": "comm", "Message size [bytes]": "bytes", "Reduction operation": "reduce_op",
    "Root": "root", "Peer rank": "peer", "No. of ranks": "nranks", "Rank": "comm_rank",
    "CUDA device": "cuda_device",
}
COLUMNS = ("range_id", "pid", "start", *FIELDS.values())
HEADER = struct.Struct("<QQQQ")
# NVTX_PAYLOAD_ENTRY_TYPE_* (nvToolsExtPayload.h) -> struct format, LP64: CHAR .. ULONGLONG,
# INT8 .. UINT64, SIZE, ADDRESS
_FORMATS = {1: "b", 2: "B", 3: "h", 4: "H", 5: "i", 6: "I", 7: "q", 8: "Q", 9: "q", 10: "Q",
            11: "b", 12: "B", 13: "h", 14: "H", 15: "i", 16: "I", 17: "q", 18: "Q", 22: "Q", 23: "Q"}
# A type id from 2^24 on is a schema the application registered: NCCL's reduction operation is
# an enum (ncclRedOp_t), an int.
_REGISTERED = 1 << 24
_ENUM_FORMAT = "i"


def payload_tables(tables: set[str], nvtx_columns: set[str], include_blobs: bool) -> bool:
    """Whether the export can hold payload blobs worth reading."""
    return (include_blobs and "binaryData" in nvtx_columns
            and {"NVTX_PAYLOAD_SCHEMAS", "NVTX_PAYLOAD_SCHEMA_ENTRIES"} <= tables)


def read(con: sqlite3.Connection, warnings: list[str]):
    """The decoded NCCL payloads of the export open in `con`, as an Arrow table of COLUMNS
    (None when no event carries one); undecodable blobs are counted in `warnings`."""
    import pyarrow as pa

    rows, problems, total = [], Counter(), 0
    try:
        schemas = _schemas(con)
        for rowid, gtid, start, blob in con.execute(
                "SELECT rowid, globalTid, start, binaryData FROM NVTX_EVENTS WHERE binaryData IS NOT NULL"):
            total += 1
            fields, problem = decode(blob, schemas)
            if problem:
                problems[problem] += 1
            elif fields:
                rows.append((rowid, None if gtid is None else (gtid >> 24) & 0xFFFFFF, start,
                             *(fields.get(c) for c in FIELDS.values())))
    except sqlite3.Error as exc:  # a payload table of another layout: the rest of the file loads
        warnings.append(f"NVTX payloads not read ({exc}): NCCL sizes and communicators stay NULL")
        return None
    if problems:
        reasons = "; ".join(f"{n} {why}" for why, n in problems.most_common())
        warnings.append(f"NVTX payloads: {sum(problems.values()):,} of {total:,} blob(s) not "
                        f"decoded ({reasons}): their NCCL sizes and communicators stay NULL")
    if not rows:
        return None
    types = [pa.int64()] * 3 + [pa.uint64()] + [pa.int64()] * (len(FIELDS) - 1)
    columns = list(zip(*rows))
    return pa.table([pa.array(col, t) for col, t in zip(columns, types)], names=list(COLUMNS))


def _schemas(con: sqlite3.Connection) -> dict[tuple[int, int], tuple[int, list]]:
    """(domain id, schema id) -> (payload size, [(column, struct format, offset)]) for the
    entries NCCL names; the export repeats each schema once per registering process."""
    sizes = {(d, s): size for d, s, size in con.execute(
        "SELECT domainId, schemaId, max(payloadSize) FROM NVTX_PAYLOAD_SCHEMAS GROUP BY 1, 2")}
    schemas: dict[tuple[int, int], tuple[int, list]] = {}
    for domain, schema, name, type_id, offset in con.execute(
            'SELECT DISTINCT domainId, schemaId, name, "type", "offset" '
            "FROM NVTX_PAYLOAD_SCHEMA_ENTRIES ORDER BY domainId, schemaId, idx"):
        fmt = _ENUM_FORMAT if (type_id or 0) >= _REGISTERED else _FORMATS.get(type_id)
        key = (domain, schema)
        entries = schemas.setdefault(key, (sizes.get(key) or 0, []))[1]
        if name in FIELDS and fmt:
            entries.append((FIELDS[name], "<" + fmt, offset or 0))
    return schemas


def decode(blob, schemas: dict[tuple[int, int], tuple[int, list]]) -> tuple[dict, str | None]:
    """(NCCL fields of one blob, None) or ({}, what is wrong with it)."""
    if isinstance(blob, str):  # declared TEXT: a tool may have written it as hex
        try:
            blob = bytes.fromhex(blob)
        except ValueError:
            return {}, "text, not binary"
    if not isinstance(blob, bytes):
        return {}, "numbers, not binary"
    if len(blob) < HEADER.size:
        return {}, f"shorter than the {HEADER.size}-byte header"
    domain, schema, size, offset = HEADER.unpack_from(blob)
    found = schemas.get((domain, schema)) or next(
        (v for (d, s), v in schemas.items() if s == schema), None)
    if found is None:
        return {}, "of a schema the export does not describe"
    declared, entries = found
    size = size or declared
    if offset < HEADER.size or offset + size > len(blob):
        return {}, "cut short of their payload"
    fields = {}
    for column, fmt, at in entries:
        width = struct.calcsize(fmt)
        if at + width > size:
            return {}, "with a field past the payload's end"
        fields[column] = struct.unpack_from(fmt, blob, offset + at)[0]
    return fields, None

