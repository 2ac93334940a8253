-- metric: idle_gaps
-- version: 6
-- summary: Idle gaps between GPU busy islands per device, by cause and size
-- unit: ns
-- grain: run_id, rank, device_id, cause, size_bucket
-- columns: run_id VARCHAR, rank INTEGER, device_id INTEGER, cause VARCHAR, size_bucket VARCHAR, bucket_order INTEGER, gaps BIGINT, total_ns BIGINT, min_ns BIGINT, max_ns BIGINT, avg_ns DOUBLE, share_of_idle_pct DOUBLE, attributed_ns BIGINT, sync_wait_ns BIGINT, launching_ns BIGINT, data_loading_ns BIGINT, os_call_ns BIGINT, other_host_ns BIGINT, host_cause VARCHAR
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), start_ns (int, optional), end_ns (int, optional), kernel_wait_ns (int, default 30000), cause_min_ns (int, default 30000), data_pattern (text, optional)
-- see: HTA get_idle_time_breakdown (host wait / kernel wait / other)
-- uses: gap_causes, gpu_ops, intervals, iteration_tiles, ranks, scope
-- complexity: O(n log n) in GPU ops (intervals_union sweeps; gap causes by ASOF join, never a range join)
-- show: cause, size_bucket, gaps, total_ns, share_of_idle_pct, host_cause, rank, run_id
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
-- What the host did during the gaps (version 6): for each gap at least cause_min_ns long
-- (default 30 us; 0: every gap), the time the rank's launching thread spent, with
-- host_breakdown's precedence (sql/lib/host_activity.sql), in
--   sync_wait_ns     a call waiting for the GPU (sync_stalls' rules): the GPU idles because
--                    the host waits for it, e.g. for another stream or device
--   launching_ns     a CUDA call enqueueing GPU work: the host cannot launch fast enough
--   data_loading_ns  a DataLoader op or data-loading range (data_pattern): the input pipeline
--                    cannot keep up
--   os_call_ns       an OS runtime call: I/O such as a checkpoint write, polls, locks
--   other_host_ns    anything else (Python, the framework, no trace of the thread)
-- summed over the row's gaps that long (attributed_ns, their total; the five add up to it),
-- and host_cause, the largest of the five (NULL: no gap long enough). Shorter gaps (mostly
-- the delay between back-to-back kernels) are left out: there are millions of them.
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
    -- iterations chosen: grp is the (device, kept stretch); ops with one start and end are one
    -- row with the earliest launch (which of them intervals_union keeps first is left to chance)
    SELECT tile_key(grp, window_id) AS grp, grp AS device_grp, start_ns, end_ns,
           min(launch_ns) AS launch_ns
    FROM intervals_clip(windowed, stretches)
    GROUP BY ALL
),
crowded AS (
    -- as kept: ties are one row, with the earliest launch and previous end among them
    SELECT grp, start_ns, end_ns, min(launch_ns) AS launch_ns,
           min(device_prev_end_ns) AS device_prev_end_ns
    FROM ops
    WHERE NOT alone
      AND NOT iteration_range_given(getvariable('iteration_from'), getvariable('iteration_to'))
    GROUP BY grp, start_ns, end_ns
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
    SELECT device_grp, start_ns - prev_end_ns AS gap_ns, prev_end_ns AS gap_start_ns,
           start_ns AS gap_end_ns,
           CASE WHEN start_ns - prev_end_ns < 1000 THEN 1 WHEN start_ns - prev_end_ns < 10000 THEN 2
                WHEN start_ns - prev_end_ns < 100000 THEN 3 WHEN start_ns - prev_end_ns < 1000000 THEN 4
                WHEN start_ns - prev_end_ns < 10000000 THEN 5 ELSE 6 END AS bucket_order,
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
    SELECT device_grp, cause, bucket_order,
           count(*) AS gaps, sum(gap_ns) AS total_ns, min(gap_ns) AS min_ns, max(gap_ns) AS max_ns,
           avg(gap_ns) AS avg_ns
    FROM gaps
    GROUP BY ALL
),
attributed AS MATERIALIZED (
    -- the gaps long enough to ask what the host did, each with an id, on its rank's timeline
    SELECT row_number() OVER (ORDER BY g.device_grp, g.gap_start_ns) AS gap_id, g.device_grp, g.cause,
           g.bucket_order, g.gap_ns,
           k.rank_key AS grp, g.gap_start_ns AS start_ns, g.gap_end_ns AS end_ns
    FROM gaps g JOIN keys k ON k.grp = g.device_grp
    WHERE g.gap_ns >= coalesce(CAST(getvariable('cause_min_ns') AS BIGINT), 30000)
),
gap_host AS (
    SELECT * FROM host_in_gaps(attributed, getvariable('data_pattern'))
),
host_buckets AS (
    SELECT a.device_grp, a.cause, a.bucket_order,
           CAST(sum(a.gap_ns) AS BIGINT) AS attributed_ns,
           CAST(coalesce(sum(h.sync_wait_ns), 0) AS BIGINT) AS sync_wait_ns,
           CAST(coalesce(sum(h.launching_ns), 0) AS BIGINT) AS launching_ns,
           CAST(coalesce(sum(h.data_loading_ns), 0) AS BIGINT) AS data_loading_ns,
           CAST(coalesce(sum(h.os_call_ns), 0) AS BIGINT) AS os_call_ns
    FROM attributed a LEFT JOIN gap_host h USING (gap_id)
    GROUP BY ALL
),
host_cols AS (
    SELECT *, attributed_ns - sync_wait_ns - launching_ns - data_loading_ns - os_call_ns
              AS other_host_ns
    FROM host_buckets
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
    b.total_ns * 100.0 / sum(b.total_ns) OVER (PARTITION BY b.device_grp) AS share_of_idle_pct,
    h.attributed_ns,                           -- time of the gaps >= cause_min_ns (NULL: none)
    h.sync_wait_ns,                            -- ... the launching thread spent waiting for the GPU
    h.launching_ns,                            -- ... launching
    h.data_loading_ns,                         -- ... loading data
    h.os_call_ns,                              -- ... in OS runtime calls (I/O, ...)
    h.other_host_ns,                           -- ... on anything else
    CASE WHEN h.attributed_ns IS NULL THEN NULL
         WHEN h.sync_wait_ns >= greatest(h.launching_ns, h.data_loading_ns, h.os_call_ns, h.other_host_ns)
             THEN 'sync wait'
         WHEN h.launching_ns >= greatest(h.data_loading_ns, h.os_call_ns, h.other_host_ns) THEN 'launching'
         WHEN h.data_loading_ns >= greatest(h.os_call_ns, h.other_host_ns) THEN 'data loading'
         WHEN h.os_call_ns >= h.other_host_ns THEN 'os call'
         ELSE 'other' END AS host_cause        -- the largest of the five
FROM buckets b
JOIN keys k ON k.grp = b.device_grp
LEFT JOIN host_cols h
       ON h.device_grp = b.device_grp AND h.cause = b.cause AND h.bucket_order = b.bucket_order
JOIN ranks r ON r.rank_key = k.rank_key
ORDER BY r.run_id, r.rank, k.device_id, b.cause, b.bucket_order;
