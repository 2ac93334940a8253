-- metric: straggler
-- version: 3
-- summary: Per rank, how long it waits for the others at collectives, how often it arrives last, and which rank straggles
-- unit: ns
-- grain: run_id, rank
-- columns: run_id VARCHAR, rank INTEGER, collectives BIGINT, total_wait_ns BIGINT, mean_wait_ns DOUBLE, arrived_last_pct DOUBLE, arrived_first_pct DOUBLE, is_straggler BOOLEAN, median_start_skew_ns DOUBLE, max_start_skew_ns BIGINT, median_end_skew_ns DOUBLE
-- params: run (text, optional), collective (text, optional), iteration_from (int, optional), iteration_to (int, optional), start_ns (int, optional), end_ns (int, optional), align_clocks (bool, default true)
-- see: HTA straggler analysis; TraceLens multi-rank collective report (straggler_summary); nsys recipe nccl_gpu_overlap_trace
-- uses: collective_clocks, scope
-- complexity: O(n log n) in collective waits (hash aggregates, ranking window)
-- show: rank, is_straggler, arrived_last_pct, total_wait_ns, mean_wait_ns, run_id
--
-- v3: clock_offsets counts a grouped kernel (several collectives in one NCCL group) as one observation: nsys runs with grouped collectives get Kineto's offsets (issue 34).
-- Collectives (not sends or receives: their peers differ from rank to rank) matched across
-- ranks by op_key and seen on at least two ranks, from the collective_waits view: times are
-- aligned across hosts first (raw - clock_offsets.offset_ns). For a collective with aligned
-- starts s_r:
--   wait_r = max(s) - s_r: how long rank r waited for the last rank to arrive
--   start skew = max(s) - min(s); end skew = max(end) - min(end)
-- Per rank: collectives, total_wait_ns, mean_wait_ns, arrived_last_pct and arrived_first_pct
-- (shares of its collectives where it started last, first; ties count for every rank tied). The straggler is the
-- rank that waits least (is_straggler; ties go to the lowest rank): the others wait for it.
-- Run-level columns repeated on every row: median / max start skew and median end skew.
-- collective keeps one kind; iteration_from / iteration_to keep the rows of operations launched
-- in those iterations; start_ns / end_ns (UTC) keep the rows of operations that overlap the
-- window. Waits are always measured against every rank of the collective. Per collective and
-- rank: the straggler_ops metric. align_clocks=false measures on each rank's clock as
-- recorded, as TraceLens' straggler_summary does (total_wait_time_us, pct_arrived_last,
-- times_arrived_first): the same answers on one host, see straggler_ops.
WITH waits AS (
    SELECT run_id, op_key, rank, wait_ns, arrived_last, arrived_first, start_skew_ns,
           end_skew_ns
    FROM collective_waits_on(getvariable('align_clocks'))
    WHERE run_match(run_id, getvariable('run'))
      AND (getvariable('collective') IS NULL
           OR collective = CAST(getvariable('collective') AS VARCHAR))
      AND iteration_in(iteration, getvariable('iteration_from'), getvariable('iteration_to'))
      AND window_overlaps(start_ns, end_ns, getvariable('start_ns'), getvariable('end_ns'))
),
skews AS (
    SELECT run_id,
           median(start_skew_ns) AS median_start_skew_ns,
           max(start_skew_ns) AS max_start_skew_ns,
           median(end_skew_ns) AS median_end_skew_ns
    FROM (SELECT DISTINCT run_id, op_key, start_skew_ns, end_skew_ns FROM waits)
    GROUP BY run_id
),
per_rank AS (
    SELECT run_id, rank,
           count(*) AS collectives,
           CAST(sum(wait_ns) AS BIGINT) AS total_wait_ns,
           avg(wait_ns) AS mean_wait_ns,
           count(*) FILTER (WHERE arrived_last) * 100.0 / count(*) AS arrived_last_pct,
           count(*) FILTER (WHERE arrived_first) * 100.0 / count(*) AS arrived_first_pct
    FROM waits
    GROUP BY run_id, rank
)
SELECT
    p.run_id,
    p.rank,
    p.collectives,                 -- matched collectives the rank took part in
    p.total_wait_ns,               -- time waiting for the last rank to arrive
    p.mean_wait_ns,
    p.arrived_last_pct,            -- percent of its collectives where it started last
    p.arrived_first_pct,           -- percent where it started first
    row_number() OVER (PARTITION BY p.run_id ORDER BY p.total_wait_ns, p.rank) = 1 AS is_straggler,
    s.median_start_skew_ns,        -- run: median over collectives of max start - min start
    s.max_start_skew_ns,
    s.median_end_skew_ns           -- run: median over collectives of max end - min end
FROM per_rank p
JOIN skews s ON s.run_id = p.run_id
ORDER BY p.run_id, p.rank;
