-- metric: kernel_launch_stats
-- version: 4
-- summary: Per GPU op launch: CPU time of the launch call, GPU time, launch delay, outliers
-- unit: ns
-- grain: run_id, rank, correlation_id, stream_id, start_ns
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), runtime_cutoff_us (float, default 50), launch_delay_cutoff_us (float, default 100), include_memory_events (bool, default true), hta_launch_names (bool, default false)
-- uses: gpu_op_calls, scope
-- see: HTA get_cuda_kernel_launch_stats
--
-- One row per GPU op (kernel, memcpy, memset) and the CUDA API call that launched it (same
-- file, process and correlation id; the first such call when a driver call shares the id):
--   cpu_dur_ns      the launch call's duration
--   gpu_dur_ns      the op's duration
--   launch_delay_ns GPU start - the call's end, clipped at 0 (HTA clips it too)
--   short_gpu       gpu_dur_ns < cpu_dur_ns: launching took longer than running
--   runtime_outlier cpu_dur_ns > runtime_cutoff_us (HTA's default 50 us)
--   delay_outlier   launch_delay_ns > launch_delay_cutoff_us (HTA's default 100 us)
-- and per rank: launches, short_gpu_ops, runtime_outliers, delay_outliers.
-- Differences from HTA 0.5.0 (tests/peer/hta_launch_queue.py checks the rest row for row):
--   - tracewh takes every launching call, whatever its name (cuLaunchKernel, cudaGraphLaunch,
--     hipLaunchKernel, ...). HTA knows cudaLaunchKernel, cudaLaunchKernelExC and, with
--     include_memory_events, cudaMemcpyAsync and cudaMemsetAsync: hta_launch_names = true keeps
--     those alone (HTA then has no row on ROCm traces). include_memory_events = false drops
--     memcpy/memset launched by any call.
--   - HTA reads times in the file's µs, and rounds every event inward to whole µs when the
--     file has fractional timestamps (newer traces); tracewh keeps ns.
-- iteration_from / iteration_to keep ops launched in those iterations (inclusive).
WITH launches AS (
    SELECT g.run_id, g.rank, g.correlation_id, g.stream_id, g.start_ns, g.op, g.name,
           g.api_name,
           g.launch_end_ns - g.launch_ns AS cpu_dur_ns,
           g.dur_ns AS gpu_dur_ns,
           greatest(g.start_ns - g.launch_end_ns, 0) AS launch_delay_ns
    FROM gpu_op_calls g
    WHERE scope_match(g.run_id, g.rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(g.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
      AND (coalesce(CAST(getvariable('include_memory_events') AS BOOLEAN), true)
           OR g.op = 'kernel')
      AND (NOT coalesce(CAST(getvariable('hta_launch_names') AS BOOLEAN), false)
           OR g.api_name IN ('cudaLaunchKernel', 'cudaLaunchKernelExC')
           OR (coalesce(CAST(getvariable('include_memory_events') AS BOOLEAN), true)
               AND g.api_name IN ('cudaMemcpyAsync', 'cudaMemsetAsync')))
), flagged AS (
    SELECT *,
           gpu_dur_ns < cpu_dur_ns AS short_gpu,
           cpu_dur_ns > coalesce(CAST(getvariable('runtime_cutoff_us') AS DOUBLE), 50) * 1000
               AS runtime_outlier,
           launch_delay_ns
               > coalesce(CAST(getvariable('launch_delay_cutoff_us') AS DOUBLE), 100) * 1000
               AS delay_outlier
    FROM launches
)
SELECT
    run_id,
    rank,
    correlation_id,
    stream_id,
    start_ns,              -- the op's GPU start, UTC ns
    op,                    -- kernel | memcpy | memset
    name,                  -- the op's name
    api_name,              -- the launching call
    cpu_dur_ns,            -- ns
    gpu_dur_ns,            -- ns
    launch_delay_ns,       -- ns, >= 0
    short_gpu,
    runtime_outlier,
    delay_outlier,
    c.launches,
    c.short_gpu_ops,
    c.runtime_outliers,
    c.delay_outliers
FROM flagged
-- per-rank counts as one aggregate joined back (count(*) FILTER ... OVER (PARTITION BY ...) took
-- minutes on 1 M launches; this takes under a second)
JOIN (SELECT run_id, rank, count(*) AS launches,
             count(*) FILTER (WHERE short_gpu) AS short_gpu_ops,
             count(*) FILTER (WHERE runtime_outlier) AS runtime_outliers,
             count(*) FILTER (WHERE delay_outlier) AS delay_outliers
      FROM flagged GROUP BY run_id, rank) c USING (run_id, rank)
ORDER BY run_id, rank, start_ns, stream_id, correlation_id;
