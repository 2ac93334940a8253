-- uses: kernels, perf_ops
-- FLOPs the performance models count per rank, iteration and data type: the ops of perf_ops, in
-- the iteration of their kernels. Ranks without shapes have no rows.
CREATE OR REPLACE VIEW perf_iteration_flops AS
WITH per_op AS (
    SELECT run_id, rank, iteration, file_id, external_id, sum(dur_ns) AS gpu_ns
    FROM kernels
    WHERE external_id IS NOT NULL AND iteration IS NOT NULL
    GROUP BY ALL
)
SELECT
    p.run_id,
    p.rank,
    p.iteration,
    o.dtype,                                           -- fp32, bf16, fp16, fp8, fp64
    sum(o.flops) AS flops,                             -- FLOPs counted by the models
    CAST(sum(p.gpu_ns) FILTER (WHERE o.flops IS NOT NULL) AS BIGINT) AS gpu_ns  -- those ops' kernel time
FROM per_op p
JOIN perf_ops o USING (run_id, rank, file_id, external_id)
GROUP BY ALL;
