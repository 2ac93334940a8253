-- metric: throughput
-- version: 6
-- summary: Training throughput from run metadata: tokens/s = global batch x sequence length / median iteration time
-- unit: tokens/s
-- grain: run_id
-- columns: run_id VARCHAR, batch_size BIGINT, seq_len BIGINT, iterations BIGINT, median_iteration_ns DOUBLE, samples_per_s DOUBLE, tokens_per_s DOUBLE, tflops_per_gpu DOUBLE, model_tflops_per_gpu DOUBLE, reason VARCHAR
-- params: run (text, optional), step_pattern (text, optional), include_first_last (bool, default false), parameters (float, optional)
-- see: CCL-Bench throughput_tokens_sec
-- uses: aligned_steps, perf_iteration_flops, run_cards, scope
-- complexity: O(n) in NVTX ranges (one scan of the names for iterations), O(i log i) in iterations
-- show: run_id, tokens_per_s, samples_per_s, tflops_per_gpu, median_iteration_ns, reason
--
-- v6: clock_offsets counts a grouped kernel (several collectives in one NCCL group) as one observation: nsys runs with grouped collectives get Kineto's offsets (issue 34).
-- One row per run. The iteration time is the median over iterations of the across-rank
-- iteration time (last aligned end - first aligned start over the ranks), as iteration_time
-- computes it: iterations from the iterations view or the NVTX ranges matching step_pattern,
-- first and last iteration of each rank left out unless include_first_last.
--   samples_per_s  runs.batch_size / median iteration time (global batch)
--   tokens_per_s   runs.batch_size x runs.seq_len / median iteration time
--   tflops_per_gpu FLOPs the op models count (perf_iteration_flops, as mfu) per iteration and
--                  GPU, averaged over the same iterations, / median iteration time, 10^12/s
--   model_tflops_per_gpu  6 x parameters x tokens_per_s / world size, 10^12/s: parameters from
--                  the `parameters` parameter, else workload.model.parameters of the workload card
-- Values that cannot be known are NULL and `reason` says why (no workload card batch size or
-- sequence length, no complete iteration); reason is NULL when tokens_per_s is known.
-- Version 4: a kernel's op is the one around its launching call (op_kernels), not only the
-- op whose External id the kernel carries: traces whose kernels carry the correlation id there
-- (PARAM DLRM, the HTA samples) were empty; a MIOpen convolution's bias add is the convolution's.
WITH across AS (
    SELECT * FROM aligned_steps(getvariable('step_pattern'), getvariable('include_first_last'))
),
per_run AS (
    SELECT run_id, count(*) AS iterations, median(dur_ns) AS median_iteration_ns
    FROM across GROUP BY run_id
),
counted AS (
    -- counted FLOPs of the iterations behind the median, per iteration and rank
    SELECT f.run_id, sum(f.flops) / count(DISTINCT (f.rank, f.iteration)) AS flops_per_rank_step
    FROM perf_iteration_flops f
    SEMI JOIN across a ON a.run_id = f.run_id AND a.iteration = f.iteration
    WHERE getvariable('run') IS NULL OR f.run_id = CAST(getvariable('run') AS VARCHAR)
    GROUP BY f.run_id
)
SELECT
    r.run_id,
    r.batch_size,                              -- global batch size (workload card)
    r.seq_len,                                 -- sequence length (workload card)
    coalesce(p.iterations, 0) AS iterations,   -- iterations behind the median
    p.median_iteration_ns,                     -- ns, across ranks
    r.batch_size * 1e9 / p.median_iteration_ns AS samples_per_s,
    r.batch_size * r.seq_len * 1e9 / p.median_iteration_ns AS tokens_per_s,
    c.flops_per_rank_step / p.median_iteration_ns / 1e3 AS tflops_per_gpu,
    6 * coalesce(CAST(getvariable('parameters') AS DOUBLE),
                 TRY_CAST(json_extract_string(r.metadata, '$.workload_card.workload.model.parameters')
                          AS DOUBLE))
      * (r.batch_size * r.seq_len * 1e9 / p.median_iteration_ns) / r.world_size / 1e12
      AS model_tflops_per_gpu,
    CASE WHEN p.median_iteration_ns IS NULL
             THEN CASE WHEN coalesce(CAST(getvariable('include_first_last') AS BOOLEAN), false)
                       THEN 'no complete iteration: the iterations view (or step_pattern) has none'
                       ELSE 'no complete iteration: the iterations view (or step_pattern) has none past the first and last (include_first_last=true keeps them)' END
         WHEN p.median_iteration_ns <= 0 THEN 'iteration time is zero'
         WHEN r.batch_size IS NULL AND r.seq_len IS NULL
             THEN 'runs.batch_size and runs.seq_len are NULL: no workload card with workload.data.batch_size and seq_len'
         WHEN r.batch_size IS NULL
             THEN 'runs.batch_size is NULL: no workload card with workload.data.batch_size'
         WHEN r.seq_len IS NULL
             THEN 'runs.seq_len is NULL: no workload card with workload.data.seq_len'
    END AS reason
FROM run_cards r
LEFT JOIN per_run p ON p.run_id = r.run_id
LEFT JOIN counted c ON c.run_id = r.run_id
WHERE run_match(r.run_id, getvariable('run'))
ORDER BY r.run_id;
