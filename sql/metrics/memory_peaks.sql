-- metric: memory_peaks
-- version: 1
-- summary: Peak allocated memory per rank, device and iteration, when it happened, the op running then, and reserved minus allocated
-- unit: bytes
-- grain: run_id, rank, device_type, device_id, iteration
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional)
-- uses: cpu_ops, memory_events, scope
-- see: torch.cuda.max_memory_allocated; PyTorch profiler [memory] events
--
-- From memory_events (allocator events). Per (rank, device, iteration; NULL: outside every step):
--   peak_allocated   the highest total allocated after any event of the iteration
--   peak_ns          the first time it was reached
--   reserved_at_peak total reserved then (NULL when the source gives none)
--   fragmentation    reserved_at_peak - peak_allocated
--   peak_reserved    the highest total reserved in the iteration
--   allocations, frees, unpaired  event counts (unpaired: see memory_events)
--   derived          totals are running sums (the trace gives none)
--   op_at_peak       the innermost CPU op running at peak_ns on the event's thread
-- Shell: SET VARIABLE rank = 0; .read sql/metrics/memory_peaks.sql
WITH picked AS (
    SELECT * FROM memory_events
    WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(iteration, getvariable('iteration_from'), getvariable('iteration_to'))
),
peaks AS (
    SELECT run_id, rank, device_type, device_id, iteration,
           max(allocated) AS peak_allocated,
           -- the first event reaching the peak
           arg_max({'ns': start_ns, 'reserved': reserved, 'tid': tid},
                   (allocated, -start_ns, -event_no)) AS peak_at,
           max(reserved) AS peak_reserved,
           CAST(count_if(bytes > 0) AS BIGINT) AS allocations,
           CAST(count_if(bytes < 0) AS BIGINT) AS frees,
           CAST(count_if(unpaired) AS BIGINT) AS unpaired,
           bool_or(derived) AS derived
    FROM picked
    GROUP BY ALL
)
SELECT p.run_id, p.rank, p.device_type, p.device_id, p.iteration, p.peak_allocated,
       p.peak_at.ns AS peak_ns, p.peak_at.reserved AS reserved_at_peak,
       p.peak_at.reserved - p.peak_allocated AS fragmentation,
       p.peak_reserved, p.allocations, p.frees, p.unpaired, p.derived,
       (SELECT arg_max(c.name, c.start_ns) FROM cpu_ops c
        WHERE c.run_id = p.run_id AND c.rank = p.rank AND c.tid = p.peak_at.tid
          AND c.start_ns <= p.peak_at.ns AND c.end_ns >= p.peak_at.ns) AS op_at_peak
FROM peaks p
ORDER BY p.run_id, p.rank, p.device_type, p.device_id, p.iteration NULLS FIRST;
