"""Decode an Nsight Systems SQLite export into DuckDB staging tables.

nsys creates tables lazily and its columns changed across versions (reference/nsys_schema.md),
so every table is probed: a missing table stages as empty, a missing column as NULL. The big
tables are streamed through the ADBC SQLite driver as Arrow batches into temp tables, which
sql/ingest/nsys/ maps to the warehouse model (all joins live there) on the decoding thread; the
writer then only numbers the ranks and stores the mapped rows (store.sql). A small export is read
into Arrow tables instead, held until the writer stages and maps it with others at once
(tracewh.ingest).
"""

from __future__ import annotations

import itertools
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import duckdb

from ..errors import IngestError
from ..resources import sql_dir
from ..sqlscript import run_script
from ..store.catalog import run_catalog_script
from . import nvtx_payload
from .discover import RankRule, rank_from_filename, rank_from_map
from .ranks import claim, taken_ranks
from .source import SourceFacts, fault_warnings

INT, TEXT, REAL = "BIGINT", "VARCHAR", "DOUBLE"

# staging name -> (nsys table, {column: DuckDB type}); only what the warehouse model uses.
_GPU_COMMON = {
    "start": INT, "end": INT, "deviceId": INT, "contextId": INT, "streamId": INT,
    "correlationId": INT, "globalPid": INT,
}
TABLES: dict[str, tuple[str, dict[str, str]]] = {
    "strings": ("StringIds", {"id": INT, "value": TEXT}),
    "kernel": ("CUPTI_ACTIVITY_KIND_KERNEL", {
        **_GPU_COMMON, "demangledName": INT, "shortName": INT,
        "gridX": INT, "gridY": INT, "gridZ": INT, "blockX": INT, "blockY": INT, "blockZ": INT,
        "registersPerThread": INT, "staticSharedMemory": INT, "dynamicSharedMemory": INT,
        "graphNodeId": INT,
    }),
    "memcpy": ("CUPTI_ACTIVITY_KIND_MEMCPY", {
        **_GPU_COMMON, "bytes": INT, "copyKind": INT, "srcKind": INT, "dstKind": INT,
    }),
    "memset": ("CUPTI_ACTIVITY_KIND_MEMSET", {
        **_GPU_COMMON, "value": INT, "bytes": INT, "memKind": INT,
    }),
    "runtime": ("CUPTI_ACTIVITY_KIND_RUNTIME", {
        "start": INT, "end": INT, "eventClass": INT, "globalTid": INT, "correlationId": INT,
        "nameId": INT, "returnValue": INT,
    }),
    "nvtx": ("NVTX_EVENTS", {
        "rowid": INT, "start": INT, "end": INT, "eventType": INT, "category": INT, "color": INT,
        "text": TEXT, "globalTid": INT, "textId": INT, "domainId": INT,
    }),
    "sync": ("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", {
        **_GPU_COMMON, "syncType": INT,
    }),
    "osrt": ("OSRT_API", {
        "start": INT, "end": INT, "globalTid": INT, "nameId": INT, "returnValue": INT,
        "nestingLevel": INT,
    }),
    # nsys profile --cuda-memory-usage=true (sql/ingest/nsys/35_memory.sql)
    "memory": ("CUDA_GPU_MEMORY_USAGE_EVENTS", {
        "rowid": INT, "start": INT, "globalPid": INT, "deviceId": INT, "address": INT, "bytes": INT,
        "memKind": INT, "memoryOperationType": INT, "correlationId": INT,
    }),
    # hardware counters (sql/ingest/nsys/36_counters.sql): --gpu-metrics-devices, --nic-metrics
    "gpu_metrics": ("GPU_METRICS", {"timestamp": INT, "typeId": INT, "metricId": INT, "value": REAL}),
    "gpu_metric_names": ("TARGET_INFO_GPU_METRICS", {"typeId": INT, "metricId": INT, "metricName": TEXT}),
    "nic_metrics": ("NET_NIC_METRIC", {
        "start": INT, "end": INT, "globalId": INT, "portId": INT, "metricsListId": INT,
        "metricsIdx": INT, "value": REAL,
    }),
    "nic_metric_names": ("TARGET_INFO_NETWORK_METRICS", {
        "metricsListId": INT, "metricsIdx": INT, "name": TEXT, "unit": TEXT,
    }),
    "nic_ids": ("NIC_ID_MAP", {"nicId": INT, "globalId": INT}),
    "nics": ("TARGET_INFO_NIC_INFO", {"nicId": INT, "name": TEXT, "linkLayer": INT}),
    "gpu": ("TARGET_INFO_GPU", {
        "id": INT, "name": TEXT, "busLocation": TEXT, "totalMemory": INT, "smCount": INT,
        "computeMajor": INT, "computeMinor": INT, "uuid": TEXT,
    }),
}
# Tables whose presence marks a file as an nsys export (the 2021 export has only some).
# Columns without which a table's rows cannot be stored (times are NOT NULL in the warehouse).
_REQUIRED = {"kernel": ("start", "end"), "memcpy": ("start", "end"), "memset": ("start", "end"),
             "runtime": ("start", "end"), "nvtx": ("start",), "strings": ("id", "value"),
             "sync": ("start", "end"), "osrt": ("start", "end"),
             "memory": ("start", "globalPid", "bytes", "memoryOperationType"),
             "gpu_metrics": ("timestamp", "typeId", "metricId", "value"),
             "nic_metrics": ("start", "end", "globalId", "metricsListId", "metricsIdx", "value")}
