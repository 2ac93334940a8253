-- metric: queue_length
-- version: 5
-- summary: Per stream, how many launched GPU ops wait to start: distribution and time at the limit
-- unit: ops
-- grain: run_id, rank, device_id, stream_id
-- columns: run_id VARCHAR, rank INTEGER, device_id INTEGER, stream_id BIGINT, samples BIGINT, mean_len DOUBLE, std_len DOUBLE, min_len BIGINT, p25_len DOUBLE, p50_len DOUBLE, p75_len DOUBLE, max_len BIGINT, time_at_limit_ns BIGINT
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), queue_limit (int, default 1024), hta_launch_names (bool, default false), launch_first (bool, default false), hta_float_us (bool, default false)
-- uses: gpu_op_calls, gpu_ops, ranks, scope
-- complexity: O(n log n) in GPU ops and their launches (running sums over one sort per stream)
-- see: HTA get_queue_length_summary, get_time_spent_blocked_on_full_queue
-- show: stream_id, mean_len, max_len, p50_len, time_at_limit_ns, rank, run_id
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
-- start). Each change becomes one BIGINT: the stream's dense number in the high bits, then ns
-- since the stream's first change, times 2, plus the phase; one sort of that key, then one
-- streaming scan: length = 2 x launches so far - changes so far (running counts, no running
-- sum), held time from the next key. hta_float_us (or a span too long to pack) sorts on
-- several keys instead. The quantiles are read off each stream's histogram of lengths.
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
), streams AS (
    -- each stream once: a dense number, its first change and twice its span (+2: the phase bit)
    SELECT rank_key, device_id, stream_id, base,
           row_number() OVER (ORDER BY rank_key, device_id, stream_id) - 1 AS sk,
           (CAST(last AS HUGEINT) - base) * 2 + 2 AS width
    FROM (SELECT rank_key, device_id, stream_id,
                 least(min(api_start_ns), min(start_ns)) AS base,
                 greatest(max(api_start_ns), max(start_ns)) AS last
          FROM ops GROUP BY ALL)
), packing AS (
    -- fast: the stream's number above b bits, (ns - base) * 2 + phase below, in one BIGINT
    -- (b: at least log2 of the widest stream; one bit spare covers the double's rounding)
    SELECT b, coalesce(CASE WHEN b <= 62 THEN n <= (CAST(1 AS BIGINT) << (63 - b)) END, false)
              AND NOT coalesce(CAST(getvariable('hta_float_us') AS BOOLEAN), false) AS fast
    FROM (SELECT count(*) AS n, CAST(ceil(log2(CAST(max(width) AS DOUBLE))) AS INTEGER) + 1 AS b
          FROM streams)
), launch_phase AS (
    -- the phase bit of a launch: GPU starts first (0) unless launch_first
    SELECT CASE WHEN coalesce(CAST(getvariable('launch_first') AS BOOLEAN), false) THEN 0 ELSE 1 END
               AS lp
), fast_keys AS (
    -- each op twice: +1 at its launch, -1 at its GPU start, as one sortable BIGINT
    SELECT (s.sk << p.b) + (o.api_start_ns - s.base) * 2 + l.lp AS k1,
           (s.sk << p.b) + (o.start_ns - s.base) * 2 + 1 - l.lp AS k2
    FROM ops o
    JOIN streams s
      ON s.rank_key = o.rank_key AND s.device_id IS NOT DISTINCT FROM o.device_id
     AND s.stream_id IS NOT DISTINCT FROM o.stream_id
    CROSS JOIN packing p CROSS JOIN launch_phase l
    WHERE p.fast
), fast_ordered AS (
    SELECT k FROM (SELECT k1 AS k FROM fast_keys UNION ALL SELECT k2 FROM fast_keys) ORDER BY k
), fast_samples AS (
    -- one streaming scan in key order (empty OVER (), as sql/lib/intervals.sql does): each
    -- stream's +1/-1 cancel before the next starts, so the queue length is 2 x the launches so
    -- far - the changes so far (running counts cost a tenth of a running sum)
    SELECT k, 2 * count(*) FILTER (WHERE k & 1 = (SELECT lp FROM launch_phase))
                  OVER (ROWS UNBOUNDED PRECEDING) - row_number() OVER () AS len,
           lead(k) OVER () AS next_k
    FROM fast_ordered
), slow_changes AS (
    -- hta_float_us, or spans too long to pack: one row per change, sorted on several keys
    SELECT s.sk, d.delta,
           CASE d.delta WHEN 1 THEN o.api_start_ns ELSE o.start_ns END AS ts,
           CASE WHEN (d.delta = 1) = coalesce(CAST(getvariable('launch_first') AS BOOLEAN), false)
                THEN 0 ELSE 1 END AS phase
    FROM ops o
    JOIN streams s
      ON s.rank_key = o.rank_key AND s.device_id IS NOT DISTINCT FROM o.device_id
     AND s.stream_id IS NOT DISTINCT FROM o.stream_id
    CROSS JOIN packing p
    CROSS JOIN (VALUES (1), (-1)) d(delta)
    WHERE NOT p.fast
), slow_ordered AS (
    -- ns with the phase in its lowest bit, or HTA's double of µs (from the decimal text:
    -- rounded once, as a JSON parser rounds the file's number), then the phase, then ns (HTA's
    -- order within a tie is arbitrary)
    SELECT sk, ts, delta
    FROM slow_changes
    ORDER BY sk,
             CASE WHEN coalesce(CAST(getvariable('hta_float_us') AS BOOLEAN), false)
                  THEN CAST(CAST(ts // 1000 AS VARCHAR) || '.' || lpad(CAST(ts % 1000 AS VARCHAR), 3, '0')
                            AS DOUBLE) END,
             CASE WHEN coalesce(CAST(getvariable('hta_float_us') AS BOOLEAN), false) THEN phase END,
             ts * 2 + phase
), slow_samples AS (
    SELECT sk, ts, 2 * count(*) FILTER (WHERE delta = 1) OVER (ROWS UNBOUNDED PRECEDING)
                   - row_number() OVER () AS len,
           lead(ts) OVER () AS next_ts, lead(sk) OVER () IS NOT DISTINCT FROM sk AS next_same_stream
    FROM slow_ordered
), histogram AS (
    -- per stream and length: the samples, and the time until the stream's next sample
    SELECT s.rank_key, s.device_id, s.stream_id, h.len, h.n, h.held_ns
    FROM (SELECT k >> (SELECT b FROM packing) AS sk, len, count(*) AS n,
                 coalesce(sum((next_k >> 1) - (k >> 1))
                          FILTER (WHERE next_k >> (SELECT b FROM packing) = k >> (SELECT b FROM packing)), 0)
                     AS held_ns
          FROM fast_samples
          GROUP BY ALL
          UNION ALL
          SELECT sk, len, count(*) AS n,
                 coalesce(sum(next_ts - ts) FILTER (WHERE next_same_stream), 0) AS held_ns
          FROM slow_samples
          GROUP BY ALL) h
    JOIN streams s USING (sk)
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
       CAST(coalesce(s.held_ns, 0) AS BIGINT) AS time_at_limit_ns  -- ns
FROM per_stream s
JOIN (SELECT run_id, rank, rank_key FROM ranks) t USING (rank_key)
JOIN quantiles p25 USING (rank_key, device_id, stream_id)
JOIN quantiles p50 USING (rank_key, device_id, stream_id)
JOIN quantiles p75 USING (rank_key, device_id, stream_id)
WHERE p25.q = 0.25 AND p50.q = 0.5 AND p75.q = 0.75
ORDER BY t.run_id, t.rank, s.device_id, s.stream_id;
