-- metric: temporal_breakdown
-- version: 4
-- summary: GPU time of each rank (or iteration) split into compute, exposed communication, exposed memory, other and idle
-- unit: ns
-- grain: run_id, rank, iteration
-- columns: run_id VARCHAR, rank INTEGER, iteration INTEGER, window_start_ns BIGINT, window_end_ns BIGINT, window_ns BIGINT, compute_ns BIGINT, exposed_comm_ns BIGINT, exposed_mem_ns BIGINT, exposed_other_ns BIGINT, idle_ns BIGINT, compute_pct DOUBLE, exposed_comm_pct DOUBLE, exposed_mem_pct DOUBLE, exposed_other_pct DOUBLE, idle_pct DOUBLE
-- params: run (text, optional), rank (int, optional), per_iteration (bool, default false), iteration_from (int, optional), iteration_to (int, optional), start_ns (int, optional), end_ns (int, optional), unlaunched (text, default keep), memset (text, default memory), comm (text, default kinds)
-- see: HTA get_temporal_breakdown (idle / compute / non-compute), split further as in DESIGN section 7
-- uses: gpu_ops, intervals, iteration_tiles, launches, nccl_names, ranks, scope
-- complexity: O(n log n) in GPU ops (intervals_window_breakdown sweep over iteration tiles)
-- show: rank, iteration, compute_pct, exposed_comm_pct, idle_pct, exposed_mem_pct, window_ns, run_id
--
-- W is the window: the rank's GPU span [first GPU op start, last GPU op end], cut to
-- start_ns/end_ns (UTC) when given. Over W, with U = merged intervals and |.| = total length:
--   compute_ns        |U compute kernels|
--   exposed_comm_ns   |U comm kernels \ U compute|            communication nothing hides
--   exposed_mem_ns    |U memcpy+memset \ U compute \ U comm|   copies nothing hides
--   exposed_other_ns  |U sync+other kernels \ the three above|  (0 on most traces: sync waits
--                     and unclassified kernels are never compute, DESIGN section 6)
--   idle_ns           W - |U all GPU ops|
-- The five sum to window_ns; each *_pct is its share of window_ns.
-- Iterations: with per_iteration=true, one row per (rank, iteration) whose W is the iteration's
-- span on the GPU: from the first start of a GPU op launched in that iteration to the first start
-- of one launched in the next (the last: to the last end of its own ops), so the time between
-- steps is charged to the step before and the iterations of a rank tile its timeline. GPU ops
-- are cut by time at these boundaries, whichever iteration launched them (ops with no iteration
-- count too). iteration_from / iteration_to keep those iterations only; without per_iteration the
-- kept iterations are summed into one row per rank (window_ns = their total span).
-- unlaunched: GPU ops whose launching call is not in the trace (sql/lib/launches.sql).
--   keep (default)  they count: the GPU was busy with them, whenever they were queued. This is
--                   why tracewh can differ from HTA on traces with several profiler steps.
--   hta             as HolisticTraceAnalysis 0.5.0: with two or more profiler steps in the run,
--                   ops without a launch, or launched after the rank's last step ended, are
--                   left out (HTA keeps a device event only if its launch is a kept CPU event)
--   drop            every op without a launch is left out
-- Parameters that reproduce TraceLens v1.0.0's gpu_timeline (computation_time, exposed_comm_time,
-- exposed_memcpy_time, idle_time, total_time are then compute_ns, exposed_comm_ns, exposed_mem_ns,
-- idle_ns, window_ns): memset=compute comm=tracelens unlaunched=drop (TraceLens leaves out the
-- kernels no CPU op launched).
-- memset: what a memset is.
--   memory (default)  memory traffic, as memcpy: exposed_mem_ns
--   compute           computation, as TraceLens counts it: compute_ns
--   drop              left out: as TraceLens on ROCm traces whose flow events are written f/f,
--                     where it loses the memsets' launch and with it the memsets
-- comm: which kernels are communication.
--   kinds (default)   kernel_kinds' comm kind (NCCL, RCCL, HCCL, custom all-reduce kernels:
--                     symmetric-memory multimem, vLLM cross_device_reduce, ...)
--   tracelens         TraceLens' name match only (tracelens_comm_kernel: nccl, rccl,
--                     cross_device_reduce); every other kernel, sync and other too, is computation
-- Shell: SET VARIABLE per_iteration = true; .read sql/metrics/temporal_breakdown.sql
WITH rules AS (
    SELECT CASE WHEN m IN ('memory', 'compute', 'drop') THEN m
                ELSE error('memset must be memory, compute or drop, not ' || m) END AS memset_as,
           CASE WHEN c IN ('kinds', 'tracelens') THEN c
                ELSE error('comm must be kinds or tracelens, not ' || c) END AS comm_by
    FROM (SELECT coalesce(CAST(getvariable('memset') AS VARCHAR), 'memory') AS m,
                 coalesce(CAST(getvariable('comm') AS VARCHAR), 'kinds') AS c)
),
ops AS NOT MATERIALIZED (
    -- layer: 0 compute, 1 comm, 2 memory, NULL sync/other; cut to the start_ns/end_ns window
    SELECT rank_key AS grp,
           greatest(start_ns, CAST(getvariable('start_ns') AS BIGINT)) AS start_ns,
           least(end_ns, CAST(getvariable('end_ns') AS BIGINT)) AS end_ns,
           iteration, alone,
           CASE WHEN kind = 'memset' THEN CASE r.memset_as WHEN 'memory' THEN 2 WHEN 'compute' THEN 0 END
                WHEN kind = 'memcpy' THEN 2
                WHEN r.comm_by = 'tracelens' THEN CASE WHEN tracelens_comm_kernel(name) THEN 1 ELSE 0 END
                ELSE CASE kind WHEN 'compute' THEN 0 WHEN 'comm' THEN 1 END
           END AS layer
    FROM gpu_ops g
    CROSS JOIN rules r
    LEFT JOIN launch_rules(getvariable('unlaunched')) u USING (run_id, rank)
    WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
      AND window_overlaps(start_ns, end_ns, getvariable('start_ns'), getvariable('end_ns'))
      AND launch_kept(launch_ns, u.need_launch, u.last_launch_ns)
      AND NOT (kind = 'memset' AND r.memset_as = 'drop')
),
by_iteration AS (
    SELECT coalesce(CAST(getvariable('per_iteration') AS BOOLEAN), false)
           OR iteration_range_given(getvariable('iteration_from'), getvariable('iteration_to'))
           AS yes
),
-- whole ranks: one window per rank --------------------------------------------------------------
rank_windows AS (
    -- the rank's whole GPU span, cut to start_ns / end_ns (window_id 0), for ranks with ops in it
    SELECT grp, 0 AS window_id,
           greatest(first_ns, CAST(getvariable('start_ns') AS BIGINT)) AS start_ns,
           least(last_ns, CAST(getvariable('end_ns') AS BIGINT)) AS end_ns
    FROM (SELECT rank_key AS grp, min(start_ns) AS first_ns, max(end_ns) AS last_ns,
                 count(*) FILTER (
                     WHERE window_overlaps(start_ns, end_ns, getvariable('start_ns'),
                                           getvariable('end_ns'))) AS in_window
          FROM gpu_ops g
          LEFT JOIN launch_rules(getvariable('unlaunched')) u USING (run_id, rank)
          WHERE NOT (SELECT yes FROM by_iteration)
            AND scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
            AND launch_kept(launch_ns, u.need_launch, u.last_launch_ns)
          GROUP BY rank_key)
    WHERE in_window > 0
),
-- iterations: tiles of the rank's timeline --------------------------------------------------------
tiles AS (
    SELECT * FROM iteration_tiles(ops, (SELECT yes FROM by_iteration),
                                  getvariable('iteration_from'), getvariable('iteration_to'))
    WHERE end_ns > start_ns
),
windows AS (
    SELECT * FROM rank_windows
    UNION ALL
    SELECT * FROM tiles
),
windowed_ops AS (
    -- the window an op most likely lies in: its rank's, or the iteration that launched it
    SELECT grp, start_ns, end_ns, layer, alone,
           CASE WHEN (SELECT yes FROM by_iteration) THEN iteration ELSE 0 END AS window_id
    FROM ops
),
window_rows AS (
    SELECT w.grp, CASE WHEN (SELECT yes FROM by_iteration) THEN w.window_id END AS iteration,
           w.start_ns AS window_start_ns, w.end_ns AS window_end_ns,
           coalesce(b.busy_ns, 0) AS busy_ns, coalesce(b.layer0_ns, 0) AS layer0_ns,
           coalesce(b.layer1_ns, 0) AS layer1_ns, coalesce(b.layer2_ns, 0) AS layer2_ns,
           coalesce(b.rest_ns, 0) AS rest_ns
    FROM windows w
    LEFT JOIN intervals_window_breakdown(windowed_ops, windows) b
           ON b.grp = w.grp AND b.window_id = w.window_id
),
windows_out AS (
    SELECT grp, iteration, window_start_ns, window_end_ns,
           window_end_ns - window_start_ns AS window_ns,
           busy_ns, layer0_ns, layer1_ns, layer2_ns, rest_ns
    FROM window_rows
    WHERE iteration IS NULL OR coalesce(CAST(getvariable('per_iteration') AS BOOLEAN), false)
    UNION ALL
    -- an iteration range without per_iteration: the kept iterations summed per rank
    SELECT grp, NULL, min(window_start_ns), max(window_end_ns),
           sum(window_end_ns - window_start_ns),
           sum(busy_ns), sum(layer0_ns), sum(layer1_ns), sum(layer2_ns), sum(rest_ns)
    FROM window_rows
    WHERE iteration IS NOT NULL AND NOT coalesce(CAST(getvariable('per_iteration') AS BOOLEAN), false)
    GROUP BY grp
)
SELECT
    k.run_id,
    k.rank,
    w.iteration,                                      -- NULL: the whole rank (or the kept iterations)
    w.window_start_ns,                                -- UTC ns
    w.window_end_ns,                                  -- UTC ns
    CAST(w.window_ns AS BIGINT) AS window_ns,         -- W
    CAST(w.layer0_ns AS BIGINT) AS compute_ns,
    CAST(w.layer1_ns AS BIGINT) AS exposed_comm_ns,
    CAST(w.layer2_ns AS BIGINT) AS exposed_mem_ns,
    CAST(w.rest_ns AS BIGINT) AS exposed_other_ns,
    CAST(w.window_ns - w.busy_ns AS BIGINT) AS idle_ns,
    w.layer0_ns * 100.0 / nullif(w.window_ns, 0) AS compute_pct,
    w.layer1_ns * 100.0 / nullif(w.window_ns, 0) AS exposed_comm_pct,
    w.layer2_ns * 100.0 / nullif(w.window_ns, 0) AS exposed_mem_pct,
    w.rest_ns * 100.0 / nullif(w.window_ns, 0) AS exposed_other_pct,
    (w.window_ns - w.busy_ns) * 100.0 / nullif(w.window_ns, 0) AS idle_pct
FROM windows_out w
JOIN ranks k ON k.rank_key = w.grp
ORDER BY k.run_id, k.rank, w.iteration NULLS FIRST;
