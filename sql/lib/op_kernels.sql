-- uses: cpu_ops, gpu_op_calls, launch_cpu_ops, op_shapes_recorded, perf_models, perf_ops, scope
-- The kernels of modelled ops: each kernel's op is the one around its launching call (the launch
-- link, launch_cpu_ops: the op with the call's External id, else the innermost open on the
-- launching thread; op_summary's link), so traces whose kernels carry the correlation id as
-- External id (PARAM DLRM, the HTA samples) link too. The ops with a performance model are
-- perf_ops. A MIOpen convolution's bias add (its child aten::add_) is the convolution's: its
-- model counts the bias, which TraceLens leaves out and a second model of the add_ counted again.
-- What op_efficiency, roofline and perf_iteration_flops put at their FLOPs and bytes.
-- kernel_time = 'subtree' times each modelled op as TraceLens' perf sheets do: every GPU op
-- (kernels, memsets, memcpys) launched by it or by an op below it in the cpu_ops tree (a
-- cuBLAS memset, a convolution's transposes and bias add, an attention's fill_), from the
-- outermost op of its family around it (outer_ops); each GPU op then counts for every modelled
-- op above its launcher, and the bias rule above is not needed.

-- op_kernels_of: op_kernels of the runs want_runs (a VARCHAR list; NULL: every run). Each part
-- reads only those runs' sources (an op, its parent, its kernels and its launching call are in
-- one source), so that a run's answer does not cost what the warehouse holds
-- (perf_iteration_flops_of).
CREATE OR REPLACE MACRO op_kernels_of(want_runs, want_rank, want_iteration_from,
                                      want_iteration_to, want_start_ns, want_end_ns,
                                      want_kernel_time) AS TABLE
    WITH RECURSIVE rule AS (
        SELECT CASE WHEN coalesce(CAST(want_kernel_time AS VARCHAR), 'own') IN ('own', 'subtree')
                    THEN coalesce(CAST(want_kernel_time AS VARCHAR), 'own') = 'subtree'
                    ELSE error('kernel_time must be own or subtree, not '
                               || CAST(want_kernel_time AS VARCHAR)) END AS subtree
    ),
    files AS MATERIALIZED (  -- the sources asked for that recorded shapes
        SELECT file_id FROM op_shapes_recorded
        WHERE shapes_recorded
          AND (want_runs IS NULL OR list_contains(CAST(want_runs AS VARCHAR[]), run_id))
          AND (want_rank IS NULL OR rank = CAST(want_rank AS INTEGER))
    ),
    modelled AS MATERIALIZED (  -- once: each use of perf_ops plans the models again (seconds)
        SELECT * FROM perf_ops WHERE file_id IN (SELECT file_id FROM files)
    ),
    ops AS (
        SELECT op_id, parent_id, name FROM cpu_ops WHERE file_id IN (SELECT file_id FROM files)
    ),
    gpu AS MATERIALIZED (  -- the GPU ops asked for, with the op around their launching call
        SELECT l.cpu_op_id, k.iteration, k.dur_ns
        FROM gpu_op_calls k
        JOIN launch_cpu_ops_of((SELECT coalesce(min(file_id), 0) FROM files),
                               (SELECT coalesce(max(file_id), -1) FROM files), true) l
          ON l.api_id = k.api_id
        WHERE (k.op = 'kernel' OR (SELECT subtree FROM rule))
          AND k.file_id IN (SELECT file_id FROM files)
          AND (want_runs IS NULL OR list_contains(CAST(want_runs AS VARCHAR[]), k.run_id))
          AND iteration_in(k.iteration, want_iteration_from, want_iteration_to)
          AND window_overlaps(k.start_ns, k.end_ns, want_start_ns, want_end_ns)
    ),
    bias AS (  -- a MIOpen convolution's bias is its child aten::add_, whose FLOPs and bytes
               -- the convolution's model counts: its kernels are the convolution's
        SELECT a.op_id, c.op_id AS conv_op_id
        FROM modelled a
        JOIN ops x ON x.op_id = a.op_id
        JOIN modelled c ON c.op_id = x.parent_id
        WHERE a.name = 'aten::add_' AND c.name = 'aten::miopen_convolution'
    ),
    chain AS (  -- subtree: each launcher and its ancestors
        SELECT o.op_id AS launcher_id, o.op_id, o.parent_id, 0 AS steps
        FROM ops o
        WHERE (SELECT subtree FROM rule) AND o.op_id IN (SELECT cpu_op_id FROM gpu)
        UNION ALL
        SELECT c.launcher_id, p.op_id, p.parent_id, c.steps + 1
        FROM chain c JOIN ops p ON p.op_id = c.parent_id
        WHERE c.steps < 1000
    ),
    outer_ops AS (
        -- subtree: a modelled op inside ops of its own family (aten::convolution >
        -- _convolution > cudnn_convolution; _scaled_dot_product_flash_attention >
        -- _flash_attention_forward) is timed by the outermost, as TraceLens models that one
        -- (aten::linear and matmul, which TraceLens does not model, are not taken)
        SELECT p.op_id, p.op_id AS top_id, x.parent_id, p.family, 0 AS steps
        FROM modelled p JOIN ops x ON x.op_id = p.op_id
        WHERE (SELECT subtree FROM rule)
        UNION ALL
        SELECT t.op_id, a.op_id, a.parent_id, t.family, t.steps + 1
        FROM outer_ops t JOIN ops a ON a.op_id = t.parent_id
        -- the family hangs on the name alone; empty typed lists (not NULLs: duckdb 1.5's
        -- shell cannot bind the models' arithmetic on untyped NULLs)
        WHERE perf_model(a.name, CAST([] AS BIGINT[][]), CAST([] AS VARCHAR[]),
                         CAST([] AS VARCHAR[])).family = t.family
          AND a.name NOT IN ('aten::linear', 'aten::matmul') AND t.steps < 1000
    ),
    timed_for AS (  -- launcher -> the modelled op(s) its GPU ops are timed for
        SELECT l.launcher_id, coalesce(b.conv_op_id, l.launcher_id) AS op_id
        FROM (SELECT DISTINCT cpu_op_id AS launcher_id FROM gpu) l
        LEFT JOIN bias b ON b.op_id = l.launcher_id
        WHERE NOT (SELECT subtree FROM rule)
        UNION ALL
        SELECT c.launcher_id, t.op_id
        FROM chain c
        JOIN (SELECT op_id, arg_max(top_id, steps) AS top_id FROM outer_ops GROUP BY op_id) t
          ON t.top_id = c.op_id
    )
    SELECT o.run_id, o.rank, o.file_id, o.shape_id, o.op_no, o.external_id, g.iteration, g.dur_ns
    FROM gpu g
    JOIN timed_for t ON t.launcher_id = g.cpu_op_id
    JOIN modelled o ON o.op_id = t.op_id;

-- op_kernels: each GPU op timed for a modelled op, in the scope asked for (NULL: all).
-- @arg want_run             any  the run asked for (NULL: every run)
-- @arg want_rank            any  the rank asked for (NULL: every rank)
-- @arg want_iteration_from  any  the first iteration kept (NULL: from the first)
-- @arg want_iteration_to    any  the last iteration kept (NULL: to the last)
-- @arg want_start_ns        any  UTC window start, ns (NULL: open)
-- @arg want_end_ns          any  UTC window end, ns (NULL: open)
-- @arg want_kernel_time     any  own (NULL: the op's own kernels) | subtree; else an error
-- @ret TABLE(run_id VARCHAR, rank INTEGER, file_id, shape_id, op_no, external_id, iteration INTEGER, dur_ns BIGINT)
CREATE OR REPLACE MACRO op_kernels(want_run, want_rank, want_iteration_from, want_iteration_to,
                                   want_start_ns, want_end_ns, want_kernel_time) AS TABLE
SELECT * FROM op_kernels_of(CASE WHEN want_run IS NOT NULL THEN [CAST(want_run AS VARCHAR)] END,
                            want_rank, want_iteration_from, want_iteration_to, want_start_ns,
                            want_end_ns, want_kernel_time);
