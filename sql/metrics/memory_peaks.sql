-- metric: memory_peaks
-- version: 2
-- summary: Peak allocated memory per rank, device and iteration, when it happened, the op running then, and reserved minus allocated
-- unit: bytes
-- grain: run_id, rank, device_type, device_id, iteration
-- columns: run_id VARCHAR, rank INTEGER, device_type VARCHAR, device_id INTEGER, iteration INTEGER, peak_allocated BIGINT, peak_ns BIGINT, reserved_at_peak BIGINT, fragmentation BIGINT, peak_reserved BIGINT, allocations BIGINT, frees BIGINT, unpaired BIGINT, derived BOOLEAN, op_at_peak VARCHAR
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional)
-- uses: cpu_op_names, memory_events, scope
-- complexity: O(n log n) in memory events (running sums, hash aggregates)
-- see: torch.cuda.max_memory_allocated; PyTorch profiler [memory] events
-- show: rank, iteration, peak_allocated, peak_reserved, fragmentation, op_at_peak, run_id
--
-- From memory_events (allocator events). Per (rank, device, iteration; NULL: outside every step):
--   peak_allocated   the highest total allocated after any event of the iteration
--   peak_ns          the first time it was reached
--   reserved_at_peak total reserved then (NULL when the source gives none)
--   fragmentation    reserved_at_peak - peak_allocated
--   peak_reserved    the highest total reserved in the iteration
--   allocations, frees, unpaired  event counts (unpaired: see memory_events)
--   derived          totals are running sums (the trace gives none)
--   op_at_peak       the innermost CPU op running at peak_ns on the event's thread (the peak
--                    event's memory_events.cpu_op_id)
-- Version 2: op_at_peak is the op memory_events links at ingest, by the cpu_ops tree's rule: an
-- op that ends at peak_ns no longer holds it (version 1 counted it), and of ops that overlap
-- without nesting the tree's child holds it; 2x faster on 10 M events (no tree).
-- Shell: SET VARIABLE rank = 0; .read sql/metrics/memory_peaks.sql
WITH picked AS NOT MATERIALIZED (
    SELECT * FROM memory_events
    WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(iteration, getvariable('iteration_from'), getvariable('iteration_to'))
),
totals AS (
    SELECT run_id, rank, device_type, device_id, iteration,
           max(allocated) AS peak_allocated,
           max(reserved) AS peak_reserved,
           CAST(count_if(bytes > 0) AS BIGINT) AS allocations,
           CAST(count_if(bytes < 0) AS BIGINT) AS frees,
           CAST(count_if(unpaired) AS BIGINT) AS unpaired,
           bool_or(derived) AS derived
    FROM picked
    GROUP BY ALL
),
-- the first event reaching the peak (found among the few that reach it: an arg_max over all
-- events keyed by (allocated, -start_ns, -event_no) took twice as long)
peaks AS (
    SELECT t.*, arg_min({'ns': p.start_ns, 'reserved': p.reserved, 'op_id': p.cpu_op_id},
                        (p.start_ns, p.event_no)) AS peak_at
    FROM totals t
    JOIN picked p ON p.run_id = t.run_id AND p.rank = t.rank AND p.device_type = t.device_type
     AND p.device_id IS NOT DISTINCT FROM t.device_id
     AND p.iteration IS NOT DISTINCT FROM t.iteration AND p.allocated = t.peak_allocated
    GROUP BY ALL
)
SELECT p.run_id, p.rank, p.device_type, p.device_id, p.iteration, p.peak_allocated,
       p.peak_at.ns AS peak_ns, p.peak_at.reserved AS reserved_at_peak,
       p.peak_at.reserved - p.peak_allocated AS fragmentation,
       p.peak_reserved, p.allocations, p.frees, p.unpaired, p.derived, o.name AS op_at_peak
FROM peaks p
LEFT JOIN cpu_op_names o ON o.op_id = p.peak_at.op_id
ORDER BY p.run_id, p.rank, p.device_type, p.device_id, p.iteration NULLS FIRST;
