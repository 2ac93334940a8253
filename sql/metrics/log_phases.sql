-- metric: log_phases
-- version: 2
-- summary: Phase times from training logs: per run and timer, the median over the kept steps (the first `warmup` left out) with its spread, beside the TFLOP/s the log prints
-- unit: ms
-- grain: run_id, timer
-- columns: run_id VARCHAR, series_id VARCHAR, varied VARCHAR, value VARCHAR, position BIGINT, timer VARCHAR, steps BIGINT, median_ms DOUBLE, mean_ms DOUBLE, min_ms DOUBLE, max_ms DOUBLE, stddev_ms DOUBLE, spread_ms DOUBLE, tflops DOUBLE
-- params: run (text, optional), series (text, optional), warmup (int, default 1)
-- uses: log_iterations, log_timers, run_cards, scope, series
-- complexity: O(n) in log lines (hash joins and aggregates); runs and series read per run
-- see: DeepSpeed wall_clock_breakdown, Megatron-LM iteration lines
-- show: timer, value, median_ms, tflops, steps, varied, run_id
--
-- Timers come from log_timers (steps numbered per timer and rank in file order) and, as the timer
-- 'iteration', from the elapsed time of log_iterations lines. Steps up to `warmup` are left out,
-- as users do (the first step compiles and warms caches). Per run and timer: kept steps, median
-- (mean of the middle two for an even count), mean, min, max, sample standard deviation and the
-- spread max - min, over every rank's lines. tflops: median TFLOP/s of the kept iteration lines
-- (NULL when the log prints none). With series (a series_id of the series view), the runs of
-- that series, with the varied field and each run's value and place in it.
WITH chosen AS (
    SELECT run_id, CAST(NULL AS VARCHAR) AS series_id, CAST(NULL AS VARCHAR) AS varied,
           CAST(NULL AS VARCHAR) AS value, CAST(NULL AS BIGINT) AS position
    FROM run_cards
    WHERE getvariable('series') IS NULL
    UNION ALL
    SELECT run_id, series_id, varied, value, position
    FROM series
    WHERE series_id = CAST(getvariable('series') AS VARCHAR)
),
warmup AS (
    SELECT coalesce(CAST(getvariable('warmup') AS INTEGER), 1) AS steps
),
timed AS (
    SELECT run_id, timer, step, ms FROM log_timers
    UNION ALL
    SELECT run_id, 'iteration', iteration, elapsed_ms FROM log_iterations WHERE elapsed_ms IS NOT NULL
),
kept AS (
    SELECT t.* FROM timed t JOIN chosen c USING (run_id)
    WHERE t.step > (SELECT steps FROM warmup)
      AND run_match(t.run_id, getvariable('run'))
),
tflops AS (
    SELECT run_id, median(tflops) AS tflops
    FROM log_iterations
    WHERE iteration > (SELECT steps FROM warmup) AND tflops IS NOT NULL
    GROUP BY run_id
)
SELECT
    k.run_id,
    c.series_id,
    c.varied,                              -- the field the series varies
    c.value,                               -- this run's value of it
    c.position,                            -- its place in the series
    k.timer,
    count(*) AS steps,                     -- kept lines
    median(k.ms) AS median_ms,
    avg(k.ms) AS mean_ms,
    min(k.ms) AS min_ms,
    max(k.ms) AS max_ms,
    coalesce(stddev_samp(k.ms), 0.0) AS stddev_ms,
    max(k.ms) - min(k.ms) AS spread_ms,
    f.tflops                               -- median TFLOP/s the log prints
FROM kept k
JOIN chosen c USING (run_id)
LEFT JOIN tflops f USING (run_id)
GROUP BY k.run_id, c.series_id, c.varied, c.value, c.position, k.timer, f.tflops
ORDER BY c.position NULLS LAST, k.run_id, k.timer;
