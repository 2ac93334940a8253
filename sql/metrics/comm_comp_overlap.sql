-- metric: comm_comp_overlap
-- version: 2
-- summary: Share of communication time hidden under compute kernels, per rank and across ranks
-- unit: percent
-- grain: run_id, rank
-- columns: run_id VARCHAR, rank INTEGER, comm_ns BIGINT, overlap_ns BIGINT, exposed_comm_ns BIGINT, overlap_pct DOUBLE
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), start_ns (int, optional), end_ns (int, optional), unlaunched (text, default keep)
-- see: HTA get_comm_comp_overlap
-- uses: gpu_ops, intervals, kernels, launches, scope
-- complexity: O(n log n) in GPU ops (sort-based interval sweeps per rank, clipped to iteration tiles)
-- show: rank, overlap_pct, exposed_comm_ns, comm_ns, overlap_ns, run_id
--
-- Per rank, with U = merged intervals of the rank's GPU kernels:
--   comm_ns          |U comm|                 (NCCL and other communication kernels)
--   overlap_ns       |U comm n U compute|      communication running while compute runs
--   exposed_comm_ns  comm_ns - overlap_ns
--   overlap_pct      overlap_ns / comm_ns x 100 (NULL when the rank has no communication)
-- One more row per run with rank NULL: the time-weighted ratio over its ranks,
-- sum(overlap_ns) / sum(comm_ns) x 100 (not the mean of the per-rank percentages).
-- Sync and unclassified kernels are neither comm nor compute (DESIGN section 6).
-- start_ns / end_ns (UTC) cut kernels to that window. iteration_from / iteration_to keep the
-- time of those iterations: the GPU span of each iteration, from the first start of a kernel
-- launched in it to the first start of one launched in the next (as in temporal_breakdown);
-- kernels are cut at these boundaries whichever iteration launched them.
-- unlaunched: GPU ops whose launching call is not in the trace (sql/lib/launches.sql).
--   keep (default)  they count: the GPU was busy with them, whenever they were queued. This is
--                   why tracewh can differ from HTA on traces with several profiler steps.
--   hta             as HolisticTraceAnalysis 0.5.0: with two or more profiler steps in the run,
--                   ops without a launch, or launched after the rank's last step ended, are
--                   left out (HTA keeps a device event only if its launch is a kept CPU event)
--   drop            every op without a launch is left out
WITH kinds AS MATERIALIZED (
    -- each distinct name's kind once (kernels.kind: the kind patterns, yours first)
    SELECT DISTINCT name, kind FROM kernels
),
keys AS (
    SELECT run_id, rank, row_number() OVER (ORDER BY run_id, rank) AS grp
    FROM (SELECT DISTINCT run_id, rank FROM kernels
          WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank')))
),
ops AS NOT MATERIALIZED (
    SELECT k.grp,
           greatest(g.start_ns, CAST(getvariable('start_ns') AS BIGINT)) AS start_ns,
           least(g.end_ns, CAST(getvariable('end_ns') AS BIGINT)) AS end_ns,
           g.iteration, d.kind
    FROM kernels g
    JOIN keys k ON k.run_id = g.run_id AND k.rank = g.rank
    JOIN kinds d ON d.name = g.name AND d.kind IN ('compute', 'comm')
    LEFT JOIN launch_rules(getvariable('unlaunched')) u ON u.run_id = g.run_id AND u.rank = g.rank
    WHERE scope_match(g.run_id, g.rank, getvariable('run'), getvariable('rank'))
      AND window_overlaps(g.start_ns, g.end_ns, getvariable('start_ns'), getvariable('end_ns'))
      AND launch_kept(g.launch_ns, u.need_launch, u.last_launch_ns)
),
comm_all AS MATERIALIZED (
    SELECT * FROM ops WHERE kind = 'comm'
),
comm_buckets AS MATERIALIZED (
    -- the 1 ms buckets each rank's communication touches, as grp x 2^42 + bucket
    SELECT DISTINCT grp * 4398046511104 + unnest(range(start_ns // 1000000, end_ns // 1000000 + 1))
        AS bucket_key
    FROM comm_all
),
near AS MATERIALIZED (
    -- communication kernels, and the compute kernels near them: only those can overlap it.
    -- Near = starts or ends in a 1 ms bucket with communication, or spans more than two
    -- buckets. Exact, and when communication is sparse it spares sorting every compute kernel.
    SELECT * FROM comm_all
    UNION ALL
    SELECT * FROM ops
    WHERE kind = 'compute'
      AND (end_ns // 1000000 - start_ns // 1000000 >= 2
           OR grp * 4398046511104 + start_ns // 1000000 IN (SELECT bucket_key FROM comm_buckets)
           OR grp * 4398046511104 + end_ns // 1000000 IN (SELECT bucket_key FROM comm_buckets))
),
-- the kept iterations' tiles, only when an iteration range is given
iteration_spans AS (
    -- the GPU span of each iteration: its ops' first start and last end (aggregated before the
    -- key join, cut to start_ns / end_ns)
    SELECT k.grp, s.iteration AS window_id, s.start_ns, s.end_ns
    FROM (SELECT run_id, rank, iteration,
                 min(greatest(start_ns, CAST(getvariable('start_ns') AS BIGINT))) AS start_ns,
                 max(least(end_ns, CAST(getvariable('end_ns') AS BIGINT))) AS end_ns
          FROM gpu_ops
          LEFT JOIN launch_rules(getvariable('unlaunched')) u USING (run_id, rank)
          WHERE iteration IS NOT NULL
            AND iteration_range_given(getvariable('iteration_from'), getvariable('iteration_to'))
            AND scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
            AND window_overlaps(start_ns, end_ns, getvariable('start_ns'), getvariable('end_ns'))
            AND launch_kept(launch_ns, u.need_launch, u.last_launch_ns)
          GROUP BY ALL) s
    JOIN keys k ON k.run_id = s.run_id AND k.rank = s.rank
),
tiles AS (
    SELECT grp, window_id, start_ns, end_ns
    FROM intervals_tile(iteration_spans)
    WHERE iteration_in(window_id, getvariable('iteration_from'), getvariable('iteration_to'))
),
windowed AS (
    -- the iteration that launched a kernel is the clip's first guess of its tile
    SELECT grp, start_ns, end_ns, kind, iteration AS window_id FROM near
    WHERE iteration_range_given(getvariable('iteration_from'), getvariable('iteration_to'))
),
kept AS NOT MATERIALIZED (
    SELECT grp, start_ns, end_ns, kind FROM near
    WHERE NOT iteration_range_given(getvariable('iteration_from'), getvariable('iteration_to'))
    UNION ALL
    SELECT grp, start_ns, end_ns, kind FROM intervals_clip(windowed, tiles)
),
comm AS (SELECT grp, start_ns, end_ns FROM kept WHERE kind = 'comm'),
compute AS (SELECT grp, start_ns, end_ns FROM kept WHERE kind = 'compute'),
comm_len AS (
    SELECT grp, sum(end_ns - start_ns) AS comm_ns FROM intervals_union(comm) GROUP BY grp
),
overlap_len AS (
    SELECT grp, sum(end_ns - start_ns) AS overlap_ns FROM intervals_intersect(comm, compute)
    GROUP BY grp
),
per_rank AS (
    SELECT k.run_id, k.rank,
           coalesce(c.comm_ns, 0) AS comm_ns,
           coalesce(o.overlap_ns, 0) AS overlap_ns
    FROM keys k
    LEFT JOIN comm_len c ON c.grp = k.grp
    LEFT JOIN overlap_len o ON o.grp = k.grp
)
SELECT
    run_id,
    rank,                                                  -- NULL: all ranks of the run
    CAST(comm_ns AS BIGINT) AS comm_ns,                    -- |U comm|
    CAST(overlap_ns AS BIGINT) AS overlap_ns,              -- |U comm n U compute|
    CAST(comm_ns - overlap_ns AS BIGINT) AS exposed_comm_ns,
    overlap_ns * 100.0 / nullif(comm_ns, 0) AS overlap_pct -- percent of comm time under compute
FROM (
    SELECT run_id, rank, comm_ns, overlap_ns FROM per_rank
    UNION ALL
    SELECT run_id, NULL, sum(comm_ns), sum(overlap_ns) FROM per_rank GROUP BY run_id
)
ORDER BY run_id, rank NULLS LAST;
