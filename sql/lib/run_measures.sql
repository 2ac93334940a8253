-- uses: aligned_steps, gpu_ops, intervals, iterations, nccl_ops, ranks
-- run_measures(chosen_runs, include_first_last, kernel_wait_ns): the numbers that runs are compared
-- by (breakdown_diff, regressions), one row per (run_id, section, item), for the runs listed in
-- the table or CTE named by chosen_runs (a column run_id):
--   step        'step time': the median across-rank iteration time, ns (as iteration_time and
--               scaling: clocks aligned with clock_offsets, first and last iteration of each rank
--               left out unless include_first_last; NULL without iterations)
--   breakdown   compute, exposed communication, exposed memory, exposed other, idle: the
--               temporal breakdown of every rank (W = the rank's GPU span, as temporal_breakdown)
--   overlap     'communication hidden under compute (%)': |U comm n U compute| / |U comm|
--               summed over ranks x 100 (comm_comp_overlap's run row)
--   idle        idle time by cause: the gap before each busy island of a rank's GPU timeline,
--               'host wait' (its first op was launched after the gap began), 'kernel wait'
--               (shorter than kernel_wait_ns) or 'other' (as idle_gaps)
--   collective  NCCL kernel time by collective (nccl_ops)
--   kernel      GPU time by kernel name (kind: the kernel's kind)
-- Times (all but step and overlap) are summed over the run's ranks and divided by its (rank,
-- iteration) pairs, or by its ranks when it has no iterations: ns per rank and step.
-- Output: run_id, section, item, item_order (the breakdown's part order, else 0), kind, value.
-- A metric passes its runs and parameters:
--   FROM run_measures(chosen, getvariable('include_first_last'), getvariable('kernel_wait_ns'))
CREATE OR REPLACE MACRO run_measures(chosen_runs, include_first_last, kernel_wait_ns) AS TABLE
WITH __rm_keys AS (
    SELECT run_id, rank_key AS grp FROM ranks
    WHERE run_id IN (SELECT run_id FROM query_table(chosen_runs))
), __rm_units AS (
    -- what per-step values are divided by: (rank, iteration) pairs, else ranks
    SELECT k.run_id, CAST(coalesce(nullif(s.n, 0), k.n) AS DOUBLE) AS units
    FROM (SELECT run_id, count(*) AS n FROM __rm_keys GROUP BY run_id) k
    LEFT JOIN (SELECT run_id, count(*) AS n FROM iterations GROUP BY run_id) s ON s.run_id = k.run_id
), __rm_ops AS NOT MATERIALIZED (
    -- layer: 0 compute, 1 comm, 2 memory, NULL sync/other; one window per rank (window_id 0)
    SELECT rank_key AS grp, start_ns, end_ns, alone, launch_ns, device_prev_end_ns, name, kind,
           0 AS window_id,
           CASE kind WHEN 'compute' THEN 0 WHEN 'comm' THEN 1
                     WHEN 'memcpy' THEN 2 WHEN 'memset' THEN 2 END AS layer
    FROM gpu_ops
    WHERE run_id IN (SELECT run_id FROM query_table(chosen_runs))
), __rm_spans AS (
    SELECT grp, 0 AS window_id, min(start_ns) AS start_ns, max(end_ns) AS end_ns
    FROM __rm_ops GROUP BY grp
), __rm_layers AS (
    SELECT * FROM intervals_window_breakdown(__rm_ops, __rm_spans)
), __rm_comm AS (
    SELECT grp, start_ns, end_ns FROM __rm_ops WHERE layer = 1
), __rm_comm_union AS (
    SELECT grp, sum(end_ns - start_ns) AS comm_ns FROM intervals_union(__rm_comm) GROUP BY grp
), __rm_crowded AS (
    -- ops with one start and end are one row, with the earliest launch and previous end among
    -- them: which of them intervals_union keeps first would otherwise be left to chance
    SELECT grp, start_ns, end_ns, min(launch_ns) AS launch_ns,
           min(device_prev_end_ns) AS device_prev_end_ns
    FROM __rm_ops WHERE NOT alone
    GROUP BY grp, start_ns, end_ns
), __rm_islands AS (
    -- an op alone on its rank's timeline is an island; the others are merged (intervals_union
    -- keeps the first op's launch); device_prev_end_ns is where the island before ended
    SELECT grp, start_ns, launch_ns, device_prev_end_ns AS prev_end_ns
    FROM (SELECT grp, start_ns, launch_ns, device_prev_end_ns FROM __rm_ops WHERE alone
          UNION ALL
          SELECT grp, start_ns, launch_ns, device_prev_end_ns FROM intervals_union(__rm_crowded))
    WHERE device_prev_end_ns < start_ns
), __rm_step_time AS (
    SELECT run_id, median(dur_ns) AS step_ns
    FROM aligned_steps(NULL, include_first_last)
    WHERE run_id IN (SELECT run_id FROM query_table(chosen_runs))
    GROUP BY run_id
), __rm_measures AS (
    -- (run, section, item, value, per_step): per_step values are divided by the run's units
    SELECT k.run_id, 'breakdown' AS section, part.item, part.item_order, NULL AS kind,
           sum(CASE part.item_order WHEN 1 THEN l.layer0_ns WHEN 2 THEN l.layer1_ns
                                    WHEN 3 THEN l.layer2_ns WHEN 4 THEN l.rest_ns
                                    ELSE s.end_ns - s.start_ns - coalesce(l.busy_ns, 0) END) AS value,
           true AS per_step
    FROM __rm_spans s
    JOIN __rm_keys k ON k.grp = s.grp
    LEFT JOIN __rm_layers l ON l.grp = s.grp
    CROSS JOIN (VALUES ('compute', 1), ('exposed communication', 2), ('exposed memory', 3),
                       ('exposed other', 4), ('idle', 5)) part(item, item_order)
    GROUP BY k.run_id, part.item, part.item_order
    UNION ALL
    SELECT k.run_id, 'overlap', 'communication hidden under compute (%)', 0, NULL,
           (sum(c.comm_ns) - sum(coalesce(l.layer1_ns, 0))) * 100.0 / nullif(sum(c.comm_ns), 0), false
    FROM __rm_comm_union c JOIN __rm_keys k ON k.grp = c.grp LEFT JOIN __rm_layers l ON l.grp = c.grp
    GROUP BY k.run_id
    UNION ALL
    SELECT k.run_id, 'idle',
           CASE WHEN i.launch_ns > i.prev_end_ns THEN 'host wait'
                WHEN i.start_ns - i.prev_end_ns < CAST(kernel_wait_ns AS BIGINT) THEN 'kernel wait'
                ELSE 'other' END,
           0, NULL, sum(i.start_ns - i.prev_end_ns), true
    FROM __rm_islands i JOIN __rm_keys k ON k.grp = i.grp
    GROUP BY ALL
    UNION ALL
    SELECT k.run_id, 'collective', n.collective, 0, NULL, sum(n.dur_ns), true
    FROM nccl_ops n JOIN __rm_keys k ON k.grp = n.rank_key
    GROUP BY k.run_id, n.collective
    UNION ALL
    SELECT k.run_id, 'kernel', CAST(o.name AS VARCHAR), 0, min(o.kind), sum(o.total_ns), true
    FROM (SELECT grp, name, min(kind) AS kind, sum(end_ns - start_ns) AS total_ns
          FROM __rm_ops WHERE kind NOT IN ('memcpy', 'memset') GROUP BY grp, name) o
    JOIN __rm_keys k ON k.grp = o.grp
    GROUP BY k.run_id, o.name
    UNION ALL
    SELECT u.run_id, 'step', 'step time', 0, NULL, t.step_ns, false
    FROM __rm_units u LEFT JOIN __rm_step_time t ON t.run_id = u.run_id
)
SELECT m.run_id, m.section, m.item, m.item_order, CAST(m.kind AS VARCHAR) AS kind,
       m.value / CASE WHEN m.per_step THEN u.units ELSE 1 END AS value
FROM __rm_measures m JOIN __rm_units u ON u.run_id = m.run_id;
