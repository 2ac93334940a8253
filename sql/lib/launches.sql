-- uses: iterations, ranks
-- GPU ops whose launch is not in the trace: the rule, and HolisticTraceAnalysis' rule.
-- A GPU op's launch is the CUDA API call (Kineto: cudaLaunchKernel & co. by correlation id)
-- that queued it (gpu_ops.launch_ns). A trace can hold GPU work without its launch: work queued
-- before the capture started, or a sampled trace. tracewh's rule (`keep`, the default) counts
-- such an op: it is time the GPU spent, and its iteration is the host step whose range holds
-- its GPU start (set at ingest), so iteration filters include it. HTA 0.5.0 (`hta`) keeps a
-- device event only if its launch is a kept CPU event, once the trace has two or more profiler
-- steps: an op without a launch, or launched after the rank's last step ended, is left out;
-- with one step or none it keeps everything. `drop` leaves out every op without a launch.

-- launch_rules: per rank, what the chosen rule asks of its GPU ops (no row: keep them all).
-- @arg want_unlaunched  any  keep | drop | hta (NULL: keep); anything else is an error
-- @column run_id          VARCHAR
-- @column rank            INTEGER
-- @column need_launch     BOOLEAN  an op without launch_ns is left out
-- @column last_launch_ns  BIGINT   an op launched after this is left out (NULL: no bound)
CREATE OR REPLACE MACRO launch_rules(want_unlaunched) AS TABLE
WITH rule AS (
    SELECT CASE WHEN coalesce(CAST(want_unlaunched AS VARCHAR), 'keep') IN ('keep', 'drop', 'hta')
                THEN coalesce(CAST(want_unlaunched AS VARCHAR), 'keep')
                ELSE error('unlaunched must be keep, drop or hta, not '
                           || CAST(want_unlaunched AS VARCHAR)) END AS name
),
runs_steps AS (
    SELECT run_id, count(DISTINCT iteration) >= 2 AS multi_step FROM iterations GROUP BY run_id
),
steps AS (
    SELECT i.run_id, i.rank, max(i.end_ns) AS last_end_ns, any_value(m.multi_step) AS multi_step
    FROM iterations i JOIN runs_steps m ON m.run_id = i.run_id
    GROUP BY i.run_id, i.rank
)
SELECT s.run_id, s.rank, s.multi_step AS need_launch,
       CASE WHEN s.multi_step THEN s.last_end_ns END AS last_launch_ns
FROM steps s, rule r
WHERE r.name = 'hta'
UNION ALL
SELECT DISTINCT run_id, rank, true, CAST(NULL AS BIGINT)
FROM ranks, rule
WHERE rule.name = 'drop';

-- launch_kept: does a GPU op pass its rank's launch_rules row (NULL: no row, kept)?
-- @arg row_launch_ns   BIGINT   gpu_ops.launch_ns
-- @arg need_launch     BOOLEAN  launch_rules.need_launch
-- @arg last_launch_ns  BIGINT   launch_rules.last_launch_ns
-- @ret BOOLEAN
CREATE OR REPLACE MACRO launch_kept(row_launch_ns, need_launch, last_launch_ns) AS
    NOT coalesce(need_launch, false)
    OR (row_launch_ns IS NOT NULL AND (last_launch_ns IS NULL OR row_launch_ns <= last_launch_ns));
