-- 0001: the stored tables that ingest writes.
-- Public names live in sql/views/; these tables sit in schema `store` and are an implementation
-- detail. Every event row carries file_id so a source can be removed or re-ingested exactly.
-- All times are UTC epoch nanoseconds (or session-relative ns when a source has no UTC anchor:
-- see store.sources.has_utc).

CREATE SCHEMA IF NOT EXISTS store;

CREATE SEQUENCE store.file_id_seq START 1;

-- One training job.
CREATE TABLE store.runs (
    run_id        VARCHAR NOT NULL,   -- the run's name: --run, workload card dir, or parent dir
    root          VARCHAR,            -- directory the run was discovered in
    description   VARCHAR,
    batch_size    BIGINT,             -- global batch size (workload card)
    seq_len       BIGINT,             -- sequence length (workload card)
    gpus_per_node INTEGER,
    metadata      VARCHAR,            -- JSON: workload card and distributed info, whole
    created_at    TIMESTAMP NOT NULL  -- UTC
);

-- One ingested file. A file is the unit of atomicity: all its rows or none.
CREATE TABLE store.sources (
    file_id         BIGINT NOT NULL,
    run_id          VARCHAR NOT NULL,
    path            VARCHAR NOT NULL,  -- absolute path at ingest time
    sha256          VARCHAR NOT NULL,  -- content hash: the idempotency key
    format          VARCHAR NOT NULL,  -- 'nsys-sqlite' | 'kineto-json'
    tool_version    VARCHAR,           -- e.g. nsys 2026.2.1.210
    schema_version  VARCHAR,           -- e.g. nsys export schema 3.25.0
    bytes           BIGINT NOT NULL,
    rows            BIGINT NOT NULL,   -- event rows stored for this file, all tables
    has_utc         BOOLEAN NOT NULL,  -- false: times are session-relative ns (2021 nsys)
    origin_ns       BIGINT,            -- UTC ns of the source's time zero (nsys session start)
    host            VARCHAR,
    warnings        VARCHAR,
    ingested_at     TIMESTAMP NOT NULL  -- UTC
);

-- One rank (process) of a run, and where its rank number came from.
CREATE TABLE store.ranks (
    run_id      VARCHAR NOT NULL,
    rank        INTEGER NOT NULL,
    file_id     BIGINT NOT NULL,
    pid         BIGINT,              -- OS process id
    process_key BIGINT,              -- source-specific process key (nsys globalPid)
    host        VARCHAR,
    device_id   INTEGER,             -- GPU the rank's kernels ran on
    world_size  INTEGER,
    backend     VARCHAR,             -- nccl, gloo, ...
    rank_source VARCHAR NOT NULL     -- rank-map | nccl | mpi | env | distributedInfo | filename | process-order | default
);

CREATE TABLE store.devices (
    run_id       VARCHAR NOT NULL,
    rank         INTEGER,
    file_id      BIGINT NOT NULL,
    device_id    INTEGER NOT NULL,
    name         VARCHAR,
    sm_count     INTEGER,
    total_memory BIGINT,             -- bytes
    compute_capability VARCHAR,
    bus_location VARCHAR,
    uuid         VARCHAR
);

CREATE TABLE store.kernels (
    run_id         VARCHAR NOT NULL,
    rank           INTEGER NOT NULL,
    file_id        BIGINT NOT NULL,
    pid            BIGINT,
    device_id      INTEGER,
    context_id     BIGINT,
    stream_id      BIGINT,
    start_ns       BIGINT NOT NULL,
    end_ns         BIGINT NOT NULL,
    name           VARCHAR NOT NULL,   -- demangled name (nsys stats default)
    short_name     VARCHAR,            -- base name
    correlation_id BIGINT,
    grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
    block_x INTEGER, block_y INTEGER, block_z INTEGER,
    registers_per_thread INTEGER,
    static_smem_bytes    BIGINT,
    dynamic_smem_bytes   BIGINT,
    graph_node_id        BIGINT,
    iteration            INTEGER      -- iteration of the CPU call that launched it
);

