-- CUDA memory usage (nsys profile --cuda-memory-usage=true) -> temp table _memory_raw, the shape
-- Kineto's [memory] events take (kineto/60_memory.sql); sql/ingest/memory_totals.sql then stages
-- it (_staged_memory_events) and store.sql stores it. CUDA_GPU_MEMORY_USAGE_EVENTS holds one row per allocation
-- (memoryOperationType 0) or free (1) with unsigned bytes and the address; correlationId (the
-- CUDA call that made it, hence its thread) and the memory-pool columns came later, so they may
-- be NULL. memKind 0 (pageable) and 1 (pinned) are host memory: device CPU, id -1, as Kineto.
-- The export gives no totals: memory_totals.sql derives them per device (derived = true).
-- CUDA_GPU_MEMORY_POOL_EVENTS (pool created, trimmed, destroyed) are not allocations: not read.
-- iteration: the host step (NVTX range) holding the event, as the API call that made it.
-- nsys has no CPU ops (PyTorch's autograd-nvtx ops are NVTX ranges): _memory_ops is empty and
-- the op an event's call ran under is its NVTX range, the innermost push/pop range on the call's
-- thread (_memory_ranges; memory_totals.sql finds it).
CREATE OR REPLACE TEMP TABLE _memory_raw AS
SELECT m.file_key, m.order_no, m.pid, l.tid, m.start_ns,
       CASE WHEN m.memKind IN (0, 1) THEN 'CPU' ELSE 'GPU' END AS device_type,
       CASE WHEN m.memKind IN (0, 1) THEN -1 ELSE m.deviceId END AS device_id,
       m.address,
       CASE WHEN m.memoryOperationType = 1 THEN -m.bytes ELSE m.bytes END AS bytes,
       CAST(NULL AS BIGINT) AS total_allocated, CAST(NULL AS BIGINT) AS total_reserved,
       CASE WHEN m.start_ns < i.end_ns THEN i.iteration END AS iteration
-- order_no: the export's row id (staged as column rowid), unique across a batch's files
FROM (SELECT m.*, m.file_key * 4294967296 + m.rowid AS order_no, p.pid, m.start + f.origin_ns AS start_ns
      FROM _nsys_memory m
      JOIN _nsys_processes p ON p.file_key = m.file_key AND p.pid = (m.globalPid >> 24) & 16777215
      JOIN _nsys_files f ON f.file_key = m.file_key
      WHERE m.memoryOperationType IN (0, 1) AND m.bytes IS NOT NULL) m
LEFT JOIN _launches l ON l.file_key = m.file_key AND l.pid = m.pid AND l.correlation_id = m.correlationId
ASOF LEFT JOIN _iterations i ON i.file_key = m.file_key AND i.pid = m.pid AND m.start_ns >= i.start_ns;

CREATE OR REPLACE TEMP VIEW _memory_ops AS
SELECT file_key, range_id, tid, start_ns, end_ns FROM _nsys_store_nvtx_ranges WHERE false;

CREATE OR REPLACE TEMP VIEW _memory_ranges AS
SELECT file_key, range_id, tid, start_ns, end_ns FROM _nsys_store_nvtx_ranges WHERE kind = 'push_pop';
