-- uses: none
-- The training phases by NVTX range / user annotation name, one definition for nvtx_phases,
-- memory_by_phase, memory_timeline and host_breakdown (their ranges: phase_ranges.sql).

-- phase_pattern: names ending in forward, backward, optimizer, step,
-- optimizer_step or _take_model_step after a start, `.` or `:` (forward, DeepSpeedEngine.forward,
-- Optimizer.step#AdamW.step), or between '## ' and ' ##' (TorchRec: `## backward ##`), but not
-- ProfilerStep#N.
-- @arg want  any  the metric's `phases` parameter: a regular expression (NULL: the default)
-- @ret VARCHAR
CREATE OR REPLACE MACRO phase_pattern(want) AS
    coalesce(CAST(want AS VARCHAR),
             '(^|[.:]|## )(forward|backward|optimizer|optimizer_step|_take_model_step|step)( ##)?$');

-- phase_kind: forward, backward or optimizer for a phase's name: forward / fwd and backward /
-- bwd by name, every other phase (optimizer, step, _take_model_step, ...) is the optimizer.
-- @arg name  VARCHAR  a name matching phase_pattern
-- @ret VARCHAR
CREATE OR REPLACE MACRO phase_kind(name) AS
    CASE WHEN regexp_matches(name, '(?i)backward|bwd') THEN 'backward'
         WHEN regexp_matches(name, '(?i)forward|fwd') THEN 'forward'
         ELSE 'optimizer' END;
