-- uses: none
-- Allocator events, one row per allocation (bytes > 0) or free (bytes < 0): Kineto [memory]
-- events, and nsys CUDA memory usage (--cuda-memory-usage=true: cudaMalloc, cudaFree; pinned host
-- memory as device CPU -1; no totals). Numbered in time order per source file and device (event_no). allocated / reserved are the
-- totals after the event: the source's own (derived = false), else a running sum of bytes raised
-- by its lowest dip, the least the device held when the trace began (derived = true; never
-- negative). freed_no: the event_no of an allocation's free (NULL: not freed in the trace).
-- unpaired: a free whose address was not allocated before it in the trace (its allocation
-- predates the trace), or an allocation the trace never frees (cut, or still live); NULL
-- without addresses (PyTorch before 1.10). cpu_op_id, nvtx_range_id: what made the event, the
-- innermost CPU op and NVTX push/pop range or user annotation on its thread at its time, by the
-- rule of those views' trees (an op that ends as the event happens does not hold it; one that
-- starts then does). nsys: the thread of the CUDA call that made the event (NULL when the export
-- does not link them); nsys has no CPU ops (autograd-nvtx ops are NVTX ranges): cpu_op_id NULL.
-- Worked out at ingest: sql/ingest/memory_totals.sql.
CREATE OR REPLACE VIEW memory_events AS
SELECT
    run_id,
    rank,
    file_id,
    event_no,
    pid,
    tid,
    start_ns,
    device_type,
    device_id,
    address,
    bytes,
    allocated,
    reserved,
    derived,
    freed_no,
    unpaired,
    iteration,
    cpu_op_id,        -- cpu_ops.op_id (NULL: no op held the event)
    nvtx_range_id     -- nvtx_ranges.range_id of the same file_id (NULL: no range held it)
FROM store.memory_events;
