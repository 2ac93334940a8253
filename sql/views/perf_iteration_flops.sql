-- uses: op_kernels, op_shapes
-- FLOPs the performance models count per rank, iteration and data type: the ops of perf_ops, in
-- the iteration of their kernels. Ranks without shapes have no rows.

-- perf_iteration_flops_of: the rows of the runs want_runs (a VARCHAR list; NULL: every run),
-- computed from those runs' sources only (op_kernels_of): a filter on the view's run_id stops
-- at the groups by source. tracewh export reads a run's rows through it.
CREATE OR REPLACE MACRO perf_iteration_flops_of(want_runs) AS TABLE
WITH per_shape AS (  -- by source and shape id, not by op: a few groups of integers, not millions
    SELECT file_id, iteration, shape_id, any_value(run_id) AS run_id,
           any_value(rank) AS rank, count(DISTINCT op_no) AS ops, sum(dur_ns) AS gpu_ns
    FROM op_kernels_of(want_runs, NULL, NULL, NULL, NULL, NULL, NULL)
    WHERE iteration IS NOT NULL
    GROUP BY file_id, iteration, shape_id
)
SELECT
    p.run_id,
    p.rank,
    p.iteration,
    s.dtype,                                           -- fp32, bf16, fp16, fp8, fp64
    sum(p.ops * s.flops) AS flops,                     -- FLOPs counted by the models
    CAST(sum(p.gpu_ns) FILTER (WHERE s.flops IS NOT NULL) AS BIGINT) AS gpu_ns  -- those ops' kernel time
FROM per_shape p
JOIN op_shapes s USING (shape_id)
GROUP BY ALL;

CREATE OR REPLACE VIEW perf_iteration_flops AS
SELECT * FROM perf_iteration_flops_of(NULL);
