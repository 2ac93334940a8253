-- metric: breakdown_diff
-- version: 3
-- summary: Two runs side by side (step time, temporal breakdown, overlap, idle causes, collective time by kind, top kernels) with the differences and one sentence naming the largest contributor to the change in step time
-- unit: ns
-- grain: section, item
-- columns: section VARCHAR, item VARCHAR, base_value DOUBLE, test_value DOUBLE, diff DOUBLE, diff_pct DOUBLE, sentence VARCHAR
-- params: base (text, optional), test (text, optional), top (int, default 5), include_first_last (bool, default false), kernel_wait_ns (int, default 30000)
-- uses: run_measures, run_pair
-- complexity: O(n log n) in the GPU ops, CPU ops and API calls of the two runs (run_measures: hash aggregates and sort-based interval sweeps)
-- see: run_diff, scaling, temporal_breakdown, comm_comp_overlap, idle_gaps, iteration_time, gpu_kernel_summary; nsys diff recipe
-- show: section, item, diff_pct, base_value, test_value, diff
--
-- v3: clock_offsets counts a grouped kernel (several collectives in one NCCL group) as one observation: nsys runs with grouped collectives get Kineto's offsets (issue 34).
-- base is the run before, test the run after (run_pair: default the first run by run_id and
-- the next one). One row per (section, item), base and test side by side, from run_measures
-- (sql/lib/run_measures.sql):
--   step        step time: the median across-rank iteration time, ns (NULL without iterations)
--   breakdown   compute, exposed communication, exposed memory, exposed other, idle: the
--               temporal breakdown of every rank, ns per rank and step
--   overlap     communication hidden under compute, %
--   idle        idle time by cause (host wait, kernel wait, other), ns per rank and step
--   collective  NCCL kernel time by collective, ns per rank and step
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
measures AS (
    SELECT p.side, m.section, m.item, m.item_order, m.kind, m.value
    FROM run_measures(pair, getvariable('include_first_last'),
                      coalesce(getvariable('kernel_wait_ns'), 30000)) m
    JOIN pair p ON p.run_id = m.run_id
),
top_kernels AS (
    SELECT DISTINCT item FROM measures
    WHERE section = 'kernel'
    QUALIFY row_number() OVER (PARTITION BY side ORDER BY value DESC, item)
            <= coalesce(CAST(getvariable('top') AS BIGINT), 5)
),
side_by_side AS (
    -- every item of either run; a kernel or collective missing in one run is NULL there
    SELECT section, item, min(item_order) AS item_order, min(kind) AS kind,
           max(value) FILTER (WHERE side = 'base') AS base_value,
           max(value) FILTER (WHERE side = 'test') AS test_value
    FROM measures
    GROUP BY section, item
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
    SELECT CASE WHEN section = 'collective' THEN 'exposed communication'
                WHEN section = 'idle' THEN 'idle'
                WHEN kind = 'compute' THEN 'compute' ELSE 'exposed other' END AS part,
           CASE section WHEN 'collective' THEN 'NCCL ' WHEN 'kernel' THEN 'kernel ' ELSE '' END
               || item AS detail,
           coalesce(test_value, 0) - coalesce(base_value, 0) AS diff
    FROM side_by_side
    WHERE section IN ('collective', 'idle') OR (section = 'kernel' AND kind <> 'comm')
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
WHERE section <> 'kernel' OR item IN (SELECT item FROM top_kernels)
ORDER BY CASE section WHEN 'step' THEN 1 WHEN 'breakdown' THEN 2 WHEN 'overlap' THEN 3
                      WHEN 'idle' THEN 4 WHEN 'collective' THEN 5 ELSE 6 END,
         item_order, abs(coalesce(test_value, 0) - coalesce(base_value, 0)) DESC, item;
