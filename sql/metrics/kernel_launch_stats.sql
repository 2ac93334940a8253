-- metric: kernel_launch_stats
-- version: 5
-- summary: CPU time of the launch calls, GPU time, launch delays and outliers per rank and stream, or per GPU op launch
-- unit: ns
-- grain: run_id, rank, stream_id, correlation_id, start_ns
-- columns: run_id VARCHAR, rank INTEGER, correlation_id BIGINT, stream_id BIGINT, start_ns BIGINT, op VARCHAR, name VARCHAR, api_name VARCHAR, cpu_dur_ns BIGINT, gpu_dur_ns BIGINT, launch_delay_ns BIGINT, short_gpu BOOLEAN, runtime_outlier BOOLEAN, delay_outlier BOOLEAN, launches BIGINT, short_gpu_ops BIGINT, runtime_outliers BIGINT, delay_outliers BIGINT
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), runtime_cutoff_us (float, default 50), launch_delay_cutoff_us (float, default 100), include_memory_events (bool, default true), hta_launch_names (bool, default false), per_launch (bool, default false)
-- uses: gpu_op_calls, ranks, scope
-- complexity: O(n) in GPU ops (hash join to the launching call on its correlation id)
-- see: HTA get_cuda_kernel_launch_stats
-- show: name, launch_delay_ns, cpu_dur_ns, gpu_dur_ns, rank, api_name, run_id
--
-- Each GPU op (kernel, memcpy, memset) and the CUDA API call that launched it (same file,
-- process and correlation id; the first such call when a driver call shares the id):
--   cpu_dur_ns      the launch call's duration
--   gpu_dur_ns      the op's duration
--   launch_delay_ns GPU start - the call's end, clipped at 0 (HTA clips it too)
--   short_gpu       gpu_dur_ns < cpu_dur_ns: launching took longer than running
--   runtime_outlier cpu_dur_ns > runtime_cutoff_us (HTA's default 50 us)
--   delay_outlier   launch_delay_ns > launch_delay_cutoff_us (HTA's default 100 us)
-- Default: one row per rank and stream, the op columns (correlation_id, start_ns, op, name,
-- api_name) NULL, cpu_dur_ns, gpu_dur_ns and launch_delay_ns summed over its launches (divide
-- by launches for the mean), the flags NULL, and its counts launches, short_gpu_ops,
-- runtime_outliers, delay_outliers. per_launch = true: one row per launch (v4's answer), the
-- counts then the rank's, on each of its rows (8 M launches: 8 M rows).
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
    SELECT g.run_id, g.rank, g.rank_key, g.correlation_id, g.stream_id, g.start_ns, g.op, g.name,
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
SELECT * FROM (  -- one query of the two shapes, as the transpiler asks
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
    WHERE coalesce(CAST(getvariable('per_launch') AS BOOLEAN), false)
    UNION ALL
    SELECT r.run_id, r.rank, NULL, f.stream_id, NULL, NULL, NULL, NULL, f.cpu_dur_ns, f.gpu_dur_ns,
           f.launch_delay_ns, NULL, NULL, NULL, f.launches, f.short_gpu_ops, f.runtime_outliers,
           f.delay_outliers
    FROM (SELECT rank_key, stream_id,  -- grouped by the rank's BIGINT key, not its run's text
                 CAST(sum(cpu_dur_ns) AS BIGINT) AS cpu_dur_ns,
                 CAST(sum(gpu_dur_ns) AS BIGINT) AS gpu_dur_ns,
                 CAST(sum(launch_delay_ns) AS BIGINT) AS launch_delay_ns,
                 count(*) AS launches,
                 count(*) FILTER (WHERE short_gpu) AS short_gpu_ops,
                 count(*) FILTER (WHERE runtime_outlier) AS runtime_outliers,
                 count(*) FILTER (WHERE delay_outlier) AS delay_outliers
          FROM flagged
          WHERE NOT coalesce(CAST(getvariable('per_launch') AS BOOLEAN), false)
          GROUP BY rank_key, stream_id) f
    JOIN ranks r USING (rank_key)
)
ORDER BY run_id, rank, start_ns, stream_id, correlation_id;
