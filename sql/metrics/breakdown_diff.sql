-- metric: breakdown_diff
-- version: 1
-- summary: Two runs side by side (step time, temporal breakdown, overlap, idle causes, collective time by kind, top kernels) with the differences and one sentence naming the largest contributor to the change in step time
-- unit: ns
-- grain: section, item
-- params: base (text, optional), test (text, optional), top (int, default 5), include_first_last (bool, default false), kernel_wait_ns (int, default 30000)
-- see: run_diff, scaling, temporal_breakdown, comm_comp_overlap, idle_gaps, iteration_time, gpu_kernel_summary; nsys diff recipe
--
-- base is the run before, test the run after (run_pair: default the first run by run_id and
-- the next one). One row per (section, item), base and test side by side:
--   step        step time: the median across-rank iteration time, ns (as iteration_time and
--               scaling: clocks aligned, first and last iteration of each rank left out unless
--               include_first_last; NULL without iterations)
--   breakdown   compute, exposed communication, exposed memory, exposed other, idle: the
--               temporal breakdown of every rank (W = the rank's GPU span, as temporal_breakdown),
--               summed over the run's ranks and divided by its (rank, iteration) pairs (by its
--               ranks when it has no iterations): ns per rank and step
--   overlap     communication hidden under compute, % (|U comm n U compute| / |U comm| summed
--               over ranks, as comm_comp_overlap's run row)
--   idle        idle time by cause, ns per rank and step: the gap before each busy island of a
--               rank's GPU timeline, host wait (its first op was launched after the gap began),
--               kernel wait (shorter than kernel_wait_ns) or other (as idle_gaps)
--   collective  NCCL kernel time by collective (nccl_ops), ns per rank and step
--   kernel      the top kernels of each run by total time (gpu_kernel_summary's top entries,
--               the union of both runs' top N), ns per rank and step
-- diff = test - base; diff_pct relative to base. The step row carries the sentence: the step
-- time change, the breakdown part that moved most in its direction, and inside that part the
-- kernel (compute, other), collective (exposed communication) or idle cause that moved most, e.g.
--   "step time rose from 12.30 ms to 13.06 ms (+0.76 ms, +6.2%); the largest contributor is
--    compute (+0.70 ms per rank and step), led by kernel sm90_xmma_gemm_... (+0.69 ms)".
-- Without step times the change of the breakdown's total stands in for it.
WITH pair AS (
    SELECT side, run_id FROM run_pair(getvariable('base'), getvariable('test'))
),
keys AS (
    SELECT p.side, r.rank_key AS grp FROM ranks r JOIN pair p ON p.run_id = r.run_id
),
units AS (
    -- what per-step values are divided by: (rank, iteration) pairs, else ranks
    SELECT p.side, CAST(coalesce(nullif(s.n, 0), k.n) AS DOUBLE) AS units
    FROM pair p
    LEFT JOIN (SELECT run_id, count(*) AS n FROM iterations GROUP BY run_id) s ON s.run_id = p.run_id
    LEFT JOIN (SELECT run_id, count(*) AS n FROM ranks GROUP BY run_id) k ON k.run_id = p.run_id
),
ops AS NOT MATERIALIZED (
    -- layer: 0 compute, 1 comm, 2 memory, NULL sync/other; one window per rank (window_id 0)
    SELECT rank_key AS grp, start_ns, end_ns, alone, launch_ns, device_prev_end_ns, name, kind,
           0 AS window_id,
           CASE kind WHEN 'compute' THEN 0 WHEN 'comm' THEN 1
                     WHEN 'memcpy' THEN 2 WHEN 'memset' THEN 2 END AS layer
    FROM gpu_ops
    WHERE run_id IN (SELECT run_id FROM pair)
),
-- temporal breakdown and overlap per rank ---------------------------------------------------------
spans AS (
    SELECT grp, 0 AS window_id, min(start_ns) AS start_ns, max(end_ns) AS end_ns FROM ops GROUP BY grp
),
layers AS (
    SELECT * FROM intervals_window_breakdown(ops, spans)
),
comm AS (
    SELECT grp, start_ns, end_ns FROM ops WHERE layer = 1
),
comm_union AS (
    SELECT grp, sum(end_ns - start_ns) AS comm_ns FROM intervals_union(comm) GROUP BY grp
),
-- idle gaps by cause -------------------------------------------------------------------------------
crowded AS (
    SELECT grp, start_ns, end_ns, launch_ns, device_prev_end_ns FROM ops WHERE NOT alone
),
islands AS (
    -- an op alone on its rank's timeline is an island; the others are merged (intervals_union
    -- keeps the first op's launch); device_prev_end_ns is where the earlier island ended
    SELECT grp, start_ns, launch_ns, device_prev_end_ns AS prev_end_ns
    FROM (SELECT grp, start_ns, launch_ns, device_prev_end_ns FROM ops WHERE alone
          UNION ALL
          SELECT grp, start_ns, launch_ns, device_prev_end_ns FROM intervals_union(crowded))
    WHERE device_prev_end_ns < start_ns
),
idle_causes AS (
    SELECT grp,
           CASE WHEN launch_ns > prev_end_ns THEN 'host wait'
                WHEN start_ns - prev_end_ns < CAST(getvariable('kernel_wait_ns') AS BIGINT) THEN 'kernel wait'
                ELSE 'other' END AS cause,
           start_ns - prev_end_ns AS gap_ns
    FROM islands
),
-- step time ----------------------------------------------------------------------------------------
step_time AS (
    SELECT run_id, median(dur_ns) AS step_ns
    FROM (
        SELECT s.run_id, s.iteration,
               max(s.end_ns - coalesce(o.offset_ns, 0)) - min(s.start_ns - coalesce(o.offset_ns, 0)) AS dur_ns
        FROM training_steps(NULL) s
        LEFT JOIN clock_offsets o ON o.run_id = s.run_id AND o.rank = s.rank
        WHERE s.end_ns IS NOT NULL AND s.run_id IN (SELECT run_id FROM pair)
          AND (CAST(getvariable('include_first_last') AS BOOLEAN) OR NOT (s.is_first OR s.is_last))
        GROUP BY s.run_id, s.iteration
    )
    GROUP BY run_id
),
-- kernels ---------------------------------------------------------------------------------------------
kernel_totals AS (
    SELECT k.side, CAST(o.name AS VARCHAR) AS name, min(o.kind) AS kind, sum(o.total_ns) AS total_ns
    FROM (SELECT grp, name, min(kind) AS kind, sum(end_ns - start_ns) AS total_ns
          FROM ops WHERE kind NOT IN ('memcpy', 'memset') GROUP BY grp, name) o
    JOIN keys k ON k.grp = o.grp
    GROUP BY k.side, o.name
),
top_kernels AS (
    SELECT DISTINCT name FROM kernel_totals
    QUALIFY row_number() OVER (PARTITION BY side ORDER BY total_ns DESC, name)
            <= CAST(getvariable('top') AS BIGINT)
),
-- every measure of each side, then side by side ---------------------------------------------------
measures AS (
    SELECT k.side, 'breakdown' AS section, part.item, part.item_order,
           sum(CASE part.item_order WHEN 1 THEN l.layer0_ns WHEN 2 THEN l.layer1_ns
                                    WHEN 3 THEN l.layer2_ns WHEN 4 THEN l.rest_ns
                                    ELSE s.end_ns - s.start_ns - coalesce(l.busy_ns, 0) END) AS value,
           true AS per_step
    FROM spans s
    JOIN keys k ON k.grp = s.grp
    LEFT JOIN layers l ON l.grp = s.grp
    CROSS JOIN (VALUES ('compute', 1), ('exposed communication', 2), ('exposed memory', 3),
                       ('exposed other', 4), ('idle', 5)) part(item, item_order)
    GROUP BY k.side, part.item, part.item_order
    UNION ALL
    SELECT k.side, 'overlap', 'communication hidden under compute (%)', 1,
           (sum(c.comm_ns) - sum(coalesce(l.layer1_ns, 0))) * 100.0 / nullif(sum(c.comm_ns), 0), false
    FROM comm_union c JOIN keys k ON k.grp = c.grp LEFT JOIN layers l ON l.grp = c.grp
    GROUP BY k.side
    UNION ALL
    SELECT k.side, 'idle', i.cause, 0, sum(i.gap_ns), true
    FROM idle_causes i JOIN keys k ON k.grp = i.grp
    GROUP BY k.side, i.cause
    UNION ALL
    SELECT k.side, 'collective', n.collective, 0, sum(n.dur_ns), true
    FROM nccl_ops n JOIN keys k ON k.grp = n.rank_key
    GROUP BY k.side, n.collective
    UNION ALL
    SELECT t.side, 'kernel', t.name, 0, t.total_ns, true
    FROM kernel_totals t
    WHERE t.name IN (SELECT name FROM top_kernels)
    UNION ALL
    SELECT p.side, 'step', 'step time', 1, t.step_ns, false
    FROM pair p LEFT JOIN step_time t ON t.run_id = p.run_id
    WHERE p.run_id IN (SELECT run_id FROM ranks)
),
side_by_side AS (
    SELECT m.section, m.item, min(m.item_order) AS item_order,
           max(m.value / CASE WHEN m.per_step THEN u.units ELSE 1 END) FILTER (WHERE m.side = 'base') AS base_value,
           max(m.value / CASE WHEN m.per_step THEN u.units ELSE 1 END) FILTER (WHERE m.side = 'test') AS test_value
    FROM measures m JOIN units u ON u.side = m.side
    GROUP BY m.section, m.item
),
-- the sentence ------------------------------------------------------------------------------------
change AS (
    SELECT coalesce(max(test_value - base_value) FILTER (WHERE section = 'step'),
                    sum(test_value - base_value) FILTER (WHERE section = 'breakdown')) AS step_diff,
           max(base_value) FILTER (WHERE section = 'step') AS base_step,
           max(test_value) FILTER (WHERE section = 'step') AS test_step
    FROM side_by_side
),
details AS (
    -- what can lead each breakdown part: kernels by kind, collectives, idle causes
    SELECT CASE kind WHEN 'compute' THEN 'compute' ELSE 'exposed other' END AS part,
           'kernel ' || name AS detail,
           (coalesce(sum(total_ns) FILTER (WHERE side = 'test') / max(u_test), 0)
            - coalesce(sum(total_ns) FILTER (WHERE side = 'base') / max(u_base), 0)) AS diff
    FROM kernel_totals
    CROSS JOIN (SELECT max(units) FILTER (WHERE side = 'base') AS u_base,
                       max(units) FILTER (WHERE side = 'test') AS u_test FROM units)
    WHERE kind <> 'comm'
    GROUP BY kind, name
    UNION ALL
    SELECT CASE section WHEN 'collective' THEN 'exposed communication' ELSE 'idle' END,
           CASE section WHEN 'collective' THEN 'NCCL ' || item ELSE item END,
           coalesce(test_value, 0) - coalesce(base_value, 0)
    FROM side_by_side
    WHERE section IN ('collective', 'idle')
),
leader AS (
    SELECT b.item AS part, coalesce(b.test_value, 0) - coalesce(b.base_value, 0) AS part_diff
    FROM side_by_side b CROSS JOIN change c
    WHERE b.section = 'breakdown'
    QUALIFY row_number() OVER (ORDER BY (coalesce(b.test_value, 0) - coalesce(b.base_value, 0))
                                        * CASE WHEN c.step_diff < 0 THEN -1 ELSE 1 END DESC,
                                        b.item_order) = 1
),
led_by AS (
    SELECT d.detail, d.diff
    FROM details d JOIN leader l ON l.part = d.part CROSS JOIN change c
    QUALIFY row_number() OVER (ORDER BY d.diff * CASE WHEN c.step_diff < 0 THEN -1 ELSE 1 END DESC,
                                        d.detail) = 1
),
sentence AS (
    SELECT CASE
        WHEN c.step_diff IS NULL THEN 'no GPU activity to compare'
        ELSE CASE WHEN c.base_step IS NULL OR c.test_step IS NULL
                  THEN 'GPU time per rank and step changed by ' || printf('%+.2f ms', c.step_diff / 1e6)
                  ELSE 'step time ' || CASE WHEN c.step_diff > 0 THEN 'rose' WHEN c.step_diff < 0 THEN 'fell'
                                            ELSE 'stayed' END
                       || ' from ' || printf('%.2f ms', c.base_step / 1e6) || ' to '
                       || printf('%.2f ms', c.test_step / 1e6) || ' ('
                       || printf('%+.2f ms', c.step_diff / 1e6) || ', '
                       || printf('%+.1f%%', c.step_diff * 100.0 / nullif(c.base_step, 0)) || ')' END
             || '; the largest contributor is ' || l.part || ' ('
             || printf('%+.2f ms', l.part_diff / 1e6) || ' per rank and step)'
             || coalesce(', led by ' || b.detail || ' (' || printf('%+.2f ms', b.diff / 1e6) || ')', '')
        END AS text
    FROM change c
    LEFT JOIN leader l ON true
    LEFT JOIN led_by b ON true
)
SELECT
    section,                                  -- step | breakdown | overlap | idle | collective | kernel
    item,                                     -- the part, cause, collective or kernel name
    base_value,                               -- ns (per rank and step), or % for overlap
    test_value,
    test_value - base_value AS diff,
    (test_value - base_value) * 100.0 / nullif(base_value, 0) AS diff_pct,
    CASE WHEN section = 'step' THEN (SELECT text FROM sentence) END AS sentence
FROM side_by_side
ORDER BY CASE section WHEN 'step' THEN 1 WHEN 'breakdown' THEN 2 WHEN 'overlap' THEN 3
                      WHEN 'idle' THEN 4 WHEN 'collective' THEN 5 ELSE 6 END,
         item_order, abs(coalesce(test_value, 0) - coalesce(base_value, 0)) DESC, item;
