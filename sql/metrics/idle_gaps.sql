-- metric: idle_gaps
-- version: 5
-- summary: Idle gaps between GPU busy islands per device, by cause and size
-- unit: ns
-- grain: run_id, rank, device_id, cause, size_bucket
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), start_ns (int, optional), end_ns (int, optional), kernel_wait_ns (int, default 30000)
-- see: HTA get_idle_time_breakdown (host wait / kernel wait / other)
-- uses: gpu_ops, intervals, iteration_tiles, ranks, scope
--
-- A busy island is a maximal stretch of a device's timeline with at least one GPU op (kernel,
-- memcpy, memset) in flight (intervals_union: touching ops join, a zero-length op still ends
-- one gap and starts the next). A gap is the idle time between two consecutive islands of a
-- device. Its cause is read from the first op of the island after it (in start, end order) and
-- the CUDA API call that launched it (gpu_ops.launch_ns, linked at ingest by correlation id), as HTA does
-- per stream:
--   host wait    the launch call started after the previous island ended: the GPU waited for
--                the CPU to enqueue work
--   kernel wait  not host wait, and the gap is shorter than kernel_wait_ns (default 30 us):
--                the usual delay between back-to-back launches
--   other        anything else: waiting on an event, another stream or device, a collective's
--                peers; also ops whose launch call is not in the trace
-- Size buckets: <1us, 1-10us, 10-100us, 100us-1ms, 1-10ms, >=10ms (bucket_order sorts them).
-- Per row: gaps, total_ns, min/max/mean gap, and share_of_idle_pct = share of the device's idle
-- time (named apart from idle_pct, which elsewhere is the share of the whole window).
-- start_ns / end_ns (UTC) cut ops to that window first; iteration_from / iteration_to keep the
-- time of those iterations (GPU spans of the iterations as in temporal_breakdown), and a gap is
-- never counted across the boundary of two kept stretches.
WITH keys AS (
    -- one integer per device of a rank (integer keys sort and join fastest)
    SELECT rank_key, device_id, row_number() OVER (ORDER BY rank_key, device_id) AS grp
    FROM (SELECT DISTINCT rank_key, device_id FROM gpu_ops
          WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank')))
),
ops AS NOT MATERIALIZED (
    -- each op with the start of the CUDA API call that launched it (NULL: not in the trace)
    SELECT k.grp,
           greatest(g.start_ns, CAST(getvariable('start_ns') AS BIGINT)) AS start_ns,
           least(g.end_ns, CAST(getvariable('end_ns') AS BIGINT)) AS end_ns,
           g.iteration, g.launch_ns, g.alone, g.device_prev_end_ns
    FROM gpu_ops g
    JOIN keys k ON k.rank_key = g.rank_key AND k.device_id IS NOT DISTINCT FROM g.device_id
    WHERE scope_match(g.run_id, g.rank, getvariable('run'), getvariable('rank'))
      AND window_overlaps(g.start_ns, g.end_ns, getvariable('start_ns'), getvariable('end_ns'))
),
tiles AS (
    SELECT * FROM iteration_tiles(ops, iteration_range_given(getvariable('iteration_from'),
                                                             getvariable('iteration_to')),
                                  getvariable('iteration_from'), getvariable('iteration_to'))
),
stretches AS (
    -- kept stretches of time: consecutive kept tiles merge, a gap never crosses a dropped one;
    -- a stretch is named by its first tile's iteration
    SELECT grp, window_id, start_ns, end_ns FROM intervals_union(tiles)
),
tile_stretch AS (
    SELECT t.grp, t.window_id AS iteration, s.window_id AS stretch
    FROM tiles t
    ASOF JOIN stretches s ON s.grp = t.grp AND t.start_ns >= s.start_ns
),
windowed AS (
    -- the stretch of the iteration that launched an op is the clip's first guess
    SELECT o.grp, o.start_ns, o.end_ns, o.launch_ns, m.stretch AS window_id
    FROM ops o
    LEFT JOIN tile_stretch m ON m.grp = o.grp AND m.iteration = o.iteration
    WHERE iteration_range_given(getvariable('iteration_from'), getvariable('iteration_to'))
),
kept AS (
    -- iterations chosen: grp is the (device, kept stretch)
    SELECT tile_key(grp, window_id) AS grp, grp AS device_grp,
           start_ns, end_ns, launch_ns
    FROM intervals_clip(windowed, stretches)
),
crowded AS (
    SELECT grp, start_ns, end_ns, launch_ns, device_prev_end_ns FROM ops
    WHERE NOT alone
      AND NOT iteration_range_given(getvariable('iteration_from'), getvariable('iteration_to'))
),
islands AS (
    -- each island with its first op's launch and the end of the island before it. Without
    -- iterations an op alone on its rank's timeline is an island by itself, and the first op of
    -- every island knows where the device's earlier ops ended (gpu_ops.device_prev_end_ns):
    -- only the other ops are merged. That end counts when an op ending there is in the start_ns
    -- window (an island cut by the window's start has no gap before it).
    SELECT grp AS device_grp, start_ns, launch_ns,
           CASE WHEN device_prev_end_ns < start_ns
                     AND (getvariable('start_ns') IS NULL
                          OR device_prev_end_ns >= CAST(getvariable('start_ns') AS BIGINT))
                THEN device_prev_end_ns END AS prev_end_ns
    FROM (SELECT grp, start_ns, launch_ns, device_prev_end_ns FROM ops
          WHERE alone
            AND NOT iteration_range_given(getvariable('iteration_from'), getvariable('iteration_to'))
          UNION ALL
          SELECT grp, start_ns, launch_ns, device_prev_end_ns FROM intervals_union(crowded))
    UNION ALL
    -- with iterations: the kept stretches' ops merged (intervals_union keeps the first op's columns)
    SELECT device_grp, start_ns, launch_ns, prev_end_ns FROM intervals_union(kept)
),
gaps AS (
    SELECT device_grp, start_ns - prev_end_ns AS gap_ns,
           CASE WHEN launch_ns > prev_end_ns THEN 'host wait'
                WHEN launch_ns IS NOT NULL
                     AND start_ns - prev_end_ns
                         < coalesce(CAST(getvariable('kernel_wait_ns') AS BIGINT), 30000)
                    THEN 'kernel wait'
                ELSE 'other' END AS cause
    FROM islands
    WHERE prev_end_ns IS NOT NULL
),
buckets AS (
    -- summed per device before anything is joined to the (few) result rows
    SELECT device_grp, cause,
           CASE WHEN gap_ns < 1000 THEN 1 WHEN gap_ns < 10000 THEN 2 WHEN gap_ns < 100000 THEN 3
                WHEN gap_ns < 1000000 THEN 4 WHEN gap_ns < 10000000 THEN 5 ELSE 6 END AS bucket_order,
           count(*) AS gaps, sum(gap_ns) AS total_ns, min(gap_ns) AS min_ns, max(gap_ns) AS max_ns,
           avg(gap_ns) AS avg_ns
    FROM gaps
    GROUP BY ALL
)
SELECT
    r.run_id,
    r.rank,
    k.device_id,
    b.cause,                                   -- host wait | kernel wait | other
    ['<1us', '1-10us', '10-100us', '100us-1ms', '1-10ms', '>=10ms'][b.bucket_order] AS size_bucket,
    b.bucket_order,
    b.gaps,
    CAST(b.total_ns AS BIGINT) AS total_ns,    -- idle time in these gaps
    b.min_ns,
    b.max_ns,
    b.avg_ns,
    b.total_ns * 100.0 / sum(b.total_ns) OVER (PARTITION BY b.device_grp) AS share_of_idle_pct
FROM buckets b
JOIN keys k ON k.grp = b.device_grp
JOIN ranks r ON r.rank_key = k.rank_key
ORDER BY r.run_id, r.rank, k.device_id, b.cause, b.bucket_order;
