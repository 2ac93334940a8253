-- uses: kernels, op_shapes, perf_ops
-- FLOPs the performance models count per rank, iteration and data type: the ops of perf_ops, in
-- the iteration of their kernels. Ranks without shapes have no rows.
CREATE OR REPLACE VIEW perf_iteration_flops AS
WITH per_shape AS (  -- by source and shape id, not by op: a few groups of integers, not millions
    SELECT o.file_id, k.iteration, o.shape_id, any_value(o.run_id) AS run_id,
           any_value(o.rank) AS rank, count(DISTINCT o.op_no) AS ops, sum(k.dur_ns) AS gpu_ns
    FROM kernels k
    JOIN perf_ops o ON o.file_id = k.file_id AND o.external_id = k.external_id
    WHERE k.external_id IS NOT NULL AND k.iteration IS NOT NULL
    GROUP BY o.file_id, k.iteration, o.shape_id
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
