-- uses: clock_offsets, training_steps
-- aligned_steps(step_pattern, include_first_last): each training step across ranks, on clocks
-- aligned with clock_offsets, as the step-time metrics time it (throughput, scaling,
-- run_measures; as iteration_time's rows across ranks): the steps of training_steps(step_pattern),
-- still-open ones left out, and each rank's first and last step too unless include_first_last.
-- @arg step_pattern        any  the step_pattern parameter (NULL: the iterations view)
-- @arg include_first_last  any  keep each rank's first and last step, cast to BOOLEAN (NULL: false)
-- @column run_id, iteration
-- @column dur_ns  BIGINT  last aligned end - first aligned start over its ranks
-- A metric passes its own parameters:
--   FROM aligned_steps(getvariable('step_pattern'), getvariable('include_first_last'))
CREATE OR REPLACE MACRO aligned_steps(step_pattern, include_first_last) AS TABLE
SELECT s.run_id, s.iteration,
       max(s.end_ns - coalesce(o.offset_ns, 0)) - min(s.start_ns - coalesce(o.offset_ns, 0)) AS dur_ns
FROM training_steps(step_pattern) s
LEFT JOIN clock_offsets o ON o.run_id = s.run_id AND o.rank = s.rank
WHERE s.end_ns IS NOT NULL
  AND (coalesce(CAST(include_first_last AS BOOLEAN), false) OR NOT (s.is_first OR s.is_last))
GROUP BY s.run_id, s.iteration;
