-- uses: none
-- Allocator events, one row per allocation (bytes > 0) or free (bytes < 0): Kineto [memory]
-- events, and nsys CUDA memory usage (--cuda-memory-usage=true: cudaMalloc, cudaFree; pinned host
-- memory as device CPU -1; no totals). Numbered in time order per source file and device (event_no). allocated / reserved are the
-- totals after the event: the source's own (derived = false), else a running sum of bytes raised
-- by its lowest dip, the least the device held when the trace began (derived = true; never
-- negative). freed_no: the event_no of an allocation's free (NULL: not freed in the trace).
-- unpaired: a free whose address was not allocated before it in the trace (its allocation
-- predates the trace), or an allocation the trace never frees (cut, or still live); NULL
-- without addresses (PyTorch before 1.10). Worked out at ingest: sql/ingest/memory_totals.sql.
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
    iteration
FROM store.memory_events;
