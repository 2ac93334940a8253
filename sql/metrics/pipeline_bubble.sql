-- metric: pipeline_bubble
-- version: 4
-- summary: Pipeline bubble per rank and iteration: GPU time without compute, with exposed send/recv split out, beside the ideal (p-1)/(m+p-1)
-- unit: ns
-- grain: run_id, rank, iteration
-- columns: run_id VARCHAR, rank INTEGER, iteration INTEGER, window_start_ns BIGINT, window_end_ns BIGINT, window_ns BIGINT, compute_ns BIGINT, bubble_ns BIGINT, exposed_p2p_ns BIGINT, exposed_other_comm_ns BIGINT, idle_ns BIGINT, bubble_pct DOUBLE, run_bubble_pct DOUBLE, stages BIGINT, microbatches BIGINT, ideal_bubble_pct DOUBLE, note VARCHAR
-- params: run (text, optional), rank (int, optional), stages (int, optional), microbatches (int, optional), iteration_from (int, optional), iteration_to (int, optional), start_ns (int, optional), end_ns (int, optional)
-- see: GPipe / Megatron-LM bubble fraction (p-1)/(m+p-1); CCL-Bench bubble_size_pipeline
-- uses: gpu_ops, intervals, nccl_ops, ranks, runs, scope
-- complexity: O(n log n) in GPU ops (intervals_window_breakdown sweep over iteration tiles)
-- show: iteration, rank, bubble_pct, run_bubble_pct, ideal_bubble_pct, bubble_ns, note, run_id
--
-- Every rank is a pipeline stage. Per (rank, iteration), W is the iteration's span on the GPU
-- (from the first start of a GPU op launched in it to the first start of one launched in the
-- next, as temporal_breakdown with per_iteration) and, with U = merged intervals:
--   compute_ns             |U compute kernels|
--   bubble_ns              W - compute_ns: GPU time without compute (GPU only: host-side stalls
--                          show up as idle GPU time)
--   exposed_p2p_ns         |U send/recv \ U compute|: pipeline transfers nothing hides (the
--                          send/recv operations of nccl_ops, with their kernel times)
--   exposed_other_comm_ns  |U other communication kernels \ U compute \ U send/recv|
--   idle_ns                W - |U all GPU ops|
--   bubble_pct             bubble_ns / W x 100
-- Repeated on every row of a run: run_bubble_pct = sum(bubble_ns) / sum(W) x 100 over its rows,
-- stages p (the stages parameter, else the run's pp: runs.pp, from --run-param, the workload
-- card, a ds_config / Megatron arguments or what the trace shows), microbatches m (parameter),
-- and ideal_bubble_pct = (p-1)/(m+p-1) x 100 (NULL, with a note, when p or m is unknown). A run
-- with no pp (or pp 1) is no pipeline as far as anything says: its note says that bubble_pct is
-- then only GPU time without compute. start_ns / end_ns (UTC) cut GPU ops to that window; iteration_from / iteration_to
-- keep those iterations.
WITH ops AS NOT MATERIALIZED (
    -- layer: 0 compute, 1 send/recv, 2 other communication, NULL memory / sync / other.
    -- alone: a GPU op that overlaps no other op of the rank (gpu_ops.alone) skips the sweep. The
    -- send/recv rows are nccl_ops, whose times are their kernels' (both ingests): they overlap
    -- their own communication kernels, so those are never taken as alone here.
    SELECT rank_key AS grp, start_ns, end_ns, iteration,
           CASE kind WHEN 'compute' THEN 0 WHEN 'comm' THEN 2 END AS layer,
           alone AND kind <> 'comm' AS alone
    FROM gpu_ops
    WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
    UNION ALL
    SELECT rank_key, start_ns, end_ns, iteration, 1, false
    FROM nccl_ops
    WHERE collective IN ('Send', 'Recv', 'SendRecv')
      AND scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
),
clipped AS NOT MATERIALIZED (
    SELECT grp, iteration, layer, alone,
           greatest(start_ns, CAST(getvariable('start_ns') AS BIGINT)) AS start_ns,
           least(end_ns, CAST(getvariable('end_ns') AS BIGINT)) AS end_ns
    FROM ops
    WHERE window_overlaps(start_ns, end_ns, getvariable('start_ns'), getvariable('end_ns'))
),
iteration_spans AS (
    -- the GPU span of each iteration: its ops' first start and last end, cut to start_ns / end_ns
    SELECT rank_key AS grp, iteration AS window_id,
           min(greatest(start_ns, CAST(getvariable('start_ns') AS BIGINT))) AS start_ns,
           max(least(end_ns, CAST(getvariable('end_ns') AS BIGINT))) AS end_ns
    FROM gpu_ops
    WHERE iteration IS NOT NULL
      AND scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
      AND window_overlaps(start_ns, end_ns, getvariable('start_ns'), getvariable('end_ns'))
    GROUP BY rank_key, iteration
),
guessed AS (
    -- the iteration that launched an op is the clip's first guess of its tile
    SELECT grp, start_ns, end_ns, layer, alone, iteration AS window_id FROM clipped
),
tiles AS (
    SELECT grp, window_id, start_ns, end_ns
    FROM intervals_tile(iteration_spans)
    WHERE end_ns > start_ns
      AND iteration_in(window_id, getvariable('iteration_from'), getvariable('iteration_to'))
),
rows AS (
    SELECT t.grp, t.window_id AS iteration, t.start_ns AS window_start_ns, t.end_ns AS window_end_ns,
           t.end_ns - t.start_ns AS window_ns,
           coalesce(b.busy_ns, 0) AS busy_ns, coalesce(b.layer0_ns, 0) AS compute_ns,
           coalesce(b.layer1_ns, 0) AS exposed_p2p_ns, coalesce(b.layer2_ns, 0) AS exposed_other_comm_ns
    FROM tiles t
    LEFT JOIN intervals_window_breakdown(guessed, tiles) b
           ON b.grp = t.grp AND b.window_id = t.window_id
),
shape AS (
    SELECT r.run_id,
           coalesce(CAST(getvariable('stages') AS BIGINT), r.pp) AS stages,
           CAST(getvariable('microbatches') AS BIGINT) AS microbatches
    FROM runs r
)
SELECT
    k.run_id,
    k.rank,
    w.iteration,
    w.window_start_ns,                                  -- UTC ns
    w.window_end_ns,                                    -- UTC ns
    CAST(w.window_ns AS BIGINT) AS window_ns,           -- W
    CAST(w.compute_ns AS BIGINT) AS compute_ns,
    CAST(w.window_ns - w.compute_ns AS BIGINT) AS bubble_ns,
    CAST(w.exposed_p2p_ns AS BIGINT) AS exposed_p2p_ns,
    CAST(w.exposed_other_comm_ns AS BIGINT) AS exposed_other_comm_ns,
    CAST(w.window_ns - w.busy_ns AS BIGINT) AS idle_ns,
    (w.window_ns - w.compute_ns) * 100.0 / nullif(w.window_ns, 0) AS bubble_pct,
    sum(w.window_ns - w.compute_ns) OVER r * 100.0 / nullif(sum(w.window_ns) OVER r, 0)
        AS run_bubble_pct,
    s.stages,
    s.microbatches,
    (s.stages - 1) * 100.0 / nullif(s.microbatches + s.stages - 1, 0) AS ideal_bubble_pct,
    CASE WHEN s.stages IS NULL
             THEN 'no pipeline stages known (no pp given, in the workload card or seen in the trace):'
                  || ' if this is no pipeline run, bubble_pct is only GPU time without compute;'
                  || ' else pass stages' || CASE WHEN s.microbatches IS NULL THEN ' and microbatches' ELSE '' END
         WHEN s.stages = 1
             THEN 'one pipeline stage (pp 1): bubble_pct is GPU time without compute, no pipeline bubble'
         WHEN s.microbatches IS NULL THEN 'ideal bubble unknown: pass microbatches'
    END AS note
FROM rows w
JOIN ranks k ON k.rank_key = w.grp
LEFT JOIN shape s ON s.run_id = k.run_id
WINDOW r AS (PARTITION BY k.run_id)
ORDER BY k.run_id, k.rank, w.iteration;
