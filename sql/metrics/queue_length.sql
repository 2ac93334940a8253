-- metric: queue_length
-- version: 3
-- summary: Per stream, how many launched GPU ops wait to start: distribution and time at the limit
-- unit: ops
-- grain: run_id, rank, device_id, stream_id
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), queue_limit (int, default 1024), hta_launch_names (bool, default false), launch_first (bool, default false), hta_float_us (bool, default false)
-- uses: gpu_op_calls, gpu_ops, ranks, scope
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
-- How: without hta_launch_names no call is read (gpu_ops.launch_ns is the launching call's
-- start); the changes are sorted once by stream and time and summed in one streaming scan; the
-- quantiles are read off each stream's histogram of lengths (few distinct values), not sorted.
WITH ops AS (
    SELECT g.rank_key, g.device_id, g.stream_id, g.launch_ns AS api_start_ns, g.start_ns
    FROM gpu_ops g
    WHERE g.launch_ns IS NOT NULL
      AND NOT coalesce(CAST(getvariable('hta_launch_names') AS BOOLEAN), false)
      AND scope_match(g.run_id, g.rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(g.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
    UNION ALL
    SELECT g.rank_key, g.device_id, g.stream_id, g.launch_ns, g.start_ns
    FROM gpu_op_calls g
    WHERE coalesce(CAST(getvariable('hta_launch_names') AS BOOLEAN), false)
      AND g.api_name IN ('cudaLaunchKernel', 'cudaLaunchKernelExC', 'cuLaunchKernel',
                         'cudaMemcpyAsync', 'cudaMemsetAsync', 'hipLaunchKernel',
                         'hipExtModuleLaunchKernel', 'hipMemcpyAsync', 'hipMemsetAsync',
                         'hipMemcpyWithStream')
      AND scope_match(g.run_id, g.rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(g.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
), changes AS (
    -- each op twice: +1 at its launch, -1 at its GPU start
    SELECT o.rank_key, o.device_id, o.stream_id, d.delta,
           CASE d.delta WHEN 1 THEN o.api_start_ns ELSE o.start_ns END AS ts,
           CASE WHEN (d.delta = 1) = coalesce(CAST(getvariable('launch_first') AS BOOLEAN), false)
                THEN 0 ELSE 1 END AS phase
    FROM ops o CROSS JOIN (VALUES (1), (-1)) d(delta)
), ordered AS (
    -- the sort key: ns with the phase in its lowest bit (one key sorts faster than two), or
    -- HTA's double of µs (from the decimal text: rounded once, as a JSON parser rounds the
    -- file's number), then the phase
    SELECT rank_key, device_id, stream_id, ts, delta
    FROM changes
    ORDER BY rank_key, device_id, stream_id,
             CASE WHEN coalesce(CAST(getvariable('hta_float_us') AS BOOLEAN), false)
                  THEN CAST(CAST(ts // 1000 AS VARCHAR) || '.' || lpad(CAST(ts % 1000 AS VARCHAR), 3, '0')
                            AS DOUBLE) END,
             CASE WHEN coalesce(CAST(getvariable('hta_float_us') AS BOOLEAN), false) THEN phase
                  ELSE ts * 2 + phase END
), samples AS (
    -- one streaming scan in sorted order (empty OVER (), as sql/lib/intervals.sql does:
    -- partitioned running sums cost 3-4x): each stream's +1/-1 cancel before the next starts
    SELECT rank_key, device_id, stream_id, ts,
           CAST(sum(delta) OVER (ROWS UNBOUNDED PRECEDING) AS BIGINT) AS len,
           lead(ts) OVER () AS next_ts,
           lead(rank_key) OVER () IS NOT DISTINCT FROM rank_key
               AND lead(device_id) OVER () IS NOT DISTINCT FROM device_id
               AND lead(stream_id) OVER () IS NOT DISTINCT FROM stream_id AS next_same_stream
    FROM ordered
), histogram AS (
    -- per stream and length: the samples, and the time until the stream's next sample
    SELECT rank_key, device_id, stream_id, len, count(*) AS n,
           coalesce(sum(next_ts - ts) FILTER (WHERE next_same_stream), 0) AS held_ns
    FROM samples
    GROUP BY ALL
), placed AS (
    -- the 0-based places [below, upto) of each length's samples in the stream's sorted samples
    SELECT *, sum(n) OVER w - n AS below, sum(n) OVER w AS upto
    FROM histogram
    WINDOW w AS (PARTITION BY rank_key, device_id, stream_id ORDER BY len)
), per_stream AS (
    SELECT rank_key, device_id, stream_id,
           CAST(sum(n) AS BIGINT) AS samples,
           CAST(sum(len * n) AS DOUBLE) / sum(n) AS mean_len,
           -- sample std from exact integer sums
           sqrt(CAST(sum(n) * sum(len * len * n) - sum(len * n) * sum(len * n) AS DOUBLE)
                / (sum(n) * (sum(n) - 1))) AS std_len,
           min(len) AS min_len,
           max(len) AS max_len,
           sum(held_ns) FILTER (
               WHERE len >= coalesce(CAST(getvariable('queue_limit') AS BIGINT), 1024)) AS held_ns
    FROM placed
    GROUP BY ALL
), quantiles AS (
    -- quantile_cont's linear interpolation between the samples at floor and ceil of (n - 1) q
    SELECT s.rank_key, s.device_id, s.stream_id, q.q,
           lo.len + ((s.samples - 1) * q.q - floor((s.samples - 1) * q.q)) * (hi.len - lo.len)
               AS value
    FROM per_stream s
    CROSS JOIN (VALUES (0.25::DOUBLE), (0.5::DOUBLE), (0.75::DOUBLE)) q(q)
    JOIN placed lo
      ON lo.rank_key = s.rank_key AND lo.device_id IS NOT DISTINCT FROM s.device_id
     AND lo.stream_id IS NOT DISTINCT FROM s.stream_id
     AND floor((s.samples - 1) * q.q) >= lo.below AND floor((s.samples - 1) * q.q) < lo.upto
    JOIN placed hi
      ON hi.rank_key = s.rank_key AND hi.device_id IS NOT DISTINCT FROM s.device_id
     AND hi.stream_id IS NOT DISTINCT FROM s.stream_id
     AND ceil((s.samples - 1) * q.q) >= hi.below AND ceil((s.samples - 1) * q.q) < hi.upto
)
SELECT t.run_id, t.rank, s.device_id, s.stream_id, s.samples, s.mean_len, s.std_len, s.min_len,
       p25.value AS p25_len, p50.value AS p50_len, p75.value AS p75_len, s.max_len,
       coalesce(s.held_ns, 0) AS time_at_limit_ns  -- ns
FROM per_stream s
JOIN (SELECT run_id, rank, rank_key FROM ranks) t USING (rank_key)
JOIN quantiles p25 USING (rank_key, device_id, stream_id)
JOIN quantiles p50 USING (rank_key, device_id, stream_id)
JOIN quantiles p75 USING (rank_key, device_id, stream_id)
WHERE p25.q = 0.25 AND p50.q = 0.5 AND p75.q = 0.75
ORDER BY t.run_id, t.rank, s.device_id, s.stream_id;
