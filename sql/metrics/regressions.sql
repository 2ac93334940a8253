-- metric: regressions
-- version: 4
-- summary: Every measure of a series of runs that moved more than a threshold from the series' median
-- unit: ns
-- grain: run_id, section, item
-- columns: run_id VARCHAR, section VARCHAR, item VARCHAR, value DOUBLE, series_median DOUBLE, runs BIGINT, deviation DOUBLE, deviation_pct DOUBLE, flagged BOOLEAN, worse BOOLEAN
-- params: runs (text, optional), series (text, optional), threshold (float, default 0.1), include_first_last (bool, default false), kernel_wait_ns (int, default 30000), top (int, default 1000)
-- uses: ranks, run_choice, run_measures, summary_stats
-- complexity: O(m) in run measures (run_measures per run, then hash joins)
-- see: breakdown_diff, run_diff, scaling
-- show: run_id, section, item, deviation_pct, worse, value, series_median
--
-- v3: clock_offsets counts a grouped kernel (several collectives in one NCCL group) as one observation: nsys runs with grouped collectives get Kineto's offsets (issue 34).
-- v4: top (default 1000) keeps the largest moves; the rows past it are counted in one 'rest' row (issue 42).
-- A series is runs of the same configuration but for one field or the date. runs: a
-- comma-separated list of run ids (default: every run). series: a series_id of the series view
-- (runs that differ in exactly one configuration field): its runs only.
-- Each run's measures are those of breakdown_diff (run_measures: step time, the temporal
-- breakdown, overlap, idle by cause, collective time by kind, time per kernel name; ns per rank
-- and step, overlap in %); a kernel, collective or idle cause missing from a run counts 0 there.
-- For each measure the series median is taken over the runs, and a value is flagged when it is
-- more than threshold x |median| away from it (0.1 = 10%; any value off a median of 0).
-- worse: the move is a regression (up for times, down for the overlap share).
-- Ordered flagged first, then by the size of the move.
-- top (default 1000; 0: every row) keeps the first top rows. The others, when there are any,
-- are one last row: section 'rest', item '16,724 more rows, 130 flagged, 12 worse (top=0 lists
-- them)', every other column NULL. It is no measure, so never flagged nor worse: a gate that
-- judges every row asks top=0 (`tracewh query regressions --fail` does). Without top, a
-- warehouse of 500,000 kernel names hands on a row per name and run.
WITH chosen AS (
    SELECT run_id FROM (SELECT DISTINCT run_id FROM ranks)
    WHERE run_chosen(run_id, getvariable('runs'), getvariable('series'))
),
measures AS (
    SELECT run_id, section, item, value
    FROM run_measures(chosen, getvariable('include_first_last'),
                      coalesce(getvariable('kernel_wait_ns'), 30000))
),
counted AS (
    -- items that a run may lack count 0 there
    SELECT c.run_id, i.section, i.item, coalesce(m.value, 0) AS value
    FROM chosen c
    CROSS JOIN (SELECT DISTINCT section, item FROM measures
                WHERE section IN ('idle', 'collective', 'kernel')) i
    LEFT JOIN measures m ON m.run_id = c.run_id AND m.section = i.section AND m.item = i.item
    UNION ALL
    SELECT run_id, section, item, value FROM measures
    WHERE section NOT IN ('idle', 'collective', 'kernel')
),
medians AS (
    SELECT section, item, median(value) AS series_median, count(value) AS runs
    FROM counted GROUP BY section, item
),
judged AS (
    SELECT c.run_id, c.section, c.item, c.value, d.series_median, d.runs,
           c.value - d.series_median AS deviation,
           abs(c.value - d.series_median) > coalesce(CAST(getvariable('threshold') AS DOUBLE), 0.1) * abs(d.series_median)
               AS flagged
    FROM counted c JOIN medians d ON d.section = c.section AND d.item = c.item
),
ranked AS (
SELECT
    run_id,
    section,                                  -- step | breakdown | overlap | idle | collective | kernel | rest
    item,
    value,                                    -- ns per rank and step (step time: ns; overlap: %)
    series_median,                            -- the median of the series' runs
    runs,                                     -- runs with a value
    deviation,                                -- value - series_median
    deviation * 100.0 / nullif(abs(series_median), 0) AS deviation_pct,
    coalesce(flagged, false) AS flagged,      -- moved more than threshold from the median (rest: NULL)
    CASE WHEN flagged THEN (deviation > 0) <> (section = 'overlap') END AS worse,  -- rest: NULL
    row_number() OVER (ORDER BY coalesce(flagged, false) DESC,
                                abs(deviation * 100.0 / nullif(abs(series_median), 0)) DESC NULLS FIRST,
                                run_id, section, item) AS row_no
FROM judged
)
SELECT run_id, section, item, value, series_median, runs, deviation, deviation_pct, flagged,
       worse
FROM (
    SELECT * FROM ranked WHERE within_top(row_no, getvariable('top'))
    UNION ALL
    -- the rows past top, counted
    SELECT NULL, 'rest',
           format('{:,} more rows, {:,} flagged, {:,} worse (top=0 lists them)', count(*),
                  count(*) FILTER (WHERE flagged), count(*) FILTER (WHERE worse)),
           NULL, NULL, NULL, NULL, NULL, NULL, NULL, max(row_no)
    FROM ranked WHERE NOT within_top(row_no, getvariable('top'))
    HAVING count(*) > 0
)
ORDER BY row_no;
