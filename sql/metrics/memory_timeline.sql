-- metric: memory_timeline
-- version: 3
-- summary: Allocated and reserved memory per rank and device over time, at every change or the highest per time bin, with the iteration and phase of each point
-- unit: bytes
-- grain: run_id, rank, device_type, device_id, ts_ns
-- columns: run_id VARCHAR, rank INTEGER, device_type VARCHAR, device_id INTEGER, ts_ns BIGINT, allocated BIGINT, reserved BIGINT, fragmentation BIGINT, derived BOOLEAN, iteration INTEGER, phase VARCHAR
-- params: run (text, optional), rank (int, optional), bins (int, default 1000), phases (text, optional)
-- uses: memory_events, phase_ranges, scope
-- complexity: O(n log n) in memory events (running sums; phases by ASOF join)
-- see: memory_events; torch.cuda.memory_allocated; nvtx_phases
-- show: ts_ns, allocated, reserved, phase, rank, run_id
--
-- From memory_events (allocator events). bins > 0: each device's time span cut into that many
-- equal bins, one point per bin that has events, at the bin's start, with the highest allocated
-- and reserved in it (the peak is never lost between points). phase: the innermost range named by `phases` (a regular expression, as in
-- memory_by_phase) running on the rank at the point, when there is one; iteration: the step
-- holding the point (bins: of the bin's highest point). Version 2: the default `phases` is
-- phase_pattern's (sql/lib/phase_names.sql), the one nvtx_phases and memory_by_phase use: it
-- also names TorchRec's `## forward ##` ranges, which version 1 left without a phase.
-- bins = 0: one point per event (the totals after it), version 2's default. Version 3 bins by
-- default (1000 bins per device): a plot or a screen needs no more, and every event of a long
-- trace (10 M on a big job) is what the memory_events view already holds.
-- Shell: SET VARIABLE bins = 200; .read sql/metrics/memory_timeline.sql
-- picked is read twice, not materialized: scanning the stored columns again is cheaper
WITH picked AS NOT MATERIALIZED (
    SELECT run_id, rank, device_type, device_id, start_ns, allocated, reserved, derived, iteration
    FROM memory_events
    WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
),
spans AS (
    SELECT run_id, rank, device_type, device_id, min(start_ns) AS first_ns,
           greatest(max(start_ns) - min(start_ns), 1) AS span_ns
    FROM picked GROUP BY ALL
),
points AS (
    SELECT p.run_id, p.rank, p.device_type, p.device_id, p.start_ns AS ts_ns, p.allocated,
           p.reserved, p.derived, p.iteration
    FROM picked p
    WHERE coalesce(CAST(getvariable('bins') AS INTEGER), 1000) <= 0
    UNION ALL
    SELECT run_id, rank, device_type, device_id, any_value(first_ns + bin * span_ns // n) AS ts_ns,
           max(allocated), max(reserved), bool_or(derived), arg_max(iteration, allocated)
    FROM (SELECT p.*, s.first_ns, s.span_ns, b.n,
                 least((p.start_ns - s.first_ns) * b.n // s.span_ns, b.n - 1) AS bin
          FROM picked p
          JOIN spans s USING (run_id, rank, device_type, device_id)
          CROSS JOIN (SELECT coalesce(CAST(getvariable('bins') AS BIGINT), 1000) AS n) b
          WHERE b.n > 0)
    GROUP BY run_id, rank, device_type, device_id, bin  -- first_ns, span_ns, n: one per device
),
phases AS (
    SELECT run_id, rank, name AS phase, start_ns, end_ns
    FROM phase_ranges(getvariable('phases'))
)
SELECT t.run_id, t.rank, t.device_type, t.device_id, t.ts_ns, t.allocated, t.reserved,
       t.reserved - t.allocated AS fragmentation, t.derived, t.iteration,
       CASE WHEN f.end_ns >= t.ts_ns THEN f.phase END AS phase
FROM points t
ASOF LEFT JOIN phases f ON f.run_id = t.run_id AND f.rank = t.rank AND f.start_ns <= t.ts_ns
ORDER BY t.run_id, t.rank, t.device_type, t.device_id, t.ts_ns;
