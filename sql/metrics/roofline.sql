-- metric: roofline
-- version: 2
-- summary: Per run, each op family at its FLOPs per byte and TFLOP/s, and the device roofs it runs under
-- unit: TFLOP/s
-- grain: run_id, family, device, dtype
-- columns: run_id VARCHAR, family VARCHAR, device VARCHAR, dtype VARCHAR, flops DOUBLE, bytes DOUBLE, gpu_ns BIGINT, gpu_pct DOUBLE, intensity DOUBLE, tflops_per_s DOUBLE, peak_tflops DOUBLE, peak_tbps DOUBLE, ridge_intensity DOUBLE, reason VARCHAR
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), start_ns (int, optional), end_ns (int, optional), device (text, optional)
-- uses: device_peaks, op_kernels, perf_ops
-- complexity: O(n) in kernels of modelled ops (hash joins on shape and launch ids, a hash aggregate per family)
-- see: op_efficiency (the same ops per shape); Williams, Waterman, Patterson: Roofline (CACM 2009)
-- show: family, tflops_per_s, gpu_pct, intensity, peak_tflops, device, reason, run_id
--
-- What the report's roofline figure draws, over the modelled ops that launched kernels (as
-- op_efficiency: a kernel's External id names its op; shapes with FLOPs, bytes and kernel time).
-- Two kinds of rows per run:
--   a family (family set; device and dtype NULL): all its shapes and ranks together
--     flops, bytes      FLOPs and bytes of all its instances
--     gpu_ns            kernel time of all its instances; gpu_pct its share of the run's
--                       modelled kernel time
--     intensity         flops / bytes (FLOP/byte); tflops_per_s = flops / gpu_ns / 1e3
--   a roof (family NULL): a (device, dtype) some of those ops ran as
--     peak_tflops, peak_tbps   the device's dense peak for the data type and its HBM bandwidth
--                       (device_peaks); the roof is min(peak_tflops, intensity x peak_tbps)
--     ridge_intensity   peak_tflops / peak_tbps: where the roof turns flat
--     reason            why there is no roof (unknown device, no peak for the data type);
--                       the peaks are NULL then
-- The device is the `device` parameter, else the run's workload card, else the trace's.
-- Version 2: a kernel's op is the one around its launching call (op_kernels), not only the
-- op whose External id the kernel carries: traces whose kernels carry the correlation id there
-- (PARAM DLRM, the HTA samples) were empty; a MIOpen convolution's bias add is the convolution's.
WITH launched AS (  -- kernel time of each op's shape, per rank
    SELECT run_id, rank, shape_id, count(DISTINCT op_no) AS instances, sum(dur_ns) AS gpu_ns
    FROM op_kernels(getvariable('run'), getvariable('rank'), getvariable('iteration_from'),
                    getvariable('iteration_to'), getvariable('start_ns'), getvariable('end_ns'), NULL)
    GROUP BY run_id, rank, file_id, shape_id
),
modelled AS (  -- the shapes with FLOPs, bytes and kernel time, and their rank's peaks
    SELECT l.run_id, s.family, s.dtype, s.flops * l.instances AS flops,
           s.bytes * l.instances AS bytes, l.gpu_ns, p.device, p.peak_reason,
           p.hbm_tbps AS peak_tbps,
           CASE s.dtype WHEN 'fp64' THEN p.fp64_tflops WHEN 'fp32' THEN p.fp32_tflops
                        WHEN 'bf16' THEN p.bf16_tflops WHEN 'fp16' THEN p.fp16_tflops
                        WHEN 'fp8' THEN p.fp8_tflops END AS peak_tflops
    FROM launched l
    JOIN (SELECT DISTINCT shape_id, family, dtype, flops, bytes FROM perf_ops) s USING (shape_id)
    LEFT JOIN rank_device_peaks(getvariable('device')) p USING (run_id, rank)
    WHERE s.flops > 0 AND s.bytes > 0 AND l.gpu_ns > 0
),
families AS (
    SELECT run_id, family, sum(flops) AS flops, sum(bytes) AS bytes,
           CAST(sum(gpu_ns) AS BIGINT) AS gpu_ns
    FROM modelled
    GROUP BY run_id, family
),
roofs AS (
    SELECT run_id, device, dtype, any_value(peak_tflops) AS peak_tflops,
           any_value(peak_tbps) AS peak_tbps,
           coalesce(any_value(peak_reason), CASE WHEN any_value(peak_tflops) IS NULL
               THEN 'no ' || coalesce(dtype, 'known data type') || ' peak for ' || device
           END) AS reason
    FROM modelled
    GROUP BY run_id, device, dtype
)
SELECT * FROM (
SELECT
    run_id,
    family,                       -- GEMM, CONV_fwd, SDPA_fwd, ... (NULL on a roof row)
    CAST(NULL AS VARCHAR) AS device,
    CAST(NULL AS VARCHAR) AS dtype,
    flops,
    bytes,
    gpu_ns,
    100 * gpu_ns / sum(gpu_ns) OVER (PARTITION BY run_id) AS gpu_pct,
    flops / bytes AS intensity,   -- FLOP/byte
    flops / gpu_ns / 1e3 AS tflops_per_s,
    CAST(NULL AS DOUBLE) AS peak_tflops,
    CAST(NULL AS DOUBLE) AS peak_tbps,
    CAST(NULL AS DOUBLE) AS ridge_intensity,
    CAST(NULL AS VARCHAR) AS reason
FROM families
UNION ALL
SELECT run_id, NULL, device, dtype, NULL, NULL, NULL, NULL, NULL, NULL,
       peak_tflops, peak_tbps, peak_tflops / peak_tbps, reason
FROM roofs
)
ORDER BY run_id, family NULLS LAST, device, dtype;
