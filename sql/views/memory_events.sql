-- Allocator events, one row per allocation (bytes > 0) or free (bytes < 0) on a device, in time
-- order per (run, rank, device). allocated / reserved are the totals after the event: the
-- source's own where it gives them (derived = false), else a running sum of bytes (derived =
-- true). A trace starts with memory already allocated, so a running sum can dip below zero when
-- that memory is freed: it is raised by its lowest dip, the least the device must have held at
-- the start, and so is never negative.
-- unpaired: a free whose address was not allocated before it in the trace (its allocation
-- predates the trace), or an allocation never freed in the trace (the trace was cut, or the
-- memory was still live); NULL without addresses (PyTorch before 1.10).
CREATE OR REPLACE VIEW memory_events AS
WITH ordered AS (
    SELECT *,
           sum(bytes) OVER (PARTITION BY run_id, rank, device_type, device_id
                            ORDER BY start_ns, file_id, event_no
                            ROWS UNBOUNDED PRECEDING) AS running_bytes,
           CASE WHEN address IS NOT NULL THEN
               CASE WHEN bytes < 0
                    THEN lag(bytes) OVER by_address IS DISTINCT FROM -bytes
                    ELSE lead(bytes) OVER by_address IS DISTINCT FROM -bytes END
           END AS unpaired
    FROM store.memory_events
    WINDOW by_address AS (PARTITION BY run_id, rank, device_type, device_id, address
                          ORDER BY start_ns, file_id, event_no)
)
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
    coalesce(total_allocated,
             CAST(running_bytes - least(0, min(running_bytes) OVER (
                 PARTITION BY run_id, rank, device_type, device_id)) AS BIGINT)) AS allocated,
    total_reserved AS reserved,
    total_allocated IS NULL AS derived,
    unpaired,
    iteration
FROM ordered;