CREATE TABLE store.memcpy (
    run_id         VARCHAR NOT NULL,
    rank           INTEGER NOT NULL,
    file_id        BIGINT NOT NULL,
    pid            BIGINT,
    device_id      INTEGER,
    context_id     BIGINT,
    stream_id      BIGINT,
    start_ns       BIGINT NOT NULL,
    end_ns         BIGINT NOT NULL,
    correlation_id BIGINT,
    bytes          BIGINT,
    copy_kind      VARCHAR,           -- HtoD, DtoH, DtoD, HtoH, PtoP, ...
    src_kind       VARCHAR,           -- Pageable, Pinned, Device, ...
    dst_kind       VARCHAR,
    iteration      INTEGER
);

CREATE TABLE store.memset (
    run_id         VARCHAR NOT NULL,
    rank           INTEGER NOT NULL,
    file_id        BIGINT NOT NULL,
    pid            BIGINT,
    device_id      INTEGER,
    context_id     BIGINT,
    stream_id      BIGINT,
    start_ns       BIGINT NOT NULL,
    end_ns         BIGINT NOT NULL,
    correlation_id BIGINT,
    bytes          BIGINT,
    value          BIGINT,
    mem_kind       VARCHAR,
    iteration      INTEGER
);

CREATE TABLE store.cuda_api (
    run_id         VARCHAR NOT NULL,
    rank           INTEGER NOT NULL,
    file_id        BIGINT NOT NULL,
    pid            BIGINT,
    tid            BIGINT,
    start_ns       BIGINT NOT NULL,
    end_ns         BIGINT NOT NULL,
    name           VARCHAR NOT NULL,  -- without the _vNNNN suffix
    api_kind       VARCHAR,           -- runtime | driver
    correlation_id BIGINT,
    return_value   BIGINT,
    iteration      INTEGER
);

CREATE TABLE store.cpu_ops (
    run_id         VARCHAR NOT NULL,
    rank           INTEGER NOT NULL,
    file_id        BIGINT NOT NULL,
    pid            BIGINT,
    tid            BIGINT,
    start_ns       BIGINT NOT NULL,
    end_ns         BIGINT NOT NULL,
    name           VARCHAR NOT NULL,
    category       VARCHAR,
    correlation_id BIGINT,
    external_id    BIGINT,
    args           VARCHAR,           -- JSON
    iteration      INTEGER
);

CREATE TABLE store.nvtx_ranges (
    run_id     VARCHAR NOT NULL,
    rank       INTEGER NOT NULL,
    file_id    BIGINT NOT NULL,
    range_id   BIGINT NOT NULL,      -- unique within file_id (nsys: NVTX_EVENTS rowid)
    pid        BIGINT,
    tid        BIGINT,
    start_ns   BIGINT NOT NULL,
    end_ns     BIGINT,               -- NULL for marks
    domain     VARCHAR,
    name       VARCHAR,
    kind       VARCHAR NOT NULL,     -- push_pop | start_end | mark | annotation | gpu_annotation
    depth      INTEGER,              -- 0 = outermost on its thread
    parent_id  BIGINT,               -- range_id of the tightest enclosing range on the thread
    category   BIGINT,
    color      BIGINT,
    payload    VARCHAR
);

CREATE TABLE store.nccl_ops (
    run_id         VARCHAR NOT NULL,
    rank           INTEGER NOT NULL,
    file_id        BIGINT NOT NULL,
    pid            BIGINT,
    device_id      INTEGER,
    stream_id      BIGINT,
    start_ns       BIGINT NOT NULL,  -- the GPU kernel's times
    end_ns         BIGINT NOT NULL,
    correlation_id BIGINT,
    collective     VARCHAR NOT NULL, -- AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll, Send, Recv, SendRecv
    algorithm      VARCHAR,
    protocol       VARCHAR,
    dtype          VARCHAR,
    reduce_op      VARCHAR,
    in_bytes       BIGINT,
    out_bytes      BIGINT,
    full_bytes     BIGINT,           -- nccl-tests size
    group_size     INTEGER,
    pg_name        VARCHAR,
    pg_desc        VARCHAR,
    pg_ranks       VARCHAR,
    seq            BIGINT,
    comm_id        VARCHAR,
    peer           INTEGER,
    op_key         VARCHAR,          -- equal across ranks for the same collective
    kernel_name    VARCHAR,
    api_name       VARCHAR,          -- NCCL API range that launched it (nsys)
    collective_source VARCHAR NOT NULL, -- nvtx | args | kernel_name
    iteration      INTEGER
);

-- Key/value facts about the warehouse itself (tracewh version, views checksum).
CREATE TABLE store.meta (
    key   VARCHAR NOT NULL,
    value VARCHAR
);
