-- metric: nvtx_phases
-- version: 4
-- summary: Per iteration, the time of named NVTX phases (forward, backward, optimizer step, ...) with UTC start and end
-- unit: ns
-- grain: run_id, rank, iteration, phase
-- columns: run_id VARCHAR, rank INTEGER, iteration INTEGER, phase VARCHAR, instances BIGINT, total_ns BIGINT, start_ns BIGINT, end_ns BIGINT, iteration_ns BIGINT, share_pct DOUBLE
-- params: run (text, optional), rank (int, optional), phases (text, optional), step_pattern (text, optional), iteration_from (int, optional), iteration_to (int, optional)
-- see: DeepSpeed wall_clock_breakdown (DeepSpeedEngine.forward / backward / _take_model_step)
-- uses: phase_ranges, scope, training_steps
-- complexity: O(R + (P + S) log(P + S)): the phase pattern is matched once per range (R), then
-- show: phase, iteration, share_pct, total_ns, rank, run_id
--   the P phase ranges meet the S steps of their rank by an ASOF join (a sort), not a range join
--
-- A phase is an NVTX range (or Kineto user annotation) whose name matches `phases`, a regular
-- expression; the default matches names ending in forward, backward, optimizer, step,
-- optimizer_step or _take_model_step after a start, `.` or `:` (forward, DeepSpeedEngine.forward,
-- Optimizer.step#AdamW.step), or between '## ' and ' ##' (TorchRec: `## backward ##`), but not
-- ProfilerStep#N. It belongs to the iteration of its rank
-- whose host range contains its start (iterations view, or the NVTX ranges matching
-- step_pattern as in iteration_time), whichever thread it ran on. Per (rank, iteration, phase):
--   instances      ranges of that name in the iteration
--   total_ns       sum of their durations (nested instances add up)
--   start_ns       first start, UTC ns
--   end_ns         last end, UTC ns
--   iteration_ns   the iteration's duration; share_pct = total_ns / iteration_ns x 100
-- Phases outside every iteration, and ranges still open at the end of the capture, are left out.
WITH steps AS (
    SELECT run_id, rank, iteration, start_ns, end_ns
    FROM training_steps(getvariable('step_pattern'))
    WHERE end_ns IS NOT NULL
),
kept_steps AS (
    SELECT * FROM steps
    WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(iteration, getvariable('iteration_from'), getvariable('iteration_to'))
),
phases AS (
    SELECT run_id, rank, name AS phase, start_ns, end_ns
    FROM phase_ranges(getvariable('phases'))
    WHERE (getvariable('step_pattern') IS NULL
           OR NOT regexp_matches(coalesce(name, ''), CAST(getvariable('step_pattern') AS VARCHAR)))
      AND scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
),
placed AS (
    SELECT p.run_id, p.rank, s.iteration, p.phase, p.start_ns, p.end_ns,
           s.end_ns - s.start_ns AS iteration_ns
    FROM phases p
    ASOF JOIN kept_steps s
      ON s.run_id = p.run_id AND s.rank = p.rank AND p.start_ns >= s.start_ns
    WHERE p.start_ns < s.end_ns
)
SELECT
    run_id,
    rank,
    iteration,
    phase,                                     -- the NVTX range name
    count(*) AS instances,
    CAST(sum(end_ns - start_ns) AS BIGINT) AS total_ns,
    min(start_ns) AS start_ns,                 -- UTC ns
    max(end_ns) AS end_ns,                     -- UTC ns
    max(iteration_ns) AS iteration_ns,
    sum(end_ns - start_ns) * 100.0 / nullif(max(iteration_ns), 0) AS share_pct
FROM placed
GROUP BY run_id, rank, iteration, phase
ORDER BY run_id, rank, iteration, min(start_ns), phase;
