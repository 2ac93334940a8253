-- metric: run_diff
-- version: 2
-- summary: What changed between two runs, per op name: counts and total time in each, the differences and the class of change
-- unit: ns
-- grain: level, name
-- columns: level VARCHAR, name VARCHAR, base_count DOUBLE, test_count DOUBLE, base_total_ns DOUBLE, test_total_ns DOUBLE, count_diff DOUBLE, time_diff_ns DOUBLE, time_diff_pct DOUBLE, base_avg_ns DOUBLE, test_avg_ns DOUBLE, count_class VARCHAR, time_class VARCHAR, base_steps BIGINT, test_steps BIGINT, per_step BOOLEAN
-- params: base (text, optional), test (text, optional), base_rank (int, optional), test_rank (int, optional), base_iteration (text, optional), test_iteration (text, optional), level (text, default 'all'), short_names (bool, default false), threshold (float, default 0.05), launched_only (bool, default false), top (int, default 1000)
-- uses: cpu_ops, cuda_api, gpu_ops, iterations, kernel_short_name, nvtx_ranges, ranks, run_pair, summary_stats
-- complexity: O(n log n) in the ops of the two runs (hash aggregates; NVTX ranges to iterations by ASOF join)
-- see: HTA TraceDiff.compare_traces and ops_diff (tests/peer/hta_trace_diff.py)
-- show: level, name, time_diff_ns, time_class, time_diff_pct, base_total_ns, test_total_ns, count_class
--
-- v2: top (default 1000) keeps the largest changes; the ops past it are summed in one 'rest' row (issue 42).
-- The ops of two runs matched by name: base is the run before (the control), test the run
-- after. Default: base is the first run by run_id, test the next one (run_pair).
-- Scope of each side: base_rank / test_rank (default: every rank of the run) and
-- base_iteration / test_iteration, an iteration 'N' or a range 'N-M' (inclusive; default: every
-- op of the run, inside an iteration or not). An op belongs to the iteration of the call that
-- launched it (GPU ops; ingest falls back to the step holding its start when the launch is not
-- in the trace, where HTA puts the op in no iteration: launched_only=true leaves those out, as
-- HTA does) or whose ProfilerStep holds its start (host ops, CUDA API calls, NVTX ranges).
-- level: 'all' (default) or a comma-separated list of
--   kernel    GPU ops (gpu_ops: kernels, memcpy, memset)
--   cpu_op    framework operators (cpu_ops)
--   cuda_api  CUDA runtime and driver calls (cuda_api)
--   nvtx      NVTX ranges and PyTorch user annotations, ProfilerStep#N included (nvtx_ranges:
--             marks and Kineto's GPU-side copies of annotations left out)
-- Names are matched exactly; short_names=true matches GPU ops by their base name
-- (kernel_short_name: 'vectorized_elementwise_kernel'), since template arguments change between
-- library versions. Host names are short already and stay as they are.
-- Counts and times are totals over the side's scope. When the two sides hold different numbers
-- of (rank, iteration) pairs (base_steps, test_steps from the iterations view), every count and
-- time is divided by its side's number, i.e. given per rank and iteration (per_step = true).
-- count_class is HTA's ops_diff by count: added (only in test), deleted (only in base),
-- increased, decreased, unchanged. time_class: added and deleted as count_class; otherwise
-- increased or decreased when the total time moved by more than threshold x the base time
-- (0.05 = 5%), else unchanged.
-- Ordered by the absolute time difference, largest first.
-- top (default 1000; 0: every op) keeps the top ops of that order. The others, when there are
-- any, are summed in one last row: level 'rest', name '15,724 more ops (top=0 lists them)',
-- their counts and times summed (time_diff_ns: their net change), the classes NULL. Without
-- top, a warehouse of 500,000 kernel names hands on a row per name.
WITH scopes AS (
    -- each side's run, rank and iterations as given
    SELECT p.side, p.run_id,
           CAST(CASE p.side WHEN 'base' THEN getvariable('base_rank')
                            ELSE getvariable('test_rank') END AS INTEGER) AS rank,
           CAST(CASE p.side WHEN 'base' THEN getvariable('base_iteration')
                            ELSE getvariable('test_iteration') END AS VARCHAR) AS iterations
    FROM run_pair(getvariable('base'), getvariable('test')) p
),
sides AS (
    -- the iteration range: lo/hi NULL when none is given or it is not 'N' / 'N-M' (which then
    -- selects nothing)
    SELECT side, run_id, rank, iterations, TRY_CAST(nullif(lo_text, '') AS INTEGER) AS lo,
           TRY_CAST(coalesce(nullif(hi_text, ''), nullif(lo_text, '')) AS INTEGER) AS hi
    FROM (SELECT *, regexp_extract(iterations, '^\s*(\d+)\s*(-\s*(\d+))?\s*$', 1) AS lo_text,
                    regexp_extract(iterations, '^\s*(\d+)\s*(-\s*(\d+))?\s*$', 3) AS hi_text
          FROM scopes)
),
wanted AS (
    SELECT trim(level) AS level
    FROM (SELECT unnest(CASE WHEN trim(coalesce(CAST(getvariable('level') AS VARCHAR), 'all')) = 'all'
                             THEN ['kernel', 'cpu_op', 'cuda_api', 'nvtx']
                             ELSE string_split(CAST(getvariable('level') AS VARCHAR), ',') END) AS level)
),
-- ops per (run, rank, iteration, name), each source aggregated on its own -----------------------
gpu AS (
    -- grouped by rank_key and the name ENUM first: millions of rows, a few thousand groups
    SELECT rank_key, iteration, name, count(*) AS n, sum(dur_ns) AS total_ns
    FROM gpu_ops
    WHERE 'kernel' IN (SELECT level FROM wanted)
      -- by rank_key: half the CPU of comparing run_id text on every op
      AND rank_key IN (SELECT rank_key FROM ranks WHERE run_id IN (SELECT run_id FROM sides))
      AND (NOT coalesce(CAST(getvariable('launched_only') AS BOOLEAN), false) OR launch_ns IS NOT NULL)
    GROUP BY rank_key, iteration, name
),
nvtx AS (
    -- a range's iteration is looked up only when a side keeps some iterations: that join
    -- sorts every range (millions in an autograd-NVTX capture), and without one it is unused
    SELECT n.run_id, n.rank, n.name, n.dur_ns,
           CASE WHEN n.start_ns < i.end_ns THEN i.iteration END AS iteration
    FROM nvtx_ranges n
    ASOF LEFT JOIN iterations i
        ON i.run_id = n.run_id AND i.rank = n.rank AND n.start_ns >= i.start_ns
    WHERE 'nvtx' IN (SELECT level FROM wanted)
      AND (getvariable('base_iteration') IS NOT NULL OR getvariable('test_iteration') IS NOT NULL)
      AND n.run_id IN (SELECT run_id FROM sides)
      AND n.kind IN ('push_pop', 'start_end', 'annotation') AND n.end_ns IS NOT NULL
    UNION ALL
    SELECT run_id, rank, name, dur_ns, NULL
    FROM nvtx_ranges
    WHERE 'nvtx' IN (SELECT level FROM wanted)
      AND getvariable('base_iteration') IS NULL AND getvariable('test_iteration') IS NULL
      AND run_id IN (SELECT run_id FROM sides)
      AND kind IN ('push_pop', 'start_end', 'annotation') AND end_ns IS NOT NULL
),
ops AS (
    SELECT 'kernel' AS level, k.run_id, k.rank, g.iteration,
           CASE WHEN coalesce(CAST(getvariable('short_names') AS BOOLEAN), false)
                -- kernel_short_name stops at the '<' of an anonymous namespace: drop it first
                THEN kernel_short_name(replace(CAST(g.name AS VARCHAR), '<unnamed>::', ''))
                ELSE CAST(g.name AS VARCHAR) END AS name,
           g.n, g.total_ns
    FROM gpu g JOIN ranks k ON k.rank_key = g.rank_key
    UNION ALL
    SELECT 'cpu_op', run_id, rank, iteration, name, count(*), sum(dur_ns)
    FROM cpu_ops
    WHERE 'cpu_op' IN (SELECT level FROM wanted) AND run_id IN (SELECT run_id FROM sides)
    GROUP BY run_id, rank, iteration, name
    UNION ALL
    SELECT 'cuda_api', run_id, rank, iteration, name, count(*), sum(dur_ns)
    FROM cuda_api
    WHERE 'cuda_api' IN (SELECT level FROM wanted) AND run_id IN (SELECT run_id FROM sides)
    GROUP BY run_id, rank, iteration, name
    UNION ALL
    SELECT 'nvtx', run_id, rank, iteration, name, count(*), sum(dur_ns)
    FROM nvtx
    GROUP BY run_id, rank, iteration, name
),
-- each side's scope ------------------------------------------------------------------------------
in_scope AS (
    SELECT s.side, o.level, o.name, o.n, o.total_ns
    FROM ops o
    JOIN sides s
      ON s.run_id = o.run_id
     AND (s.rank IS NULL OR o.rank = s.rank)
     AND (s.iterations IS NULL OR o.iteration BETWEEN s.lo AND s.hi)
),
steps AS (
    -- (rank, iteration) pairs in each side's scope
    SELECT s.side, count(*) AS steps
    FROM iterations i
    JOIN sides s
      ON s.run_id = i.run_id
     AND (s.rank IS NULL OR i.rank = s.rank)
     AND (s.iterations IS NULL OR i.iteration BETWEEN s.lo AND s.hi)
    GROUP BY s.side
),
scale AS (
    -- per_step when both sides have iterations but not the same number
    SELECT b.steps AS base_steps, t.steps AS test_steps,
           coalesce(b.steps <> t.steps, false) AS per_step
    FROM (SELECT 1) one
    LEFT JOIN steps b ON b.side = 'base'
    LEFT JOIN steps t ON t.side = 'test'
),
compared AS (
    SELECT p.level, p.name,
           p.base_n / CASE WHEN c.per_step THEN c.base_steps ELSE 1 END AS base_count,
           p.test_n / CASE WHEN c.per_step THEN c.test_steps ELSE 1 END AS test_count,
           p.base_ns / CASE WHEN c.per_step THEN c.base_steps ELSE 1 END AS base_total_ns,
           p.test_ns / CASE WHEN c.per_step THEN c.test_steps ELSE 1 END AS test_total_ns,
           p.base_ns / nullif(p.base_n, 0) AS base_avg_ns,
           p.test_ns / nullif(p.test_n, 0) AS test_avg_ns,
           c.base_steps, c.test_steps, c.per_step
    FROM (
        SELECT level, name,
               CAST(coalesce(sum(n) FILTER (WHERE side = 'base'), 0) AS DOUBLE) AS base_n,
               CAST(coalesce(sum(n) FILTER (WHERE side = 'test'), 0) AS DOUBLE) AS test_n,
               CAST(coalesce(sum(total_ns) FILTER (WHERE side = 'base'), 0) AS DOUBLE) AS base_ns,
               CAST(coalesce(sum(total_ns) FILTER (WHERE side = 'test'), 0) AS DOUBLE) AS test_ns
        FROM in_scope
        GROUP BY level, name
    ) p
    CROSS JOIN scale c
),
ranked AS (
    SELECT *, row_number() OVER (ORDER BY abs(test_total_ns - base_total_ns) DESC, level, name)
                  AS row_no
    FROM compared
),
kept AS (
    SELECT * FROM ranked WHERE within_top(row_no, getvariable('top'))
    UNION ALL
    -- the rows past top, summed
    SELECT 'rest', format('{:,} more ops (top=0 lists them)', count(*)),
           sum(base_count), sum(test_count), sum(base_total_ns), sum(test_total_ns),
           NULL, NULL, any_value(base_steps), any_value(test_steps), any_value(per_step),
           max(row_no)
    FROM ranked WHERE NOT within_top(row_no, getvariable('top'))
    HAVING count(*) > 0
)
SELECT
    level,                                        -- kernel | cpu_op | cuda_api | nvtx | rest
    name,                                         -- op name (base name with short_names)
    base_count,                                   -- instances in base (per step when per_step)
    test_count,
    base_total_ns,                                -- total duration in base, ns (per step when per_step)
    test_total_ns,
    test_count - base_count AS count_diff,
    test_total_ns - base_total_ns AS time_diff_ns,
    (test_total_ns - base_total_ns) * 100.0 / nullif(base_total_ns, 0) AS time_diff_pct,
    base_avg_ns,                                  -- mean duration of one instance, ns
    test_avg_ns,
    CASE WHEN level = 'rest' THEN NULL
         WHEN base_count = 0 AND test_count > 0 THEN 'added'
         WHEN test_count = 0 AND base_count > 0 THEN 'deleted'
         WHEN test_count > base_count THEN 'increased'
         WHEN test_count < base_count THEN 'decreased'
         ELSE 'unchanged' END AS count_class,     -- HTA ops_diff
    CASE WHEN level = 'rest' THEN NULL
         WHEN base_count = 0 AND test_count > 0 THEN 'added'
         WHEN test_count = 0 AND base_count > 0 THEN 'deleted'
         WHEN test_total_ns - base_total_ns > coalesce(CAST(getvariable('threshold') AS DOUBLE), 0.05) * base_total_ns
             THEN 'increased'
         WHEN base_total_ns - test_total_ns > coalesce(CAST(getvariable('threshold') AS DOUBLE), 0.05) * base_total_ns
             THEN 'decreased'
         ELSE 'unchanged' END AS time_class,
    base_steps,                                   -- (rank, iteration) pairs in base's scope
    test_steps,
    per_step                                      -- counts and times are per rank and iteration
FROM kept
ORDER BY row_no;
