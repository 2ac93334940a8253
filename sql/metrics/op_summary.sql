-- metric: op_summary
-- version: 1
-- summary: GPU time of the kernels each CPU op launched, directly and through its subtree, per op name or per (name, input dims, input types)
-- unit: ns
-- grain: run_id, rank, name, input_dims, input_types
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), start_ns (int, optional), end_ns (int, optional), per (text, default name)
-- uses: cpu_ops, gpu_op_launches, intervals, scope
-- see: TraceLens ops_summary and ops_unique_args (TreePerfAnalyzer.get_kernel_launchers)
--
-- TraceLens' kernel launchers, per rank. Each GPU op (kernel, memcpy, memset) has a launcher:
-- the innermost CPU op around its launch call (gpu_op_launches.cpu_op_id; an op named `execute`
-- passes it to its parent, as TraceLens' conv_bn_fused -> execute rule), else, when no CPU op
-- encloses the call, the call itself (named after it: cudaLaunchKernel, ...). GPU ops without a
-- launch call in the trace have none, and so do sources without CPU ops (nsys exports, where
-- PyTorch ops are NVTX ranges: nvtx_gpu_projection covers them). A launcher instance is an op
-- that launched at least one GPU op that is not NCCL (a name containing "nccl", any case:
-- TraceLens leaves communication out of the direct times); per name (per = 'name') or per (name, Input Dims, Input type) of its
-- args (per = 'shape'), summed over its instances:
--   calls             instances (TraceLens: Count)
--   host_ns           their CPU durations (the calls' durations for call launchers)
--   direct_gpu_ns     per instance, the time its own non-NCCL GPU ops ran (|U ops|: overlapping
--                     ops count once; TraceLens: total_direct_kernel_time)
--   direct_kernels    those GPU ops (TraceLens: direct_kernel_count)
--   subtree_gpu_ns    per instance, the time any GPU op launched by it or by an op below it in
--                     the cpu_ops tree ran, NCCL included (TraceLens: total_subtree_kernel_time)
--   subtree_kernels   those GPU ops
--   pct_of_gpu_time   direct_gpu_ns / the rank's direct_gpu_ns of all launchers x 100
--                     (TraceLens: Percentage (%)); cumulative_pct adds them up in row order
-- Differences from TraceLens 0.7.0, by design: times in ns (TraceLens µs); the tree is cpu_ops'
-- (ops that overlap without nesting are children, where TraceLens drops them from its tree);
-- per = 'shape' groups by dims and types only (TraceLens also by strides and concrete inputs);
-- host_ns is an addition. Scope: run, rank; iteration_from / iteration_to keep launchers of those
-- iterations (CPU ops' iteration: call launchers then drop out); start_ns / end_ns keep
-- launchers whose host time overlaps the window.
WITH ops AS (
    SELECT op_id, run_id, rank, file_id, pid, tid, name, args, start_ns, end_ns, parent_id, iteration
    FROM cpu_ops
    WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
),
gpu AS (  -- each GPU op with a launch call, and its launcher (grp: the op_id, or -1 - api_id)
    SELECT g.run_id, g.rank, g.file_id, g.pid, g.launch_tid, g.start_ns, g.end_ns, g.cpu_op_id,
           g.api_name, g.launch_ns, g.launch_end_ns, g.name ILIKE '%nccl%' AS nccl,
           coalesce(CASE WHEN o.name = 'execute' THEN o.parent_id END, g.cpu_op_id, -1 - g.api_id)
               AS grp
    FROM gpu_op_launches g
    LEFT JOIN ops o ON o.op_id = g.cpu_op_id
    WHERE g.api_id IS NOT NULL
      AND g.file_id IN (SELECT file_id FROM ops)  -- sources with CPU ops (Kineto); nsys: none
      AND scope_match(g.run_id, g.rank, getvariable('run'), getvariable('rank'))
),
launchers AS (  -- launcher instances in scope, with what they are called
    SELECT l.grp, any_value(l.run_id) AS run_id, any_value(l.rank) AS rank,
           coalesce(any_value(o.name), any_value(l.api_name)) AS name,
           any_value(o.args) AS args,
           coalesce(any_value(o.end_ns - o.start_ns), any_value(l.launch_end_ns - l.launch_ns))
               AS host_ns,
           count(*) AS direct_kernels
    FROM gpu l
    LEFT JOIN ops o ON o.op_id = l.grp
    WHERE NOT l.nccl
    GROUP BY l.grp
    HAVING iteration_in(any_value(o.iteration), getvariable('iteration_from'), getvariable('iteration_to'))
       AND window_overlaps(coalesce(any_value(o.start_ns), any_value(l.launch_ns)),
                           coalesce(any_value(o.end_ns), any_value(l.launch_end_ns)),
                           getvariable('start_ns'), getvariable('end_ns'))
),
-- An op's subtree launched the GPU ops whose launch call lies in it on its thread (the ops
-- open at a call are the call's ancestors: cpu_ops' tree rule). In one pass over the calls in
-- (thread, time) order, each call gets its place `pos` and each launcher op the places of the
-- first and last call inside it, [lo, hi]; a call at the op's start is inside, one at its end
-- is not (start_ns <= call < end_ns).
launcher_ops AS (
    SELECT o.* FROM ops o SEMI JOIN launchers l ON l.grp = o.op_id
),
edges AS (
    SELECT file_id, pid, launch_tid AS tid, launch_ns AS t, 1 AS is_call, start_ns, end_ns,
           NULL AS grp, NULL AS side
    FROM gpu
    UNION ALL
    SELECT file_id, pid, tid, start_ns, 0, NULL, NULL, op_id, 'lo' FROM launcher_ops
    UNION ALL
    SELECT file_id, pid, tid, end_ns, 0, NULL, NULL, op_id, 'hi' FROM launcher_ops
),
placed AS (
    SELECT *, sum(is_call) OVER (ORDER BY file_id, pid, tid, t, is_call
                                 ROWS UNBOUNDED PRECEDING) AS pos
    FROM edges
),
spans AS (
    SELECT grp, max(CASE WHEN side = 'lo' THEN pos + 1 END) AS lo,
           max(CASE WHEN side = 'hi' THEN pos END) AS hi
    FROM placed WHERE is_call = 0
    GROUP BY grp
),
direct_ops AS (
    SELECT grp, start_ns, end_ns FROM gpu WHERE NOT nccl AND grp IN (SELECT grp FROM launchers)
),
subtree_ops AS (
    SELECT s.grp, c.start_ns, c.end_ns
    FROM spans s JOIN placed c ON c.pos BETWEEN s.lo AND s.hi AND c.is_call = 1
    UNION ALL  -- a call that launched with no op around it: its own GPU ops
    SELECT grp, start_ns, end_ns FROM gpu WHERE cpu_op_id IS NULL AND grp IN (SELECT grp FROM launchers)
),
direct AS (
    SELECT grp, sum(end_ns - start_ns) AS gpu_ns FROM intervals_union(direct_ops) GROUP BY grp
),
subtree AS (
    SELECT grp, sum(end_ns - start_ns) AS gpu_ns FROM intervals_union(subtree_ops) GROUP BY grp
),
subtree_counts AS (
    SELECT grp, count(*) AS kernels FROM subtree_ops GROUP BY grp
),
grouped AS (
    SELECT l.run_id, l.rank, l.name,
           CASE WHEN coalesce(CAST(getvariable('per') AS VARCHAR), 'name') = 'shape'
                THEN CAST(json_extract(l.args, '$."Input Dims"') AS VARCHAR) END AS input_dims,
           CASE WHEN coalesce(CAST(getvariable('per') AS VARCHAR), 'name') = 'shape'
                THEN CAST(json_extract(l.args, '$."Input type"') AS VARCHAR) END AS input_types,
           count(*) AS calls,
           CAST(sum(l.host_ns) AS BIGINT) AS host_ns,
           CAST(sum(d.gpu_ns) AS BIGINT) AS direct_gpu_ns,
           CAST(sum(l.direct_kernels) AS BIGINT) AS direct_kernels,
           CAST(sum(s.gpu_ns) AS BIGINT) AS subtree_gpu_ns,
           CAST(sum(c.kernels) AS BIGINT) AS subtree_kernels
    FROM launchers l
    JOIN direct d USING (grp)
    JOIN subtree s USING (grp)
    JOIN subtree_counts c USING (grp)
    GROUP BY ALL
)
SELECT
    run_id,
    rank,
    name,                    -- the launching CPU op (or launch call)
    input_dims,              -- per = 'shape': "Input Dims" of its args
    input_types,             -- per = 'shape': "Input type"
    calls,
    host_ns,                 -- ns
    direct_gpu_ns,           -- ns
    direct_kernels,
    subtree_gpu_ns,          -- ns
    subtree_kernels,
    100.0 * direct_gpu_ns / sum(direct_gpu_ns) OVER (PARTITION BY run_id, rank) AS pct_of_gpu_time,
    100.0 * sum(direct_gpu_ns) OVER (PARTITION BY run_id, rank
                                     ORDER BY direct_gpu_ns DESC, name, input_dims, input_types
                                     ROWS UNBOUNDED PRECEDING)
          / sum(direct_gpu_ns) OVER (PARTITION BY run_id, rank) AS cumulative_pct
FROM grouped
ORDER BY run_id, rank, direct_gpu_ns DESC, name, input_dims, input_types;