_NSYS_MARKERS = {"StringIds", "CUPTI_ACTIVITY_KIND_RUNTIME", "ThreadNames", "TARGET_INFO_GPU"}
_ENV_RANK = re.compile(r"(?:^|[;\s])(?:RANK|SLURM_PROCID|OMPI_COMM_WORLD_RANK|PMI_RANK|PMIX_RANK)=(\d+)")


@dataclass
class ExportInfo:
    """What the small metadata tables of one export say."""

    tables: set[str]
    product_version: str | None = None
    schema_version: str | None = None
    utc_epoch_ns: int | None = None  # the session start (TARGET_INFO_SESSION_START_TIME)
    time_shift_ns: int = 0  # what nsys export added to every session-relative time
    time_normalized: bool = False  # nsys export --ts-normalize: times are already UTC epoch ns
    include_blobs: bool = True  # nsys export --include-blobs: NVTX payload blobs (NCCL sizes)
    host: str | None = None
    env_rank: int | None = None
    mpi_ranks: dict[int, int] = field(default_factory=dict)  # OS pid -> rank
    warnings: list[str] = field(default_factory=list)
    staged: dict | None = None  # a small export's tables: name -> Arrow table (read_small)
    payloads: object = None  # decoded NCCL payloads, an Arrow table (nvtx_payload.read) or None

    @property
    def tool_version(self) -> str:
        return self.product_version or "unknown (<2022)"

    @property
    def origin_ns(self) -> int:
        """UTC epoch ns of the session start, the source's time zero (0 when there is no anchor:
        times stay session-relative)."""
        return self.utc_epoch_ns or 0

    @property
    def raw_to_utc_ns(self) -> int:
        """What to add to the export's event times to get UTC epoch ns (session-relative times
        of an export without anchor stay as they are)."""
        if self.utc_epoch_ns is None:
            return 0
        return self.utc_epoch_ns - self.time_shift_ns

    @property
    def time_base(self) -> str:
        """How the export's times became UTC, in words (store.sources.time_base)."""
        if self.utc_epoch_ns is None:
            return "session-relative ns (no UTC anchor)"
        shift = self.time_shift_ns - (self.utc_epoch_ns if self.time_normalized else 0)
        base = "UTC ns as exported (--ts-normalize)" if self.time_normalized else \
            "session start + session-relative ns"
        return base + (f", less the export's shift of {shift} ns" if shift else "")


