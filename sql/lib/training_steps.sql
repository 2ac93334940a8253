-- uses: iteration_number, iterations, nvtx_ranges
-- training_steps(step_pattern): the training steps of every rank, as the step-time metrics
-- (iteration_time, throughput, scaling, nvtx_phases) count them. With step_pattern NULL, the
-- iterations view (ProfilerStep#N, step N, iteration N); otherwise the NVTX ranges (and Kineto
-- user annotations) whose name matches that regular expression, numbered by the number in their
-- name when it has one, else in start order per rank.
-- Output: run_id, rank, iteration, start_ns, end_ns (NULL: still open when the capture ended),
-- is_first, is_last (the rank's first and last step: profilers often cut them short).
-- A metric passes its own parameter: FROM training_steps(getvariable('step_pattern')).
CREATE OR REPLACE MACRO training_steps(step_pattern) AS TABLE
WITH named AS (
    SELECT run_id, rank, start_ns, end_ns,
           coalesce(iteration_number(name),
                    CAST(row_number() OVER (PARTITION BY run_id, rank ORDER BY start_ns, range_id)
                         AS INTEGER)) AS iteration
    FROM nvtx_ranges
    WHERE step_pattern IS NOT NULL
      AND kind IN ('push_pop', 'start_end', 'annotation')
      AND regexp_matches(coalesce(name, ''), CAST(step_pattern AS VARCHAR))
)
SELECT run_id, rank, iteration, start_ns, end_ns, is_first, is_last
FROM iterations
WHERE step_pattern IS NULL
UNION ALL
SELECT run_id, rank, iteration, start_ns, end_ns,
       iteration = min(iteration) OVER r, iteration = max(iteration) OVER r
FROM named
WINDOW r AS (PARTITION BY run_id, rank);
