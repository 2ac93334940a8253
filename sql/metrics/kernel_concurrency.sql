-- metric: kernel_concurrency
-- version: 3
-- summary: Time-weighted distribution of kernels in flight per device, and the share of NCCL time with compute running
-- unit: ns
-- grain: run_id, rank, device_id, kernels_in_flight
-- columns: run_id VARCHAR, rank INTEGER, device_id INTEGER, kernels_in_flight BIGINT, time_ns BIGINT, time_pct DOUBLE, window_ns BIGINT, nccl_ns BIGINT, nccl_with_compute_ns BIGINT, nccl_with_compute_pct DOUBLE
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), start_ns (int, optional), end_ns (int, optional)
-- see: Paraver "kernels in flight" and "concurrency of computation during NCCL"
-- uses: gpu_ops, intervals, ranks, scope
-- complexity: O(n log n) in GPU ops (intervals_overlap_sum sweep)
-- show: kernels_in_flight, time_pct, time_ns, rank, nccl_with_compute_pct, run_id
--
-- For each device (run_id, rank, device_id), over its window W = [first kernel start, last
-- kernel end], one row per number of kernels in flight (0, 1, 2, ...):
--   time_ns       how long exactly that many kernels ran at once (intervals_overlap_count)
--   time_pct      time_ns / W x 100; the rows of a device sum to 100
-- and, repeated on every row of the device:
--   window_ns             W
--   nccl_ns               time with at least one communication kernel in flight
--   nccl_with_compute_ns  of that, time with at least one compute kernel in flight too
--   nccl_with_compute_pct nccl_with_compute_ns / nccl_ns x 100 (NULL without communication)
-- Kernels only (no memcpy / memset); sync and unclassified kernels count as kernels in flight,
-- not as compute. Touching kernels are not concurrent; zero-length kernels never count.
-- start_ns / end_ns (UTC) cut kernels to that window; iteration_from / iteration_to keep the
-- time of those iterations (GPU spans as in temporal_breakdown), W is then the total kept time.
WITH keys AS (
    -- one integer per device of a rank (integer keys sort and join fastest)
    SELECT rank_key, device_id, row_number() OVER (ORDER BY rank_key, device_id) AS grp
    FROM (SELECT DISTINCT rank_key, device_id FROM gpu_ops
          WHERE op = 'kernel'
            AND scope_match(run_id, rank, getvariable('run'), getvariable('rank')))
),
ops AS NOT MATERIALIZED (
    -- value: 1 per communication kernel, 1e9 per sync/other kernel, 0 per compute kernel, so
    -- the in-flight sum splits into comm = sum % 1e9 and sync/other = sum // 1e9
    SELECT k.grp,
           greatest(g.start_ns, CAST(getvariable('start_ns') AS BIGINT)) AS start_ns,
           least(g.end_ns, CAST(getvariable('end_ns') AS BIGINT)) AS end_ns,
           g.iteration, g.alone,
           CASE g.kind WHEN 'compute' THEN 0 WHEN 'comm' THEN 1 ELSE 1000000000 END AS value
    FROM gpu_ops g
    JOIN keys k ON k.rank_key = g.rank_key AND k.device_id IS NOT DISTINCT FROM g.device_id
    WHERE g.op = 'kernel'
      AND scope_match(g.run_id, g.rank, getvariable('run'), getvariable('rank'))
      AND window_overlaps(g.start_ns, g.end_ns, getvariable('start_ns'), getvariable('end_ns'))
),
iteration_spans AS (
    -- the GPU span of each iteration: the first start and last end of the GPU ops (kernels,
    -- copies, memsets) launched in it, cut to start_ns / end_ns
    SELECT k.grp, g.iteration AS window_id,
           min(greatest(g.start_ns, CAST(getvariable('start_ns') AS BIGINT))) AS start_ns,
           max(least(g.end_ns, CAST(getvariable('end_ns') AS BIGINT))) AS end_ns
    FROM gpu_ops g
    JOIN keys k ON k.rank_key = g.rank_key AND k.device_id IS NOT DISTINCT FROM g.device_id
    WHERE g.iteration IS NOT NULL
      AND iteration_range_given(getvariable('iteration_from'), getvariable('iteration_to'))
      AND window_overlaps(g.start_ns, g.end_ns, getvariable('start_ns'), getvariable('end_ns'))
    GROUP BY k.grp, g.iteration
),
tiles AS (
    SELECT grp, window_id, start_ns, end_ns,
           tile_key(grp, window_id) AS tile_key
    FROM intervals_tile(iteration_spans)
    WHERE end_ns > start_ns
      AND iteration_in(window_id, getvariable('iteration_from'), getvariable('iteration_to'))
),
windowed AS (
    -- the iteration that launched a kernel is the clip's first guess of its tile
    SELECT grp, start_ns, end_ns, value, alone, iteration AS window_id FROM ops
    WHERE iteration_range_given(getvariable('iteration_from'), getvariable('iteration_to'))
),
kept AS NOT MATERIALIZED (
    -- grp: the device, or the (device, iteration) tile when iterations are chosen
    SELECT grp, start_ns, end_ns, value, alone FROM ops
    WHERE NOT iteration_range_given(getvariable('iteration_from'), getvariable('iteration_to'))
    UNION ALL
    SELECT tile_key(grp, window_id), start_ns, end_ns, value, alone
    FROM intervals_clip(windowed, tiles)
),
crowded AS (
    SELECT grp, start_ns, end_ns, value FROM kept WHERE NOT alone
),
busy AS (
    -- time with kernels in flight: a kernel alone on its rank's timeline is one kernel in
    -- flight for its whole length; only the others go through the sweep
    SELECT grp, 1 AS depth, value AS value_sum, end_ns - start_ns AS dur_ns FROM kept
    WHERE alone AND end_ns > start_ns
    UNION ALL
    SELECT grp, depth, value_sum, end_ns - start_ns FROM intervals_overlap_sum(crowded)
    WHERE depth > 0
),
windows AS (
    -- the device's window (its kernels' span), or the iteration's tile
    SELECT grp, max(end_ns) - min(start_ns) AS window_ns FROM kept
    WHERE NOT iteration_range_given(getvariable('iteration_from'), getvariable('iteration_to'))
    GROUP BY grp
    UNION ALL
    SELECT tile_key, end_ns - start_ns FROM tiles
),
steps AS (
    -- stretches summed by what is in flight (few rows), before anything else looks at them;
    -- depth 0 is the window's time without any kernel
    SELECT grp, depth,
           value_sum % 1000000000 > 0 AS with_comm,
           depth - value_sum % 1000000000 - value_sum // 1000000000 > 0 AS with_compute,
           sum(dur_ns) AS dur_ns
    FROM busy
    GROUP BY ALL
    UNION ALL
    SELECT w.grp, 0, false, false, w.window_ns - coalesce(b.busy_ns, 0)
    FROM windows w
    LEFT JOIN (SELECT grp, sum(dur_ns) AS busy_ns FROM busy GROUP BY grp) b ON b.grp = w.grp
    WHERE w.window_ns > coalesce(b.busy_ns, 0)
),
device_steps AS (
    SELECT coalesce(t.grp, s.grp) AS device, s.dur_ns, s.depth, s.with_comm, s.with_compute
    FROM steps s
    LEFT JOIN tiles t ON t.tile_key = s.grp
    WHERE NOT iteration_range_given(getvariable('iteration_from'), getvariable('iteration_to'))
       OR t.tile_key IS NOT NULL
),
per_depth AS (
    SELECT device, depth, sum(dur_ns) AS time_ns FROM device_steps GROUP BY device, depth
),
per_device AS (
    SELECT device,
           sum(dur_ns) AS window_ns,
           coalesce(sum(dur_ns) FILTER (WHERE with_comm), 0) AS nccl_ns,
           coalesce(sum(dur_ns) FILTER (WHERE with_comm AND with_compute), 0) AS nccl_with_compute_ns
    FROM device_steps GROUP BY device
)
SELECT
    r.run_id,
    r.rank,
    k.device_id,
    p.depth AS kernels_in_flight,
    CAST(p.time_ns AS BIGINT) AS time_ns,
    p.time_ns * 100.0 / nullif(d.window_ns, 0) AS time_pct,
    CAST(d.window_ns AS BIGINT) AS window_ns,
    CAST(d.nccl_ns AS BIGINT) AS nccl_ns,
    CAST(d.nccl_with_compute_ns AS BIGINT) AS nccl_with_compute_ns,
    d.nccl_with_compute_ns * 100.0 / nullif(d.nccl_ns, 0) AS nccl_with_compute_pct
FROM per_depth p
JOIN per_device d ON d.device = p.device
JOIN keys k ON k.grp = p.device
JOIN ranks r ON r.rank_key = k.rank_key
ORDER BY r.run_id, r.rank, k.device_id, p.depth;
