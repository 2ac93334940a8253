-- metric: mfu
-- version: 4
-- summary: Model FLOPs utilisation per iteration: FLOPs the op models count, and 6 x parameters x tokens from the workload card, over step time x device peak
-- unit: percent
-- grain: run_id, rank, iteration
-- columns: run_id VARCHAR, rank INTEGER, iteration INTEGER, step_ns BIGINT, counted_tflop DOUBLE, tflops_per_s DOUBLE, dtype VARCHAR, device VARCHAR, peak_tflops DOUBLE, counted_mfu_pct DOUBLE, parameters DOUBLE, tokens_per_s_per_gpu DOUBLE, model_mfu_pct DOUBLE, modelled_gpu_ns BIGINT, kernel_ns BIGINT, covered_gpu_pct DOUBLE, unmodelled_step_pct DOUBLE, reason VARCHAR
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), device (text, optional), dtype (text, optional), parameters (float, optional)
-- uses: device_peaks, iterations, kernels, perf_iteration_flops, run_cards, scope
-- complexity: O(n) in kernels, counted ops and NVTX ranges (hash joins and aggregates)
-- see: TraceLens PerfModel; CCL-Bench MFU; PaLM appendix B (6 N D)
-- show: iteration, rank, counted_mfu_pct, model_mfu_pct, tflops_per_s, step_ns, reason, run_id
--
-- One row per rank and iteration (ProfilerStep#N, the iterations view):
--   step_ns           the iteration's duration on that rank
--   counted_tflop     FLOPs of the kernel-launching ops with a model (perf_model, as in
--                     op_efficiency) whose kernels ran in the iteration, 10^12
--   dtype             the `dtype` parameter, else the data type with the most counted FLOPs
--   peak_tflops       the device's dense peak for dtype (device_peaks; device as in op_efficiency)
--   counted_mfu_pct   counted FLOPs / (step time x peak) x 100
--   model_mfu_pct     6 x parameters x tokens per second per GPU / peak x 100: parameters from
--                     the `parameters` parameter, else workload.model.parameters of the workload
--                     card; tokens = runs.batch_size x runs.seq_len (global) per step, shared by
--                     the ranks of the run
--   tflops_per_s      counted FLOPs / step time (per GPU)
--   covered_gpu_pct   kernel time of the modelled ops / all kernel time of the iteration x 100
--   unmodelled_step_pct  (step time - kernel time of the modelled ops) / step time x 100: the
--                     share of the step the models do not account for (idle, comm, unmodelled ops)
-- NULLs are explained in `reason`.
-- Version 3: a kernel's op is the one around its launching call (op_kernels), not only the
-- op whose External id the kernel carries: traces whose kernels carry the correlation id there
-- (PARAM DLRM, the HTA samples) were empty; a MIOpen convolution's bias add is the convolution's.
WITH steps AS (
    SELECT run_id, rank, iteration, dur_ns AS step_ns
    FROM iterations
    WHERE dur_ns > 0
      AND scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(iteration, getvariable('iteration_from'), getvariable('iteration_to'))
),
by_dtype AS (
    SELECT * FROM perf_iteration_flops
    WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
),
counted AS (
    SELECT run_id, rank, iteration, sum(flops) AS flops, CAST(sum(gpu_ns) AS BIGINT) AS modelled_gpu_ns,
           coalesce(CAST(getvariable('dtype') AS VARCHAR), arg_max(dtype, flops)) AS dtype
    FROM by_dtype
    GROUP BY ALL
),
all_kernels AS (
    SELECT run_id, rank, iteration, CAST(sum(dur_ns) AS BIGINT) AS kernel_ns
    FROM kernels
    WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
    GROUP BY ALL
),
card AS (
    SELECT run_id, batch_size, seq_len, world_size,
           coalesce(CAST(getvariable('parameters') AS DOUBLE),
                    TRY_CAST(json_extract_string(metadata, '$.workload_card.workload.model.parameters')
                             AS DOUBLE)) AS parameters
    FROM run_cards
),
joined AS (
    SELECT s.run_id, s.rank, s.iteration, s.step_ns,
           c.flops, coalesce(c.modelled_gpu_ns, 0) AS modelled_gpu_ns,
           coalesce(a.kernel_ns, 0) AS kernel_ns,
           coalesce(c.dtype, CAST(getvariable('dtype') AS VARCHAR)) AS dtype,
           p.device, p.peak_reason,
           CASE coalesce(c.dtype, CAST(getvariable('dtype') AS VARCHAR))
                WHEN 'fp64' THEN p.fp64_tflops WHEN 'fp32' THEN p.fp32_tflops
                WHEN 'tf32' THEN p.tf32_tflops WHEN 'bf16' THEN p.bf16_tflops
                WHEN 'fp16' THEN p.fp16_tflops WHEN 'fp8' THEN p.fp8_tflops END AS peak_tflops,
           r.parameters, r.batch_size, r.seq_len, r.world_size
    FROM steps s
    LEFT JOIN counted c USING (run_id, rank, iteration)
    LEFT JOIN all_kernels a USING (run_id, rank, iteration)
    LEFT JOIN rank_device_peaks(getvariable('device')) p USING (run_id, rank)
    LEFT JOIN card r USING (run_id)
)
SELECT
    run_id,
    rank,
    iteration,
    step_ns,                                            -- ns
    flops / 1e12 AS counted_tflop,                      -- 10^12 FLOPs
    flops / step_ns / 1e3 AS tflops_per_s,              -- per GPU
    dtype,
    device,
    peak_tflops,
    100 * flops / step_ns / 1e3 / peak_tflops AS counted_mfu_pct,
    parameters,
    CAST(batch_size AS DOUBLE) * seq_len / world_size * 1e9 / step_ns AS tokens_per_s_per_gpu,
    100 * 6 * parameters * (CAST(batch_size AS DOUBLE) * seq_len / world_size * 1e9 / step_ns)
        / (peak_tflops * 1e12) AS model_mfu_pct,
    modelled_gpu_ns,                                    -- ns
    kernel_ns,                                          -- ns, every kernel of the iteration
    100.0 * modelled_gpu_ns / nullif(kernel_ns, 0) AS covered_gpu_pct,
    100.0 * (step_ns - modelled_gpu_ns) / step_ns AS unmodelled_step_pct,
    nullif(concat_ws('; ',
        CASE WHEN flops IS NULL
             THEN 'no counted FLOPs: no kernel of the iteration was launched by an op with a model and shapes (record_shapes=False?)' END,
        peak_reason,
        CASE WHEN peak_reason IS NULL AND peak_tflops IS NULL
             THEN 'no ' || coalesce(dtype, 'data type') || ' peak for ' || device END,
        CASE WHEN parameters IS NULL
             THEN 'no parameter count: give --param parameters=N or workload.model.parameters in the workload card' END,
        CASE WHEN batch_size IS NULL OR seq_len IS NULL
             THEN 'no tokens per step: the workload card has no workload.data.batch_size and seq_len' END
    ), '') AS reason
FROM joined
ORDER BY run_id, rank, iteration;
