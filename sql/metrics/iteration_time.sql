-- metric: iteration_time
-- version: 4
-- summary: Iteration (training step) time per rank and across ranks: median, p90, mean, min, max
-- unit: ns
-- grain: run_id, rank, iteration
-- columns: run_id VARCHAR, rank INTEGER, iteration INTEGER, iterations BIGINT, start_ns BIGINT, end_ns BIGINT, dur_ns BIGINT, median_ns DOUBLE, p90_ns DOUBLE, mean_ns DOUBLE, min_ns BIGINT, max_ns BIGINT, ranks BIGINT
-- params: run (text, optional), rank (int, optional), step_pattern (text, optional), include_first_last (bool, default false), per_iteration (bool, default false), iteration_from (int, optional), iteration_to (int, optional)
-- see: HTA / TraceLens step time; nsys nvtx_sum of ProfilerStep#N
-- uses: clock_offsets, scope, training_steps
-- complexity: O(n) in NVTX ranges (one scan of the names for iterations), O(i log i) in iterations
-- show: iteration, rank, dur_ns, median_ns, p90_ns, run_id
--
-- v4: clock_offsets counts a grouped kernel (several collectives in one NCCL group) as one observation: nsys runs with grouped collectives get Kineto's offsets (issue 34).
-- Iterations are the host ranges of the iterations view (ProfilerStep#N, step N, iteration N), or,
-- with step_pattern, the NVTX ranges whose name matches that regular expression (numbered by the
-- number in their name when it has one, else in start order per rank). An iteration's time on a
-- rank is its range's duration; across ranks (rows with rank NULL) it is the last aligned end
-- minus the first aligned start over the ranks that have it (clocks aligned with clock_offsets).
-- The first and last iteration of each rank are left out unless include_first_last (profilers
-- cut them short, warm-up); ranges still open at the end of the capture are always left out.
-- Summary rows (default): iterations, median_ns (mean of the middle two for an even count),
-- p90_ns (continuous), mean_ns, min_ns, max_ns per rank and across ranks. per_iteration=true
-- gives one row per iteration instead (start_ns, end_ns, dur_ns).
WITH steps AS (
    SELECT * FROM training_steps(getvariable('step_pattern'))
),
kept AS (
    SELECT s.run_id, s.rank, s.iteration, s.start_ns, s.end_ns, s.end_ns - s.start_ns AS dur_ns,
           s.start_ns - coalesce(c.offset_ns, 0) AS aligned_start_ns,
           s.end_ns - coalesce(c.offset_ns, 0) AS aligned_end_ns
    FROM steps s
    LEFT JOIN clock_offsets c ON c.run_id = s.run_id AND c.rank = s.rank
    WHERE s.end_ns IS NOT NULL
      AND (coalesce(CAST(getvariable('include_first_last') AS BOOLEAN), false)
           OR NOT (s.is_first OR s.is_last))
      AND scope_match(s.run_id, s.rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(s.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
),
per_iteration AS (
    SELECT run_id, rank, iteration, start_ns, end_ns, dur_ns, 1 AS ranks FROM kept
    UNION ALL
    SELECT run_id, NULL, iteration, min(aligned_start_ns), max(aligned_end_ns),
           max(aligned_end_ns) - min(aligned_start_ns), count(DISTINCT rank)
    FROM kept
    GROUP BY run_id, iteration
)
SELECT
    run_id,
    rank,                          -- NULL: across ranks
    iteration,                     -- NULL on summary rows
    count(*) AS iterations,
    min(start_ns) AS start_ns,     -- UTC ns (aligned clock on rows across ranks)
    max(end_ns) AS end_ns,
    CASE WHEN iteration IS NOT NULL THEN min(dur_ns) END AS dur_ns,
    median(dur_ns) AS median_ns,
    quantile_cont(dur_ns, 0.9) AS p90_ns,
    avg(dur_ns) AS mean_ns,
    min(dur_ns) AS min_ns,
    max(dur_ns) AS max_ns,
    max(ranks) AS ranks            -- ranks behind the row
FROM (
    SELECT run_id, rank, dur_ns, start_ns, end_ns, ranks,
           CASE WHEN coalesce(CAST(getvariable('per_iteration') AS BOOLEAN), false)
                THEN iteration END AS iteration
    FROM per_iteration
)
GROUP BY run_id, rank, iteration
ORDER BY run_id, rank NULLS LAST, iteration;
