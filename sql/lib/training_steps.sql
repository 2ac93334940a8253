-- uses: iteration_number, iterations, nvtx_ranges, phase_names
-- training_steps(step_pattern): the training steps of every rank, as the step-time metrics
-- (iteration_time, throughput, scaling, nvtx_phases, memory_by_phase) count them. With
-- step_pattern NULL, the iterations view (ProfilerStep#N, step N, iteration N), and on a rank
-- that has none of those, its phases (phase_pattern: DeepSpeed annotates DeepSpeedEngine.forward,
-- .backward and ._take_model_step, no ProfilerStep): each forward that starts after the earlier
-- ones ended starts a step, numbered 1, 2, ... in time order, which lasts until the next one
-- starts (the last: until the last phase range of the rank ends); otherwise the NVTX ranges (and Kineto
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
SELECT run_id, rank, iteration, start_ns, end_ns, is_first, is_last
FROM phase_steps()
WHERE step_pattern IS NULL
UNION ALL
SELECT run_id, rank, iteration, start_ns, end_ns,
       iteration = min(iteration) OVER r, iteration = max(iteration) OVER r
FROM named
WINDOW r AS (PARTITION BY run_id, rank);


-- phase_steps(): the steps of the ranks without step ranges, made of their phases (see above).
CREATE OR REPLACE MACRO phase_steps() AS TABLE
WITH phase_names AS MATERIALIZED (  -- the regexes once per name, not per range
    SELECT name, phase_kind(name) = 'forward' AS is_forward
    FROM (SELECT DISTINCT name FROM nvtx_ranges WHERE name IS NOT NULL)
    WHERE regexp_matches(name, phase_pattern(NULL))
),
phases AS (
    SELECT n.run_id, n.rank, n.start_ns, n.end_ns, p.is_forward
    FROM nvtx_ranges n JOIN phase_names p USING (name)
    ANTI JOIN (SELECT DISTINCT run_id, rank FROM iterations) i
        ON i.run_id = n.run_id AND i.rank = n.rank
    WHERE n.kind IN ('push_pop', 'start_end', 'annotation') AND n.end_ns IS NOT NULL
),
forwards AS (  -- a forward inside an earlier one (a module's forward in the engine's) starts none
    SELECT run_id, rank, start_ns,
           start_ns >= coalesce(max(end_ns) OVER (PARTITION BY run_id, rank ORDER BY start_ns, end_ns DESC
                                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), start_ns) AS starts
    FROM phases WHERE is_forward
),
starts AS (
    SELECT run_id, rank, start_ns,
           CAST(row_number() OVER (PARTITION BY run_id, rank ORDER BY start_ns) AS INTEGER) AS iteration,
           lead(start_ns) OVER (PARTITION BY run_id, rank ORDER BY start_ns) AS next_ns
    FROM forwards WHERE starts
),
last_end AS (
    SELECT run_id, rank, max(end_ns) AS end_ns FROM phases GROUP BY run_id, rank
)
SELECT s.run_id, s.rank, s.iteration, s.start_ns, coalesce(s.next_ns, l.end_ns) AS end_ns,
       s.iteration = 1 AS is_first,
       s.next_ns IS NULL AS is_last
FROM starts s JOIN last_end l USING (run_id, rank);
