-- metric: op_summary
-- version: 3
-- summary: GPU time of the kernels each CPU op launched, directly and through its subtree, per op name or per (name, input dims, input types)
-- unit: ns
-- grain: run_id, rank, name, input_dims, input_types
-- columns: run_id VARCHAR, rank INTEGER, name VARCHAR, input_dims VARCHAR, input_types VARCHAR, calls BIGINT, host_ns BIGINT, direct_gpu_ns BIGINT, direct_kernels BIGINT, subtree_gpu_ns BIGINT, subtree_kernels BIGINT, pct_of_gpu_time DOUBLE, cumulative_pct DOUBLE
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), window (text, optional), start_ns (int, optional), end_ns (int, optional), per (text, default name)
-- uses: cpu_ops, gpu_op_calls, intervals, launch_cpu_ops, nccl_names, scope, sources
-- complexity: O(n log n) in CPU ops and GPU ops (launches by hash join; busy time by intervals_union sweep)
-- see: TraceLens ops_summary and ops_unique_args (TreePerfAnalyzer.get_kernel_launchers)
-- show: name, pct_of_gpu_time, subtree_gpu_ns, calls, input_dims, host_ns, run_id
--
-- TraceLens' kernel launchers, per rank. Each GPU op (kernel, memcpy, memset) has a launcher:
-- the innermost CPU op around its launch call (launch_cpu_ops, gpu_op_launches.cpu_op_id; an op
-- named `execute` passes it to its parent, as TraceLens' conv_bn_fused -> execute rule), else,
-- when no CPU op encloses the call, the call itself (named after it: cudaLaunchKernel, ...).
-- GPU ops without a launch call in the trace have none, and so do sources without CPU ops
-- (nsys exports, where PyTorch ops are NVTX ranges: nvtx_gpu_projection covers them). A launcher instance is an op
-- that launched at least one GPU op that is not communication (a name containing "nccl",
-- "rccl" or "cross_device_reduce", any case, tracelens_comm_kernel:
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
-- Differences from TraceLens v1.0.0, by design: times in ns (TraceLens µs); the tree is cpu_ops'
-- (ops that overlap without nesting are children, where TraceLens drops them from its tree);
-- per = 'shape' groups by dims and types only (TraceLens also by strides and concrete inputs);
-- host_ns is an addition. Scope: run, rank; iteration_from / iteration_to keep launchers of those
-- iterations (CPU ops' iteration: call launchers then drop out); window (`4s420ms/35s390ms`,
-- relative to each source's start, as the other summaries take it) and start_ns / end_ns (UTC)
-- keep launchers whose host time overlaps the window.
-- Version 2: the same answers, from the stored cpu_ops tree (migration 0017) and the launch
-- link alone (launch_cpu_ops), without gpu_op_launches' NVTX columns.
-- Version 3: RCCL and cross_device_reduce kernels are communication too (TraceLens v1.0.0's
-- match): an RCCL trace's launchers of collectives no longer count them as direct time.
WITH ops AS (
    SELECT op_id, run_id, rank, file_id, pid, tid, name, start_ns, end_ns, iteration
    FROM cpu_ops
    WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
),
gpu AS MATERIALIZED (  -- each GPU op with a launch call, its launcher (grp: op_id or -1 - api_id)
    SELECT g.run_id, g.rank, g.file_id, g.pid, g.launch_tid, g.start_ns, g.end_ns, c.cpu_op_id,
           g.api_name, g.launch_ns, g.launch_end_ns, tracelens_comm_kernel(g.name) AS nccl,
           coalesce(x.parent_id, c.cpu_op_id, -1 - g.api_id) AS grp
    FROM gpu_op_calls g
    LEFT JOIN launch_cpu_ops c ON c.api_id = g.api_id
    LEFT JOIN (SELECT op_id, parent_id FROM cpu_ops WHERE name = 'execute') x
           ON x.op_id = c.cpu_op_id
    WHERE g.file_id IN (SELECT file_id FROM ops)  -- sources with CPU ops (Kineto); nsys: none
      AND scope_match(g.run_id, g.rank, getvariable('run'), getvariable('rank'))
),
own AS (  -- each launcher's GPU ops, counted before the ops are joined (run and rank are one
           -- value; the call and its times are read only for a call launcher, one call)
    SELECT grp, min(CASE WHEN NOT nccl THEN run_id END) AS run_id,
           min(CASE WHEN NOT nccl THEN rank END) AS rank,
           min(CASE WHEN NOT nccl THEN api_name END) AS api_name,
           min(CASE WHEN NOT nccl THEN launch_ns END) AS launch_ns,
           min(CASE WHEN NOT nccl THEN launch_end_ns END) AS launch_end_ns,
           count(*) FILTER (WHERE NOT nccl) AS direct_kernels,
           count(*) AS own_ops,
           min(file_id) AS file_id  -- one source: a launcher's ops are on its thread
    FROM gpu
    GROUP BY grp
    HAVING count(*) FILTER (WHERE NOT nccl) > 0
),
launchers AS MATERIALIZED (  -- launcher instances in scope, with what they are called
    SELECT l.grp, l.run_id, l.rank, coalesce(o.name, l.api_name) AS name,
           coalesce(o.end_ns - o.start_ns, l.launch_end_ns - l.launch_ns) AS host_ns,
           l.direct_kernels, l.own_ops, o.file_id, o.pid, o.tid, o.start_ns, o.end_ns
    FROM own l
    LEFT JOIN ops o ON o.op_id = l.grp
    LEFT JOIN sources s ON s.file_id = l.file_id
    CROSS JOIN relative_window(getvariable('window')) w
    WHERE iteration_in(o.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
      AND window_overlaps(coalesce(o.start_ns, l.launch_ns), coalesce(o.end_ns, l.launch_end_ns),
                          getvariable('start_ns'), getvariable('end_ns'))
      AND relative_window_overlaps(coalesce(o.start_ns, l.launch_ns),
                                   coalesce(o.end_ns, l.launch_end_ns), s.origin_ns, w.from_ns, w.to_ns)
),
-- An op's subtree launched the GPU ops whose launch call lies in it on its thread (the ops
-- open at a call are the call's ancestors: cpu_ops' tree rule). In one pass over the calls in
-- (thread, time) order, each call gets its place `pos` and each launcher op the places of the
-- first and last call inside it, [lo, hi]; a call at the op's start is inside, one at its end
-- is not (start_ns <= call < end_ns). Most launchers hold only their own calls: their subtree
-- is their own GPU ops, found by grp; only the others are joined to the places in [lo, hi].
edges AS (
    SELECT file_id, pid, launch_tid AS tid, launch_ns AS t, 1 AS is_call, start_ns, end_ns,
           grp, NULL AS side
    FROM gpu
    UNION ALL
    SELECT file_id, pid, tid, start_ns, 0, NULL, NULL, grp, 'lo' FROM launchers WHERE grp >= 0
    UNION ALL
    SELECT file_id, pid, tid, end_ns, 0, NULL, NULL, grp, 'hi' FROM launchers WHERE grp >= 0
),
placed AS MATERIALIZED (
    SELECT *, sum(is_call) OVER (ORDER BY file_id, pid, tid, t, is_call
                                 ROWS UNBOUNDED PRECEDING) AS pos
    FROM edges
),
spans AS MATERIALIZED (
    SELECT grp, max(CASE WHEN side = 'lo' THEN pos + 1 END) AS lo,
           max(CASE WHEN side = 'hi' THEN pos END) AS hi
    FROM placed WHERE is_call = 0
    GROUP BY grp
),
own_only AS (  -- the op launchers whose calls in [lo, hi] are all their own
    SELECT s.grp, s.lo, s.hi
    FROM spans s JOIN placed c ON c.grp = s.grp AND c.is_call = 1
    WHERE c.pos BETWEEN s.lo AND s.hi
    GROUP BY s.grp, s.lo, s.hi
    HAVING count(*) = s.hi - s.lo + 1
),
direct_ops AS (
    SELECT g.grp, g.start_ns, g.end_ns
    FROM gpu g SEMI JOIN launchers l ON l.grp = g.grp
    WHERE NOT g.nccl
),
subtree_ops AS (
    SELECT c.grp, c.start_ns, c.end_ns  -- own_only: its own calls
    FROM placed c JOIN own_only a ON a.grp = c.grp
    WHERE c.is_call = 1 AND c.pos BETWEEN a.lo AND a.hi
    UNION ALL
    SELECT s.grp, c.start_ns, c.end_ns
    FROM (SELECT * FROM spans ANTI JOIN own_only USING (grp)) s
    JOIN placed c ON c.pos BETWEEN s.lo AND s.hi AND c.is_call = 1
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
shapes AS (  -- per = 'shape': each op launcher's args (only then: args are the bulk of a warehouse)
    SELECT o.op_id AS grp,
           CAST(json_extract(o.args, '$."Input Dims"') AS VARCHAR) AS input_dims,
           CAST(json_extract(o.args, '$."Input type"') AS VARCHAR) AS input_types
    FROM cpu_ops o SEMI JOIN launchers l ON l.grp = o.op_id
    WHERE coalesce(CAST(getvariable('per') AS VARCHAR), 'name') = 'shape'
),
grouped AS (
    SELECT l.run_id, l.rank, l.name, p.input_dims, p.input_types,
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
    LEFT JOIN shapes p USING (grp)
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
