-- metric: gpu_utilization
-- version: 5
-- summary: Busy share of each device's window cut into equal bins, low bins flagged
-- unit: percent
-- grain: run_id, rank, device_id, bin
-- columns: run_id VARCHAR, rank INTEGER, device_id INTEGER, bin BIGINT, bin_start_ns BIGINT, bin_end_ns BIGINT, busy_ns BIGINT, busy_pct DOUBLE, low_utilization BOOLEAN, sm_active_pct DOUBLE
-- params: run (text, optional), rank (int, optional), bins (int, default 30), threshold (float, default 50), iteration_from (int, optional), iteration_to (int, optional), start_ns (int, optional), end_ns (int, optional)
-- see: nsys recipe gpu_time_util (--chunks 30, --threshold 50)
-- uses: gpu_metrics, gpu_ops, intervals, iteration_tiles, ranks, scope
-- complexity: O(n log n) in GPU ops (intervals_union sweep, clipped to iteration tiles)
-- show: bin, busy_pct, rank, busy_ns, low_utilization, sm_active_pct, device_id, run_id
--
-- For each device (run_id, rank, device_id) the window W = [first GPU op start, last GPU op
-- end] is cut into `bins` equal bins: bin k (0-based) is [W0 + ceil(k L / n), W0 + ceil((k+1) L / n))
-- with L = |W| and n = bins, so every nanosecond of W is in exactly one bin. Per bin:
--   busy_ns         time with at least one GPU op (kernel, memcpy, memset) in flight
--   busy_pct        busy_ns / bin length x 100
--   low_utilization busy_pct < threshold (percent, default 50)
--   sm_active_pct   what the GPU's own counter says beside it: the mean of the nsys GPU metric
--                   'SMs Active [Throughput %]' over the samples stamped in the bin (gpu_metrics,
--                   --gpu-metrics-devices); NULL without samples. Busy time counts a bin busy
--                   while any kernel runs, however few SMs it occupies: the two differ by that.
-- Bins are capped so that bins x |W| stays below 4e18 (1000 bins of a 46-day window).
-- W is cut to start_ns / end_ns (UTC) when given; with iteration_from / iteration_to it runs from
-- the start of the first kept iteration to the end of the last (GPU spans of the iterations as
-- in temporal_breakdown).
WITH keys AS (
    -- one integer per device of a rank (integer keys sort and join fastest), with the span of
    -- its ops cut to start_ns / end_ns: the window unless iterations are chosen
    SELECT rank_key, device_id, row_number() OVER (ORDER BY rank_key, device_id) AS grp,
           first_ns, last_ns
    FROM (SELECT rank_key, device_id,
                 min(greatest(start_ns, CAST(getvariable('start_ns') AS BIGINT))) AS first_ns,
                 max(least(end_ns, CAST(getvariable('end_ns') AS BIGINT))) AS last_ns
          FROM gpu_ops
          WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
            AND window_overlaps(start_ns, end_ns, getvariable('start_ns'), getvariable('end_ns'))
          GROUP BY rank_key, device_id)
),
ops AS NOT MATERIALIZED (
    SELECT k.grp,
           greatest(g.start_ns, CAST(getvariable('start_ns') AS BIGINT)) AS start_ns,
           least(g.end_ns, CAST(getvariable('end_ns') AS BIGINT)) AS end_ns,
           g.iteration, g.alone
    FROM gpu_ops g
    JOIN keys k ON k.rank_key = g.rank_key AND k.device_id IS NOT DISTINCT FROM g.device_id
    WHERE scope_match(g.run_id, g.rank, getvariable('run'), getvariable('rank'))
      AND window_overlaps(g.start_ns, g.end_ns, getvariable('start_ns'), getvariable('end_ns'))
),
crowded AS (
    SELECT grp, start_ns, end_ns FROM ops WHERE NOT alone
),
busy AS (
    -- an op alone on its rank's timeline is a busy island by itself; only the rest are merged
    SELECT grp, start_ns, end_ns FROM ops WHERE alone
    UNION ALL
    SELECT grp, start_ns, end_ns FROM intervals_union(crowded)
),
windows AS (
    SELECT grp, first_ns AS w0, last_ns AS w1 FROM keys
    WHERE NOT iteration_range_given(getvariable('iteration_from'), getvariable('iteration_to'))
    UNION ALL
    SELECT grp, min(start_ns), max(end_ns)
    FROM iteration_tiles(ops, iteration_range_given(getvariable('iteration_from'),
                                                    getvariable('iteration_to')),
                         getvariable('iteration_from'), getvariable('iteration_to'))
    GROUP BY grp
),
sized AS (
    -- n is capped so that len x n fits a BIGINT (only absurd bin counts hit the cap)
    SELECT grp, w0, w1, w1 - w0 AS len,
           least(greatest(coalesce(CAST(getvariable('bins') AS BIGINT), 30), 1),
                 4000000000000000000 // (w1 - w0)) AS n
    FROM windows WHERE w1 > w0
),
islands AS (
    -- busy islands cut to the window, with the first and last bin they touch
    SELECT i.grp, s.w0, s.len, s.n, greatest(i.start_ns, s.w0) AS start_ns, least(i.end_ns, s.w1) AS end_ns,
           (greatest(i.start_ns, s.w0) - s.w0) * s.n // s.len AS first_bin,
           least((least(i.end_ns, s.w1) - s.w0) * s.n // s.len, s.n - 1) AS last_bin
    FROM busy i
    JOIN sized s ON s.grp = i.grp
    WHERE i.end_ns > s.w0 AND i.start_ns < s.w1
),
pieces AS (
    -- an island's busy time in each bin it touches (one bin for nearly all of them)
    SELECT grp, bin,
           CASE WHEN first_bin = last_bin THEN end_ns - start_ns
                ELSE least(end_ns, w0 + (len * (bin + 1) + n - 1) // n)
                     - greatest(start_ns, w0 + (len * bin + n - 1) // n) END AS busy_ns
    FROM (SELECT *, unnest(range(first_bin, last_bin + 1)) AS bin FROM islands)
),
sm_active AS (  -- the counter's samples, each in the bin its timestamp falls in
    SELECT s.grp, (m.ts_ns - s.w0) * s.n // s.len AS bin, avg(m.value) AS sm_active_pct
    FROM gpu_metrics m
    JOIN ranks r ON r.run_id = m.run_id AND r.rank = m.rank
    JOIN keys k ON k.rank_key = r.rank_key AND k.device_id = m.device_id
    JOIN sized s ON s.grp = k.grp
    WHERE m.metric = 'SMs Active [Throughput %]' AND m.ts_ns >= s.w0 AND m.ts_ns < s.w1
      AND scope_match(m.run_id, m.rank, getvariable('run'), getvariable('rank'))
    GROUP BY ALL
),
bins AS (
    SELECT grp, bin,
           w0 + (len * bin + n - 1) // n AS bin_start_ns,
           w0 + (len * (bin + 1) + n - 1) // n AS bin_end_ns
    FROM (SELECT grp, w0, len, n, unnest(range(n)) AS bin FROM sized)
)
SELECT
    r.run_id,
    r.rank,
    k.device_id,
    b.bin,                                         -- 0-based
    b.bin_start_ns,                                -- UTC ns
    b.bin_end_ns,                                  -- UTC ns (exclusive)
    CAST(coalesce(p.busy_ns, 0) AS BIGINT) AS busy_ns,
    coalesce(p.busy_ns, 0) * 100.0 / nullif(b.bin_end_ns - b.bin_start_ns, 0) AS busy_pct,
    coalesce(p.busy_ns, 0) * 100.0 / nullif(b.bin_end_ns - b.bin_start_ns, 0)
        < coalesce(CAST(getvariable('threshold') AS DOUBLE), 50) AS low_utilization,
    a.sm_active_pct                                -- nsys SMs Active counter, mean in the bin
FROM bins b
JOIN keys k ON k.grp = b.grp
JOIN ranks r ON r.rank_key = k.rank_key
LEFT JOIN (SELECT grp, bin, sum(busy_ns) AS busy_ns FROM pieces GROUP BY grp, bin) p
       ON p.grp = b.grp AND p.bin = b.bin
LEFT JOIN sm_active a ON a.grp = b.grp AND a.bin = b.bin
WHERE b.bin_end_ns > b.bin_start_ns
ORDER BY r.run_id, r.rank, k.device_id, b.bin;
