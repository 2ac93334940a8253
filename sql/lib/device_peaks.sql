-- uses: devices, ranks, run_hardware
-- device_peaks(), version 2: dense (no 2:4 sparsity) peak TFLOP/s per data type and HBM bandwidth
-- per GPU, from the vendors' datasheets; each row names its source. A device name (devices.name,
-- a workload card's workload.hardware.xpu_spec.model, or a metric's `device` parameter) matches
-- the first row, by `priority`, whose `pattern` it matches (ILIKE): rank_device_peaks below.
-- fp16/bf16/tf32/fp8 are tensor-core (matrix-core) peaks; fp32 and fp64 are the vector peaks, the rate plain FP32 math and FP64 without tensor cores reach. NULL:
-- the device has no such rate (V100: no bf16, tf32, fp8), or its datasheet does not give one.
-- Editing a row changes every metric that reads it: raise the version above and say so.
-- Version 2: MI250X per GCD (version 1 gave the two-die module's peaks to each rank). Checked
-- against the datasheet figures on 2026-11-24: V100, A100 40/80 GB, H100 NVL, H200, L40S,
-- MI250X, MI325X (dense = half the "with sparsity" figures NVIDIA prints).
-- A table macro, not a view: views are per-run data (the Parquet lake partitions them by run).
-- Shell: SELECT * FROM device_peaks();
CREATE OR REPLACE MACRO device_peaks() AS TABLE
SELECT
    2 AS table_version,
    device,           -- key
    pattern,          -- ILIKE pattern over device names
    priority,         -- first match wins (specific variants before the family)
    CAST(fp64_tflops AS DOUBLE) AS fp64_tflops,   -- dense peaks, TFLOP/s
    CAST(fp32_tflops AS DOUBLE) AS fp32_tflops,
    CAST(tf32_tflops AS DOUBLE) AS tf32_tflops,
    CAST(bf16_tflops AS DOUBLE) AS bf16_tflops,
    CAST(fp16_tflops AS DOUBLE) AS fp16_tflops,
    CAST(fp8_tflops AS DOUBLE) AS fp8_tflops,
    CAST(hbm_tbps AS DOUBLE) AS hbm_tbps,         -- TB/s (10^12 bytes/s)
    source
FROM (VALUES
    ('V100 PCIe', '%V100%PCIe%', 10, 7.0, 14.0, NULL, NULL, 112.0, NULL, 0.9,
     'NVIDIA Tesla V100 GPU Accelerator datasheet (PCIe column)'),
    ('V100 SXM2', '%V100%', 11, 7.8, 15.7, NULL, NULL, 125.0, NULL, 0.9,
     'NVIDIA Tesla V100 GPU Accelerator datasheet (SXM2 column)'),
    ('A100 PCIe 40GB', '%A100%PCIe%40GB%', 20, 9.7, 19.5, 156.0, 312.0, 312.0, NULL, 1.555,
     'NVIDIA A100 Tensor Core GPU datasheet (A100 40GB PCIe column; dense = half the sparsity figures)'),
    ('A100 PCIe 80GB', '%A100%PCIe%', 21, 9.7, 19.5, 156.0, 312.0, 312.0, NULL, 1.935,
     'NVIDIA A100 Tensor Core GPU datasheet (A100 80GB PCIe column)'),
    ('A100 SXM 80GB', '%A100%80GB%', 22, 9.7, 19.5, 156.0, 312.0, 312.0, NULL, 2.039,
     'NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM column)'),
    ('A100 SXM 40GB', '%A100%', 23, 9.7, 19.5, 156.0, 312.0, 312.0, NULL, 1.555,
     'NVIDIA A100 Tensor Core GPU datasheet (A100 40GB SXM column)'),
    ('H100 PCIe', '%H100%PCIe%', 30, 26.0, 51.0, 378.0, 756.5, 756.5, 1513.0, 2.0,
     'NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe column; dense = half the sparsity figures)'),
    ('H100 NVL', '%H100 NVL%', 31, 30.0, 60.0, 417.5, 835.5, 835.5, 1670.5, 3.9,
     'NVIDIA H100 Tensor Core GPU datasheet (H100 NVL column, per GPU; dense = half the sparsity figures)'),
    ('H100 SXM', '%H100%', 32, 34.0, 67.0, 494.5, 989.5, 989.5, 1979.0, 3.35,
     'NVIDIA H100 Tensor Core GPU datasheet (H100 SXM column; dense = half the sparsity figures)'),
    ('H200 SXM', '%H200%', 40, 34.0, 67.0, 494.5, 989.5, 989.5, 1979.0, 4.8,
     'NVIDIA H200 Tensor Core GPU datasheet (H200 SXM column; dense = half the sparsity figures)'),
    ('GB200', '%GB200%', 50, 45.0, 90.0, 1250.0, 2500.0, 2500.0, 5000.0, 8.0,
     'NVIDIA GB200 NVL72 datasheet, per Blackwell GPU (dense = half the sparsity figures)'),
    ('B200', '%B200%', 51, 40.0, 80.0, 1100.0, 2250.0, 2250.0, 4500.0, 8.0,
     'NVIDIA Blackwell datasheet, HGX B200 column, per GPU (dense = half the sparsity figures)'),
    ('L40S', '%L40S%', 60, NULL, 91.6, 183.0, 362.05, 362.05, 733.0, 0.864,
     'NVIDIA L40S GPU datasheet (dense = half the sparsity figures)'),
    ('MI250X', '%MI250X%', 70, 23.95, 23.95, NULL, 191.5, 191.5, NULL, 1.6384,
     'AMD Instinct MI250X accelerator data sheet, per GCD: the module''s vector FP64/FP32 47.9, '
     || 'matrix FP16/BF16 383 TFLOP/s and 3.2768 TB/s halved, as ROCm shows each of its two GCDs '
     || 'as a GPU of its own and a rank runs on one (Pawsey Setonix GPU node docs)'),
    ('MI300X', '%MI300X%', 80, 81.7, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 5.3,
     'AMD Instinct MI300X accelerator data sheet (vector FP64/FP32, matrix TF32/FP16/BF16/FP8, dense)'),
    ('MI325X', '%MI325X%', 81, 81.7, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 6.0,
     'AMD Instinct MI325X accelerator data sheet (vector FP64/FP32, matrix TF32/FP16/BF16/FP8, dense)')
) AS p(device, pattern, priority, fp64_tflops, fp32_tflops, tf32_tflops, bf16_tflops, fp16_tflops,
       fp8_tflops, hbm_tbps, source);


-- rank_device_peaks(device): the device of every rank and its peaks. The name comes from, in
-- order: the `device` argument (a metric parameter: one name for every run), the run's workload
-- card (workload.hardware.xpu_spec.model), the trace (devices.name). A name that matches no row,
-- or no name at all, gives NULL peaks and says why in peak_reason: never a guess.
-- Output: run_id, rank, device_name, device_source (parameter, workload card, trace), device,
-- the device_peaks columns, peak_reason (NULL when the device is known).
-- rank_device_names(device): each rank's device name and where it came from (rank_device_peaks).
CREATE OR REPLACE MACRO rank_device_names(device_param) AS TABLE
SELECT k.run_id, k.rank,
       coalesce(CAST(device_param AS VARCHAR), c.card_model, d.name) AS device_name,
       CASE WHEN device_param IS NOT NULL THEN 'parameter'
            WHEN c.card_model IS NOT NULL THEN 'workload card'
            WHEN d.name IS NOT NULL THEN 'trace' END AS device_source
FROM ranks k
LEFT JOIN (SELECT run_id, xpu_model AS card_model FROM run_hardware) c USING (run_id)
LEFT JOIN (SELECT run_id, rank, min(name) AS name FROM devices
           WHERE rank IS NOT NULL AND name IS NOT NULL GROUP BY run_id, rank) d USING (run_id, rank);

CREATE OR REPLACE MACRO rank_device_peaks(device_param) AS TABLE
SELECT n.run_id, n.rank, n.device_name, n.device_source, p.device,
       p.fp64_tflops, p.fp32_tflops, p.tf32_tflops, p.bf16_tflops, p.fp16_tflops, p.fp8_tflops,
       p.hbm_tbps, p.source AS peak_source,
       CASE WHEN n.device_name IS NULL
                THEN 'no device name: the trace names no GPU and no workload card or device parameter gives one'
            WHEN p.device IS NULL
                THEN 'device ''' || n.device_name || ''' is not in device_peaks (version '
                     || (SELECT max(table_version) FROM device_peaks()) || ')'
       END AS peak_reason
FROM rank_device_names(device_param) n
LEFT JOIN device_peaks() p ON n.device_name ILIKE p.pattern
QUALIFY row_number() OVER (PARTITION BY n.run_id, n.rank ORDER BY p.priority NULLS LAST) = 1;

-- TraceLens v1.0.0's own peaks (TraceLens/Agent/Analysis/utils/arch/*.json: "max achievable"
-- TFLOP/s and mem_bw_gbps), which its roofline uses where device_peaks gives datasheet figures:
-- matrix rates for GEMM, convolution and attention, vector rates for the rest. Only the GPUs
-- its table has. Shell: SELECT * FROM tracelens_arch_peaks();
CREATE OR REPLACE MACRO tracelens_arch_peaks() AS TABLE
SELECT device, pattern, priority, hbm_tbps,
       m64, m32, mbf16, m16, m8,     -- matrix TFLOP/s: fp64, fp32, bf16, fp16, fp8
       v64, v32, vbf16, v16,         -- vector TFLOP/s
       source
FROM (VALUES
    ('MI325X', '%MI325X%', 10, 6.0, 97.0, 194.0, 843.0, 794.0, 1519.0, 48.0, 97.0, 194.0, 194.0,
     'TraceLens v1.0.0 Agent/Analysis/utils/arch/MI325X.json'),
    ('MI300X', '%MI300X%', 20, 5.3, 81.0, 163.0, 708.0, 654.0, 1273.0, 40.0, 81.0, 163.0, 163.0,
     'TraceLens v1.0.0 Agent/Analysis/utils/arch/MI300X.json')
) AS t(device, pattern, priority, hbm_tbps, m64, m32, mbf16, m16, m8, v64, v32, vbf16, v16, source);

-- rank_tracelens_peaks(device): as rank_device_peaks, from TraceLens' table.
CREATE OR REPLACE MACRO rank_tracelens_peaks(device_param) AS TABLE
SELECT n.run_id, n.rank, n.device_name, n.device_source, p.device, p.m64, p.m32, p.mbf16,
       p.m16, p.m8, p.v64, p.v32, p.vbf16, p.v16, p.hbm_tbps, p.source AS peak_source,
       CASE WHEN n.device_name IS NULL
                THEN 'no device name: the trace names no GPU and no workload card or device parameter gives one'
            WHEN p.device IS NULL
                THEN 'device ''' || n.device_name || ''' is not in TraceLens'' arch table (MI300X, MI325X)'
       END AS peak_reason
FROM rank_device_names(device_param) n
LEFT JOIN tracelens_arch_peaks() p ON n.device_name ILIKE p.pattern
QUALIFY row_number() OVER (PARTITION BY n.run_id, n.rank ORDER BY p.priority NULLS LAST) = 1;