def read_export_info(path: Path) -> ExportInfo:
    """Probe the file: an SQLite database, written by nsys, and what its metadata says."""
    try:
        con = sqlite3.connect(f"{_uri(path)}?mode=ro", uri=True)
        try:
            # a table some tool replaced by a view of the same name reads the same
            tables = {r[0] for r in con.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
            info = _export_info(con, tables)
            if "NVTX_EVENTS" in tables and nvtx_payload.payload_tables(
                    tables, {r[1] for r in con.execute("PRAGMA table_info(NVTX_EVENTS)")},
                    info.include_blobs):
                info.payloads = nvtx_payload.read(con, info.warnings)
            return info
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        raise IngestError(path, f"not a readable SQLite database ({exc})",
                          "re-export it with 'nsys export --type sqlite'") from None


def _export_info(con: sqlite3.Connection, tables: set[str]) -> ExportInfo:
    if "StringIds" not in tables or not tables & (_NSYS_MARKERS - {"StringIds"}):
        raise IngestError("", "an SQLite database but not an Nsight Systems export (no StringIds "
                          "or CUPTI tables)", "give 'nsys export --type sqlite' output")
    info = ExportInfo(tables=tables)
    meta = {}
    for table in ("META_DATA_EXPORT", "EXPORT_META_DATA"):  # renamed in 2023.3
        if table in tables:
            meta.update(dict(con.execute(f'SELECT name, value FROM "{table}"').fetchall()))
    info.product_version = meta.get("EXPORT_PRODUCT_VERSION")
    info.schema_version = meta.get("EXPORT_SCHEMA_VERSION")
    info.time_normalized = meta.get("EXPORT_PARAM_TIME_NORMALIZE", "false").lower() == "true"
    info.include_blobs = meta.get("EXPORT_PARAM_INCLUDE_BLOBS", "true").lower() != "false"
    if "TARGET_INFO_SESSION_START_TIME" in tables:
        row = con.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()
        info.utc_epoch_ns = row[0] if row else None
    _read_time_shift(info, meta)
    if info.utc_epoch_ns is None:
        info.warnings.append("no UTC anchor (TARGET_INFO_SESSION_START_TIME): times are "
                             "session-relative ns")
    env = []
    if "TARGET_INFO_SYSTEM_ENV" in tables:
        rows = dict(con.execute(
            "SELECT name, value FROM TARGET_INFO_SYSTEM_ENV WHERE name IN "
            "('Hostname', 'DeviceEnvironment')").fetchall())
        info.host = rows.get("Hostname")
        env.append(rows.get("DeviceEnvironment") or "")
    if "META_DATA_CAPTURE" in tables:
        env += [v for (v,) in con.execute(
            "SELECT value FROM META_DATA_CAPTURE WHERE name LIKE '%ENVIRONMENT_VARIABLE'")]
    for text in env:
        match = _ENV_RANK.search(text)
        if match:
            info.env_rank = int(match.group(1))
            break
    if "MPI_RANKS" in tables:
        info.mpi_ranks = {
            pid: rank for pid, rank in con.execute(
                "SELECT (globalTid >> 24) & 16777215, rank FROM MPI_RANKS")
        }
    return info


def _read_time_shift(info: ExportInfo, meta: dict[str, str]) -> None:
    """The shift nsys export added to every session-relative time: EXPORT_CONFIG_TIME_SHIFT
    (the session start when normalised, plus --ts-shift), else what the parameters imply. A
    normalised export without TARGET_INFO_SESSION_START_TIME still has its anchor: the shift."""
    param = _integer(meta.get("EXPORT_PARAM_TIME_SHIFT")) or 0
    config = _integer(meta.get("EXPORT_CONFIG_TIME_SHIFT"))
    if info.utc_epoch_ns is None and info.time_normalized and config is not None:
        info.utc_epoch_ns = config - param
    implied = ((info.utc_epoch_ns or 0) if info.time_normalized else 0) + param
    info.time_shift_ns = implied if config is None else config


def _integer(text: str | None) -> int | None:
    return int(text) if text is not None and text.strip().lstrip("-").isdigit() else None


# An export up to this size is read into Arrow and written in a batch with others (one
# transaction and one run of the mapping SQL for them all); a bigger one is streamed into temp
# tables and written alone, its memory bounded. CPU per file of the whole ingest, batched against
# streamed (generated exports, 2 runs each): 0.5 MB 35-61 against 181-188 ms; 8 MB 470-531
# against 523-532 ms; 31 MB 1684 against 1556 ms. Batches hold the small ones (tracewh.ingest).
SMALL_FILE_BYTES = 4 << 20


def _create_staging(con: duckdb.DuckDBPyConnection, name: str) -> str:
    """The empty temp table _nsys_<name>: the file's key, then the columns of TABLES."""
    ddl = ", ".join(f'"{c}" {t}' for c, t in TABLES[name][1].items())
    con.execute(f"CREATE OR REPLACE TEMP TABLE _nsys_{name} (file_key BIGINT, {ddl})")
    return f"_nsys_{name}"


def _read_tables(path: Path, info: ExportInfo):
    """(name, Arrow record batches) of each table of TABLES the file has; the batches start with
    a typing sentinel row marked _real = 0 (see _typed_select)."""
    import adbc_driver_sqlite.dbapi as adbc  # heavy (~50 MB): only when an nsys file comes

    reader = adbc.connect(f"{_uri(path)}?mode=ro")
    try:
        for name, (table, columns) in TABLES.items():
            if table not in info.tables:
                continue
            present = _columns(reader, table)
            missing = [c for c in _REQUIRED.get(name, ()) if c not in present]
            if missing:
                raise IngestError(path, f"{table} has no column {', '.join(missing)} (renamed or "
                                  "dropped?)", "re-export it with 'nsys export --type sqlite'")
            select = ", ".join(
                f'"{c}"' if c in present or c == "rowid" else f"NULL AS \"{c}\"" for c in columns
            )
            cursor = reader.cursor()
            try:
                cursor.execute(_typed_select(table, select, columns))
                yield name, _valid_utf8(cursor.fetch_record_batch(), table, info.warnings)
            finally:
                cursor.close()
    except (adbc.Error, duckdb.Error) as exc:
        raise IngestError(path, f"cannot read the export: {_first_line(exc)}",
                          "the file may be truncated or corrupt; re-export it") from None
    finally:
        reader.close()


def stage(con: duckdb.DuckDBPyConnection, path: Path, info: ExportInfo) -> None:
    """Create temp tables _nsys_<name> holding the columns of TABLES, from the file (file_key 0),
    and map them (map_staged)."""
    for name in TABLES:
        _create_staging(con, name)
    for name, batches in _read_tables(path, info):
        con.register("_nsys_batches", batches)
        # Drop the typing sentinel row (see _typed_select).
        con.execute(f"INSERT INTO _nsys_{name} "
                    "SELECT 0, * EXCLUDE (_real) FROM _nsys_batches WHERE _real = 1")
        con.unregister("_nsys_batches")
    _stage_payloads(con, [(0, info)])
    map_staged(con, [(0, info)])


# What map_staged keeps for the writer (store.sql); every other temp table and view it drops.
_MAPPED = {"_nsys_processes", "_nsys_files", "_nsys_gpu", "_staged_memory_events"}


def map_staged(con: duckdb.DuckDBPyConnection, exports: list[tuple[int, ExportInfo]]) -> None:
    """Map the staged exports (file_key, info) into the temp tables _nsys_store_<stored table>
    and _nsys_processes (sql/ingest/nsys/); free the rest."""
    con.execute("CREATE OR REPLACE TEMP TABLE _nsys_files (file_key BIGINT, origin_ns BIGINT)")
    if exports:  # a batch whose files were all skipped or refused maps nothing
        con.executemany("INSERT INTO _nsys_files VALUES (?, ?)",
                        [(key, info.raw_to_utc_ns) for key, info in exports])
    for script in sorted((sql_dir() / "ingest" / "nsys").glob("[0-9][0-9]_*.sql")):
        run_script(con, script)
    # allocator events: totals and pairing shared with Kineto (_staged_memory_events)
    run_script(con, sql_dir() / "ingest" / "memory_totals.sql")
    infos = dict(exports)
    for key, negative, duplicates in con.execute("FROM _nsys_faults").fetchall():
        infos[key].warnings.extend(fault_warnings(negative, duplicates, "identical in process, "
                                                  "device, stream, times and correlation id"))
    for (name,) in con.execute("SELECT view_name FROM duckdb_views() WHERE temporary").fetchall():
        con.execute(f'DROP VIEW IF EXISTS temp."{name}"')
    for (name,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall():
        if name not in _MAPPED and not name.startswith("_nsys_store_"):
            con.execute(f'DROP TABLE IF EXISTS temp."{name}"')


def read_small(path: Path, info: ExportInfo) -> dict:
    """The file's tables of TABLES as Arrow tables (name -> table), for stage_batch."""
    import pyarrow.compute as pc

    tables = {}
    for name, batches in _read_tables(path, info):
        table = batches.read_all().rename_columns(["_real", *TABLES[name][1]])
        tables[name] = table.filter(pc.equal(table["_real"], 1)).drop_columns(["_real"])
    return tables


def stage_batch(con: duckdb.DuckDBPyConnection, exports: list[tuple[int, ExportInfo]]) -> None:
    """Temp tables _nsys_<name> holding the Arrow tables of small exports (read_small), each
    row with its export's file_key: one statement per table for the whole batch; then mapped
    (map_staged)."""
    import pyarrow as pa

    for name in TABLES:
        target = _create_staging(con, name)
        parts = [table.add_column(0, "file_key", pa.repeat(pa.scalar(key, pa.int64()), len(table)))
                 for key, info in exports if (table := info.staged.get(name)) is not None]
        if parts:
            con.register("_nsys_batches", pa.concat_tables(parts, promote_options="permissive"))
            con.execute(f"INSERT INTO {target} SELECT * FROM _nsys_batches")
            con.unregister("_nsys_batches")
    _stage_payloads(con, exports)
    map_staged(con, exports)


def _stage_payloads(con: duckdb.DuckDBPyConnection, exports: list[tuple[int, ExportInfo]]) -> None:
    """The temp table _nsys_payload: the decoded NCCL payloads of the exports (file_key, then
    nvtx_payload.COLUMNS), empty when none has any."""
    import pyarrow as pa

    columns = ", ".join(f'"{c}" {"UBIGINT" if c == "comm" else INT}' for c in nvtx_payload.COLUMNS)
    con.execute(f"CREATE OR REPLACE TEMP TABLE _nsys_payload (file_key BIGINT, {columns})")
    parts = [t.add_column(0, "file_key", pa.repeat(pa.scalar(key, pa.int64()), len(t)))
             for key, info in exports if (t := info.payloads) is not None]
    if parts:
        con.register("_nsys_batches", pa.concat_tables(parts))
        con.execute("INSERT INTO _nsys_payload SELECT * FROM _nsys_batches")
        con.unregister("_nsys_batches")


def _valid_utf8(batches, table: str, warnings: list[str]):
    """The batches with invalid UTF-8 in text columns replaced by U+FFFD, as Kineto traces are
    repaired (SQLite stores TEXT unchecked; DuckDB refuses it), each repair counted once per
    table in the source's warnings."""
    import pyarrow as pa

    if not any(pa.types.is_string(f.type) for f in batches.schema):
        return batches  # the big tables (kernels, API calls) hold no text: read as before
    repaired = 0

    def checked():
        nonlocal repaired
        for batch in batches:
            for index, column in enumerate(batch.columns):
                if not pa.types.is_string(column.type):
                    continue
                try:
                    column.validate(full=True)
                except pa.ArrowInvalid:
                    raw = column.cast(pa.binary()).to_pylist()
                    text = [None if v is None else v.decode("utf-8", "replace") for v in raw]
                    repaired += sum(v is not None and v.encode() != r for v, r in zip(text, raw))
                    batch = batch.set_column(index, batch.schema.field(index),
                                             pa.array(text, pa.string()))
            yield batch
        if repaired:
            warnings.append(f"repaired: invalid UTF-8 replaced in {repaired:,} {table} value(s)")

    return pa.RecordBatchReader.from_batches(batches.schema, checked())


def _typed_select(table: str, select: str, columns: dict[str, str]) -> str:
    # ADBC types each Arrow column from the first rows it sees, and fails when a TEXT value
    # follows a run of NULLs. A first row of typed dummy values fixes every column's type.
    sentinel = ", ".join({TEXT: "''", REAL: "0.0"}.get(t, "0") for t in columns.values())
    return f'SELECT 0 AS _real, {sentinel} UNION ALL SELECT 1, {select} FROM "{table}"'


def _columns(reader, table: str) -> set[str]:
    cursor = reader.cursor()
    try:
        cursor.execute(f"SELECT name FROM pragma_table_info('{table}')")
        return {row[0] for row in cursor.fetchall()}
    finally:
        cursor.close()


def _uri(path: Path) -> str:
    return "file:" + quote(str(Path(path).resolve()))


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def prepare(con: duckdb.DuckDBPyConnection, path: Path) -> ExportInfo:
    """Read the export's metadata, and its tables: a small export's into Arrow (info.staged), a
    bigger one's into temp tables of `con`, mapped there (stage)."""
    info = read_export_info_named(path)
    if path.stat().st_size <= SMALL_FILE_BYTES:
        info.staged = read_small(path, info)
    else:
        stage(con, path, info)
    return info


def facts(info: ExportInfo) -> SourceFacts:
    """What store.sources records of an export."""
    return SourceFacts("nsys-sqlite", info.tool_version, info.schema_version,
                       info.utc_epoch_ns is not None, info.origin_ns, info.host,
                       list(info.warnings), time_base=info.time_base)


def load(con: duckdb.DuckDBPyConnection, ranks: list[tuple]) -> None:
    """Write mapped exports (map_staged) into the stored tables (inside the caller's
    transaction). `ranks`: rows of _nsys_ranks (rank_rows), each with its file's run_id and
    file_id."""
    con.execute("CREATE OR REPLACE TEMP TABLE _nsys_ranks (file_key BIGINT, pid BIGINT, "
                "global_pid BIGINT, rank INTEGER, rank_source VARCHAR, host VARCHAR, "
                "run_id VARCHAR, file_id BIGINT)")
    con.executemany("INSERT INTO _nsys_ranks VALUES (?, ?, ?, ?, ?, ?, ?, ?)", ranks)
    run_catalog_script(con, sql_dir() / "ingest" / "nsys" / "store.sql")
    for (name,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall():
        if name.startswith("_nsys_") or name in _MAPPED:
            con.execute(f'DROP TABLE IF EXISTS temp."{name}"')


def read_export_info_named(path: Path) -> ExportInfo:
    try:
        return read_export_info(path)
    except IngestError as exc:
        if not exc.path:
            raise IngestError(path, exc.problem, exc.hint) from None
        raise


def rank_rows(con: duckdb.DuckDBPyConnection, exports: list[tuple[int, Path, ExportInfo, str]],
              rules: list[RankRule]) -> tuple[dict[int, list[tuple]], dict[int, IngestError]]:
    """The ranks of mapped exports (file_key, path, info, run_id), in order: file_key -> rows
    (file_key, pid, global pid, rank, rank source, host), or file_key -> the error that leaves
    the file out. One rank per process of _nsys_processes (sql/ingest/nsys/05_processes.sql),
    trusted in the order of DESIGN section 4: --rank-map, the NCCL init payload (nccl_rank),
    MPI_RANKS, RANK= in the captured environment, the file name, process order; a file sees the
    ranks of the files before it."""
    processes: dict[int, list[tuple[int, int, int | None]]] = {}
    for key, pid, global_pid, nccl_rank in con.execute(
            "SELECT file_key, pid, global_pid, nccl_rank FROM _nsys_processes "
            "ORDER BY file_key, pid").fetchall():
        processes.setdefault(key, []).append((pid, global_pid, nccl_rank))
    taken_by_run: dict[str, dict[int, str]] = {}
    rows, errors = {}, {}
    for key, path, info, run_id in exports:
        if run_id not in taken_by_run:
            taken_by_run[run_id] = taken_ranks(con, run_id)
        taken = dict(taken_by_run[run_id])
        try:
            rows[key] = _file_ranks(path, info, run_id, rules, processes.get(key, []), taken)
            taken_by_run[run_id] = taken
        except IngestError as exc:
            errors[key] = exc
    return rows, errors


def _file_ranks(path: Path, info: ExportInfo, run_id: str, rules: list[RankRule],
                processes: list[tuple[int, int, int | None]], taken: dict[int, str]) -> list[tuple]:
    if not processes:
        raise IngestError(path, "empty trace: no kernels, memory operations, CUDA API calls "
                          "or OS runtime calls", "profile with --trace=cuda and export again")
    single = len(processes) == 1
    free = (rank for rank in itertools.count() if rank not in taken)  # lowest free first
    rows = []
    for pid, global_pid, nccl_rank in processes:
        rank, source = rank_from_map(rules, path, pid, single), "rank-map"
        if rank is None and nccl_rank is not None:
            rank, source = nccl_rank, "nccl"
        if rank is None and pid in info.mpi_ranks:
            rank, source = info.mpi_ranks[pid], "mpi"
        if rank is None and single and info.env_rank is not None:
            rank, source = info.env_rank, "env"
        if rank is None and single and rank_from_filename(path) is not None:
            rank, source = rank_from_filename(path), "filename"
        if rank is None:
            rank, source = next(free), "process-order"
        claim(taken, rank, source, path, run_id)
        rows.append((pid, global_pid, rank, source, info.host))
    return rows
