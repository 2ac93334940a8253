-- metric: op_efficiency
-- version: 4
-- summary: FLOPs, bytes, TFLOP/s, TB/s and roofline position of each modelled op, per unique shape or per instance
-- unit: TFLOP/s
-- grain: run_id, rank, name, input_dims, input_types, concrete_inputs, external_id
-- columns: run_id VARCHAR, rank INTEGER, name VARCHAR, family VARCHAR, dtype VARCHAR, input_dims VARCHAR, input_types VARCHAR, concrete_inputs VARCHAR, external_id BIGINT, instances BIGINT, kernels BIGINT, gflops DOUBLE, bytes DOUBLE, gpu_ns BIGINT, gpu_ns_mean DOUBLE, tflops_per_s DOUBLE, tb_per_s DOUBLE, intensity DOUBLE, device VARCHAR, peak_tflops DOUBLE, peak_tbps DOUBLE, bound VARCHAR, pct_of_bound DOUBLE, reason VARCHAR
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), start_ns (int, optional), end_ns (int, optional), per (text, default shape), device (text, optional), kernel_time (text, default own), peaks (text, default datasheet)
-- uses: device_peaks, op_kernels, op_shapes_recorded, perf_ops, scope
-- complexity: O(n log n) in kernels and CPU ops (the launch link's sweep, launch_cpu_ops; hash joins)
-- see: TraceLens PerfModel and perf report (ops_summary by shape)
-- show: name, input_dims, tflops_per_s, pct_of_bound, bound, gpu_ns, instances, gflops, reason, run_id
--
-- The ops that launch GPU kernels (a kernel's op is the one around its launching call, op_kernels)
-- and have a performance model (perf_ops, from perf_model in sql/lib/perf_models.sql:
-- GEMM, convolution, attention, elementwise, reduction, normalisation, softmax, embedding), with the
-- GPU time of their kernels. per = 'shape' (default): one row per unique (name, Input Dims,
-- Input type, Concrete Inputs) on a rank, external_id NULL; per = 'instance': one row per op.
--   gflops, bytes     of one instance (10^9 FLOPs; bytes moved to and from device memory)
--   gpu_ns            kernel time of all its instances; gpu_ns_mean per instance
--   tflops_per_s      all FLOPs / all kernel time; tb_per_s the same for bytes (10^12 B/s)
--   intensity         FLOPs per byte
--   peak_tflops       the device's dense peak for the op's data type (device_peaks); peak_tbps.
--                     peaks = tracelens: TraceLens' arch table instead (tracelens_arch_peaks:
--                     matrix rates for GEMM, CONV and SDPA, vector rates for the rest)
--   bound             compute when intensity x peak_tbps reaches peak_tflops, else memory
--   pct_of_bound      tflops_per_s / min(peak_tflops, intensity x peak_tbps) x 100
-- The device is the `device` parameter, else the run's workload card, else the trace's; an
-- unknown one leaves the peaks NULL and `reason` says why. A rank whose trace has no shapes
-- (record_shapes=False) gets one row, name NULL, saying so, instead of a row per op.
-- Kernels whose op has no model are not here: mfu gives the share of GPU time the models cover.
-- kernel_time: what an op's gpu_ns times (op_kernels).
--   own (default)  the kernels the op itself launched (a MIOpen convolution's bias add_ too)
--   subtree        as TraceLens v1.0.0's perf sheets (GEMM, CONV, SDPA, ...): every GPU op,
--                  memsets and memcpys included, launched by the op or an op below it; kernels
--                  then counts those GPU ops
-- Differences from TraceLens v1.0.0 that stay, by design: TraceLens models the outer op where
-- tracewh models the op that launches (aten::convolution there, aten::miopen_convolution or
-- cudnn_convolution here; aten::_scaled_dot_product_flash_attention there, its
-- _flash_attention_forward too here): the same FLOPs and bytes, other names and dims layout; a
-- convolution's bias counts here (TraceLens' CONV model drops it: +1 FLOP per output element);
-- peaks come from device_peaks (datasheets) unless peaks = tracelens (TraceLens' arch table).
-- Version 3: a kernel's op is the one around its launching call (op_kernels), not only the
-- op whose External id the kernel carries: traces whose kernels carry the correlation id there
-- (PARAM DLRM, the HTA samples) were empty; a MIOpen convolution's bias add is the convolution's.
-- Version 4: kernels is a BIGINT (was a HUGEINT, which a Parquet lake holds as DECIMAL(38, 0)).
WITH picked AS (  -- each kernel with the op that launched it
    SELECT run_id, rank, file_id, shape_id, op_no, dur_ns,
           CASE WHEN coalesce(CAST(getvariable('per') AS VARCHAR), 'shape') = 'instance'
                THEN external_id END AS instance_id
    FROM op_kernels(getvariable('run'), getvariable('rank'), getvariable('iteration_from'),
                    getvariable('iteration_to'), getvariable('start_ns'), getvariable('end_ns'),
                    getvariable('kernel_time'))
),
shapes_recorded AS (
    SELECT run_id, rank, bool_or(shapes_recorded) AS has_shapes
    FROM op_shapes_recorded
    WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
    GROUP BY run_id, rank
),
per_shape AS (  -- by source and shape id, not by op: a few groups of integers, not millions
    SELECT file_id, shape_id, instance_id, any_value(run_id) AS run_id, any_value(rank) AS rank,
           count(DISTINCT op_no) AS instances, count(*) AS kernels, sum(dur_ns) AS gpu_ns
    FROM picked
    GROUP BY file_id, shape_id, instance_id
),
grouped AS (
    SELECT p.run_id, p.rank, s.name, s.input_dims, s.input_types, s.concrete_inputs, p.instance_id,
           any_value(s.family) AS family,         -- functions of name and shapes: one value
           any_value(s.dtype) AS dtype,
           any_value(s.flops) AS flops,
           any_value(s.bytes) AS bytes,
           CAST(sum(p.instances) AS BIGINT) AS instances,
           CAST(sum(p.kernels) AS BIGINT) AS kernels,
           CAST(sum(p.gpu_ns) AS BIGINT) AS gpu_ns
    FROM per_shape p
    JOIN (SELECT DISTINCT shape_id, name, input_dims, input_types, concrete_inputs, family, dtype,
                           flops, bytes FROM perf_ops) s USING (shape_id)
    GROUP BY ALL
),
peaks AS (  -- per rank: the matrix (m*) and vector (v*) rates of the table asked for (peaks);
            -- the datasheets give one rate per data type
    SELECT run_id, rank, device, peak_reason, hbm_tbps,
           fp64_tflops AS m64, fp32_tflops AS m32, bf16_tflops AS mbf16, fp16_tflops AS m16,
           fp8_tflops AS m8, fp64_tflops AS v64, fp32_tflops AS v32, bf16_tflops AS vbf16,
           fp16_tflops AS v16
    FROM rank_device_peaks(getvariable('device'))
    WHERE coalesce(CAST(getvariable('peaks') AS VARCHAR), 'datasheet') = 'datasheet'
    UNION ALL BY NAME
    SELECT run_id, rank, device, peak_reason, hbm_tbps, m64, m32, mbf16, m16, m8, v64, v32, vbf16, v16
    FROM rank_tracelens_peaks(getvariable('device'))
    WHERE CASE coalesce(CAST(getvariable('peaks') AS VARCHAR), 'datasheet')
              WHEN 'tracelens' THEN true WHEN 'datasheet' THEN false
              ELSE error('peaks must be datasheet or tracelens, not '
                         || CAST(getvariable('peaks') AS VARCHAR)) END
),
rated AS (
    SELECT g.*, p.device, p.peak_reason, p.hbm_tbps AS peak_tbps,
           CASE WHEN g.family IN ('GEMM', 'CONV_fwd', 'CONV_bwd', 'SDPA_fwd', 'SDPA_bwd')
                THEN CASE g.dtype WHEN 'fp64' THEN p.m64 WHEN 'fp32' THEN p.m32
                                  WHEN 'bf16' THEN p.mbf16 WHEN 'fp16' THEN p.m16 WHEN 'fp8' THEN p.m8 END
                ELSE CASE g.dtype WHEN 'fp64' THEN p.v64 WHEN 'fp32' THEN p.v32
                                  WHEN 'bf16' THEN p.vbf16 WHEN 'fp16' THEN p.v16 END
           END AS peak_tflops,
           g.flops * g.instances / nullif(g.gpu_ns, 0) / 1e3 AS tflops_per_s,
           g.bytes * g.instances / nullif(g.gpu_ns, 0) / 1e3 AS tb_per_s,
           g.flops / nullif(g.bytes, 0) AS intensity
    FROM grouped g
    LEFT JOIN peaks p USING (run_id, rank)
)
SELECT * FROM (
SELECT
    run_id,
    rank,
    name,                         -- the op that launched the kernels
    family,                       -- GEMM, CONV_fwd, SDPA_fwd, elementwise_binary, ...
    dtype,                        -- fp32, bf16, fp16, fp8, fp64 (NULL: no peak applies)
    input_dims,
    input_types,
    concrete_inputs,
    instance_id AS external_id,   -- per = 'instance' only
    instances,
    kernels,
    flops / 1e9 AS gflops,        -- per instance
    bytes,                        -- per instance
    gpu_ns,                       -- ns, all instances
    gpu_ns / instances AS gpu_ns_mean,
    tflops_per_s,
    tb_per_s,
    intensity,                    -- FLOP/byte
    device,
    peak_tflops,
    peak_tbps,
    CASE WHEN intensity * peak_tbps >= peak_tflops THEN 'compute'
         WHEN intensity * peak_tbps < peak_tflops THEN 'memory' END AS bound,
    100 * tflops_per_s / least(peak_tflops, intensity * peak_tbps) AS pct_of_bound,
    CASE WHEN flops IS NULL THEN 'the model gives no FLOPs for these shapes'
         WHEN peak_reason IS NOT NULL THEN peak_reason
         WHEN peak_tflops IS NULL THEN 'no ' || coalesce(dtype, 'known data type') || ' peak for ' || device
    END AS reason
FROM rated
UNION ALL BY NAME
SELECT run_id, rank,
       'no shapes: the trace was recorded with record_shapes=False, so no op has FLOPs' AS reason
FROM shapes_recorded
WHERE NOT has_shapes
)
ORDER BY run_id, rank, gpu_ns DESC NULLS LAST, name, input_dims, external_id;
