-- metric: queue_length
-- version: 3
-- summary: Per stream, how many launched GPU ops wait to start: distribution and time at the limit
-- unit: ops
-- grain: run_id, rank, device_id, stream_id
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), queue_limit (int, default 1024), hta_launch_names (bool, default false), launch_first (bool, default false), hta_float_us (bool, default false)
-- uses: gpu_op_calls, scope
-- see: HTA get_queue_length_summary, get_time_spent_blocked_on_full_queue
--
-- A stream's queue holds the ops launched on it that have not started: +1 at the start of the
-- CUDA API call that launched an op (same file, process and correlation id), -1 when the op
-- starts on the GPU. Each change is one sample of the queue length; per stream:
--   samples, mean_len, std_len (sample std), min_len, p25_len, p50_len, p75_len (linear
--   interpolation, as pandas' describe), max_len: over the samples, not weighted by time, as HTA
--   time_at_limit_ns: time the queue held queue_limit ops or more (CUDA's launch queue holds
--   1024: the host then blocks in the launch call)
-- Changes at one instant: GPU starts first (the queue does not peak for an instant), launches
-- first with launch_first = true. HTA sorts the changes with pandas' unstable sort, so its tie
-- order is arbitrary: its samples lie between the two orders (each prefix sum of launch-first
-- is at least any other order's, and gpu-first's at most), and so do its mean and quantiles.
-- HTA orders by float64 µs: traces whose `ts` is epoch µs with ns decimals (April 2024) lose
-- ns there (a double holds 0.25 µs at 1.7e15 µs); hta_float_us = true orders by that double.
-- Ops without a launching call in the trace are left out (they were queued before it began).
-- hta_launch_names = true counts only launches by the calls HTA 0.5.0 knows: cudaLaunchKernel,
-- cudaLaunchKernelExC, cuLaunchKernel, cudaMemcpyAsync, cudaMemsetAsync, hipLaunchKernel,
-- hipExtModuleLaunchKernel, hipMemcpyAsync, hipMemsetAsync, hipMemcpyWithStream (tracewh: any).
-- iteration_from / iteration_to keep ops launched in those iterations (inclusive).
WITH ops AS (
    SELECT g.run_id, g.rank, g.device_id, g.stream_id, g.launch_ns AS api_start_ns, g.start_ns
    FROM gpu_op_calls g
    WHERE scope_match(g.run_id, g.rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(g.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
      AND (NOT coalesce(CAST(getvariable('hta_launch_names') AS BOOLEAN), false)
           OR g.api_name IN ('cudaLaunchKernel', 'cudaLaunchKernelExC', 'cuLaunchKernel',
                             'cudaMemcpyAsync', 'cudaMemsetAsync', 'hipLaunchKernel',
                             'hipExtModuleLaunchKernel', 'hipMemcpyAsync', 'hipMemsetAsync',
                             'hipMemcpyWithStream'))
), streams AS (
    -- one integer per stream: the sort and the scan below carry it, not four columns
    SELECT run_id, rank, device_id, stream_id,
           row_number() OVER (ORDER BY run_id, rank, device_id, stream_id) AS grp
    FROM (SELECT DISTINCT run_id, rank, device_id, stream_id FROM ops)
), changes AS (
    SELECT s.grp, o.api_start_ns AS ts,
           CASE WHEN coalesce(CAST(getvariable('launch_first') AS BOOLEAN), false) THEN 0 ELSE 1 END
               AS phase, 1 AS delta
    FROM ops o JOIN streams s USING (run_id, rank, device_id, stream_id)
    UNION ALL
    SELECT s.grp, o.start_ns,
           CASE WHEN coalesce(CAST(getvariable('launch_first') AS BOOLEAN), false) THEN 1 ELSE 0 END,
           -1
    FROM ops o JOIN streams s USING (run_id, rank, device_id, stream_id)
), ordered AS (
    -- the sort key: ns, or HTA's double of µs (from the decimal text: rounded once, as a
    -- JSON parser rounds the file's number)
    SELECT grp, ts, delta
    FROM changes
    ORDER BY grp,
             CASE WHEN coalesce(CAST(getvariable('hta_float_us') AS BOOLEAN), false)
                  THEN CAST(CAST(ts // 1000 AS VARCHAR) || '.' || lpad(CAST(ts % 1000 AS VARCHAR), 3, '0')
                            AS DOUBLE) END,
             CASE WHEN NOT coalesce(CAST(getvariable('hta_float_us') AS BOOLEAN), false) THEN ts END,
             phase
), samples AS (
    -- one streaming scan in sorted order (empty OVER (), as sql/lib/intervals.sql does:
    -- partitioned running sums cost 3-4x): each stream's +1/-1 cancel before the next starts
    SELECT grp, ts,
           CAST(sum(delta) OVER (ROWS UNBOUNDED PRECEDING) AS BIGINT) AS len,
           lead(ts) OVER () AS next_ts, lead(grp) OVER () AS next_grp
    FROM ordered
), per_stream AS (
    SELECT grp,
           count(*) AS samples,
           avg(len) AS mean_len,
           stddev_samp(len) AS std_len,
           min(len) AS min_len,
           quantile_cont(len, 0.25) AS p25_len,
           quantile_cont(len, 0.5) AS p50_len,
           quantile_cont(len, 0.75) AS p75_len,
           max(len) AS max_len,
           coalesce(sum(next_ts - ts) FILTER (
               WHERE next_grp = grp
                 AND len >= coalesce(CAST(getvariable('queue_limit') AS BIGINT), 1024)), 0)
               AS time_at_limit_ns
    FROM samples
    GROUP BY grp
)
SELECT run_id, rank, device_id, stream_id, samples, mean_len, std_len, min_len, p25_len, p50_len,
       p75_len, max_len,
       time_at_limit_ns  -- ns
FROM per_stream JOIN streams USING (grp)
ORDER BY run_id, rank, device_id, stream_id;
