-- uses: none
-- The training phases by NVTX range / user annotation name, one definition for nvtx_phases,
-- memory_by_phase, memory_timeline and host_breakdown.

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

-- phase_ranges: the NVTX ranges and user annotations (that ended) named like a phase by `want`
-- (phase_pattern's parameter), with their phase_kind. With the default pattern each range's
-- stored phase is read (store.nvtx_ranges.phase, sql/nvtx_range_facts.sql): no regular
-- expression runs over the millions of ranges of an autograd-NVTX capture.
-- @arg want  any  the metric's `phases` parameter (NULL: the default)
-- @column run_id, rank, file_id, range_id, pid, tid, name, start_ns, end_ns  of the range
-- @column phase  VARCHAR  forward | backward | optimizer
CREATE OR REPLACE MACRO phase_ranges(want) AS TABLE
SELECT * FROM (
    SELECT run_id, rank, file_id, range_id, pid, tid, name, start_ns, end_ns,
           CASE WHEN want IS NULL THEN phase
                WHEN regexp_matches(coalesce(name, ''), phase_pattern(want)) THEN phase_kind(name)
           END AS phase
    FROM store.nvtx_ranges
    WHERE kind IN ('push_pop', 'start_end', 'annotation') AND end_ns IS NOT NULL)
WHERE phase IS NOT NULL;
