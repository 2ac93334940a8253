-- metric: straggler_cause
-- version: 4
-- summary: Per collective, the rank that arrived last, by how much, and what it did instead (data loading, sync waits, OS calls, launch gaps, GPU work) beside the median rank; per rank, how often it was last and whether the culprit is the same every step
-- unit: ns
-- grain: run_id, op_key, rank
-- columns: run_id VARCHAR, op_key VARCHAR, collective VARCHAR, process_group VARCHAR, iteration INTEGER, ranks BIGINT, rank INTEGER, median_rank INTEGER, late_ns BIGINT, cause VARCHAR, why VARCHAR, later_start_ns BIGINT, since_ns BIGINT, stretch_ns BIGINT, data_loading_ns BIGINT, sync_wait_ns BIGINT, os_call_ns BIGINT, launch_gap_ns BIGINT, gpu_work_ns BIGINT, median_stretch_ns BIGINT, median_data_loading_ns BIGINT, median_sync_wait_ns BIGINT, median_os_call_ns BIGINT, median_launch_gap_ns BIGINT, median_gpu_work_ns BIGINT, collectives BIGINT, times_last BIGINT, last_pct DOUBLE, main_cause VARCHAR, steps_culprit BIGINT, steps BIGINT, culprit_stable BOOLEAN
-- params: run (text, optional), collective (text, optional), iteration_from (int, optional), iteration_to (int, optional), per_rank (bool, default false), per_step (bool, default false), cause_min_ns (int, default 30000), data_pattern (text, optional)
-- see: straggler, straggler_ops, idle_gaps, host_breakdown; msprof-analyze slow-rank analysis; traceml#374
-- uses: collective_parts, gap_causes, gpu_ops, host_activity, iterations, scope
-- complexity: O(n log n) in collectives; O(n) in GPU ops (a scan for the idle stretches: gpu_ops.device_prev_end_ns); host events as idle_gaps (binned equi-joins)
-- show: op_key, rank, cause, late_ns, why, collective, main_cause, run_id
--
-- v4: the parts' sums are BIGINT, not HUGEINT (a Parquet/Spark reader got DECIMAL(38,0)).
-- v3: clock_offsets counts a grouped kernel (several collectives in one NCCL group) as one observation: nsys runs with grouped collectives get Kineto's offsets (issue 34).
-- For each collective matched across ranks (collective_waits: sends and receives excluded), with
-- arrivals (kernel starts) compared on the aligned clock:
--   rank         the last rank to arrive (ties: the lowest rank)
--   median_rank  the rank whose arrival is the median: the ((n + 1) / 2)-th to arrive, counted
--                so that it is never the last rank, also when all arrive at once
--   late_ns      last arrival - the median rank's arrival
-- Each of the two ranks' stretch before its arrival, from its previous synchronisation point: the
-- end of its previous collective in the same process group, or the start of the step that
-- launched this one, whichever is later (since_ns on the rank's own clock), is split, each instant
-- once, on the device running the collective: its idle stretches at least cause_min_ns long
-- (default 30 us, as idle_gaps; the device is idle from the end of all its earlier ops to the
-- start of the next) by what the rank's launching thread did then, as idle_gaps names it
-- (sql/lib/gap_causes.sql), and the rest of the time as GPU work:
--   data_loading_ns  a DataLoader op or data-loading range (data_pattern)
--   sync_wait_ns     a call waiting for the GPU (sync_stalls' rules)
--   os_call_ns       an OS runtime call (I/O, polls, locks)
--   launch_gap_ns    anything else: the GPU waiting for launches, Python, the framework
--   gpu_work_ns      the device running ops, with the short idle stretches between them (the
--                    usual delay between back-to-back kernels)
-- The five add up to stretch_ns. median_* is the same split of the median rank's stretch, and
-- later_start_ns how much later (aligned) the last rank's synchronisation point was than the
-- median rank's (a step begun later), so that exactly
--   late_ns = later_start_ns + sum over the five parts of (part - median part).
-- The cause is the largest of these six terms ('later start' for the first), and why says it,
-- with every term that adds at least 1 % of late_ns:
--   "rank 3 arrived 38.12 ms late: +31.02 ms data loading, +4.10 ms GPU work"
-- per_rank = true: one row per run and rank instead (op_key NULL): collectives it took part
-- in, times_last and last_pct (share of them it was last in), late_ns summed over those,
-- main_cause (its most frequent cause), steps_culprit (steps in which it was late the longest
-- in total); steps (with a late rank) and culprit_stable (one rank was the culprit of every
-- step, at least two) are the run's, on each of its rows.
-- per_step = true (version 2, the report's heatmap): one row per run, step (iteration) and rank
-- that arrived last at a collective the step launched: times_last, late_ns summed over those
-- collectives, cause the term that adds the most summed over them.
-- collective / iteration_from / iteration_to keep collectives (iterations: the launching step).
WITH arrivals AS MATERIALIZED (
    SELECT *,
           row_number() OVER (PARTITION BY run_id, op_key ORDER BY aligned_start_ns DESC, rank) AS late_order,
           row_number() OVER (PARTITION BY run_id, op_key ORDER BY aligned_start_ns, rank DESC) AS arrival_order,
           lag(end_ns) OVER (PARTITION BY run_id, process_group, rank ORDER BY start_ns, op_key) AS prev_end_ns
    FROM collective_arrivals()
    WHERE run_match(run_id, getvariable('run'))
),
chosen AS (
    SELECT run_id, op_key FROM arrivals
    WHERE late_order = 1
      AND (getvariable('collective') IS NULL
           OR collective = CAST(getvariable('collective') AS VARCHAR))
      AND iteration_in(iteration, getvariable('iteration_from'), getvariable('iteration_to'))
),
pair AS MATERIALIZED (
    -- the last (role 0) and the median rank (role 1) of each collective, with its stretch
    SELECT a.run_id, a.op_key, a.rank, a.rank_key, a.device_id, a.collective, a.process_group,
           a.iteration,
           a.ranks, a.start_ns, a.aligned_start_ns,
           CASE WHEN a.late_order = 1 THEN 0 ELSE 1 END AS role,
           least(greatest(a.prev_end_ns, s.start_ns), a.start_ns) AS since_ns,
           a.start_ns - a.aligned_start_ns AS offset_ns,
           dense_rank() OVER (ORDER BY a.run_id, a.op_key) AS pair_id
    FROM arrivals a
    SEMI JOIN chosen c ON c.run_id = a.run_id AND c.op_key = a.op_key
    LEFT JOIN (SELECT run_id, rank, iteration, min(start_ns) AS start_ns FROM iterations GROUP BY ALL) s
           ON s.run_id = a.run_id AND s.rank = a.rank AND s.iteration = a.iteration
    WHERE a.late_order = 1 OR a.arrival_order = (a.ranks + 1) // 2
),
spans AS (
    SELECT pair_id * 2 + role AS span_id, rank_key AS grp, device_id, since_ns AS start_ns,
           start_ns AS end_ns
    FROM pair WHERE since_ns IS NOT NULL
),
device_gaps AS (
    -- the device's idle stretches at least cause_min_ns long: before each op that starts after
    -- every earlier op of its device ended (gpu_ops.device_prev_end_ns, kept at ingest: a scan,
    -- no sort), of the devices running the pairs' collectives
    SELECT g.rank_key AS grp, g.device_id, g.device_prev_end_ns AS start_ns, g.start_ns AS end_ns
    FROM gpu_ops g
    SEMI JOIN (SELECT DISTINCT grp, device_id FROM spans) d
           ON d.grp = g.rank_key AND d.device_id IS NOT DISTINCT FROM g.device_id
    WHERE g.start_ns - g.device_prev_end_ns
          >= greatest(coalesce(CAST(getvariable('cause_min_ns') AS BIGINT), 30000), 1)
),
gaps AS MATERIALIZED (
    -- cut to the spans they overlap (a binned equi-join; spans of one rank may overlap)
    SELECT row_number() OVER (ORDER BY s.span_id, g.start_ns) AS gap_id, s.span_id, s.grp,
           greatest(g.start_ns, s.start_ns) AS start_ns, least(g.end_ns, s.end_ns) AS end_ns
    FROM time_bins(device_gaps) g
    JOIN time_bins(spans) s
      ON s.grp = g.grp AND s.bin = g.bin AND s.device_id IS NOT DISTINCT FROM g.device_id
    WHERE g.start_ns < s.end_ns AND g.end_ns > s.start_ns
      AND bin_of(greatest(g.start_ns, s.start_ns)) = g.bin
),
host AS (
    SELECT g.span_id,
           CAST(sum(h.data_loading_ns) AS BIGINT) AS data_loading_ns,
           CAST(sum(h.sync_wait_ns) AS BIGINT) AS sync_wait_ns,
           CAST(sum(h.os_call_ns) AS BIGINT) AS os_call_ns
    FROM host_in_gaps(gaps, getvariable('data_pattern')) h
    JOIN gaps g USING (gap_id)
    GROUP BY g.span_id
),
split AS (
    SELECT p.*, p.start_ns - p.since_ns AS stretch_ns,
           p.start_ns - p.since_ns - coalesce(w.ns, 0) AS gpu_work_ns,
           coalesce(h.data_loading_ns, 0) AS data_loading_ns,
           coalesce(h.sync_wait_ns, 0) AS sync_wait_ns,
           coalesce(h.os_call_ns, 0) AS os_call_ns
    FROM pair p
    LEFT JOIN (SELECT span_id, CAST(sum(end_ns - start_ns) AS BIGINT) AS ns FROM gaps GROUP BY span_id) w
           ON w.span_id = p.pair_id * 2 + p.role
    LEFT JOIN host h ON h.span_id = p.pair_id * 2 + p.role
),
per_op AS (
    SELECT l.run_id, l.op_key, l.collective, l.process_group, l.iteration, l.ranks,
           l.rank, m.rank AS median_rank,
           l.aligned_start_ns - m.aligned_start_ns AS late_ns,
           (l.since_ns - l.offset_ns) - (m.since_ns - m.offset_ns) AS later_start_ns,
           l.since_ns, l.stretch_ns,
           l.data_loading_ns, l.sync_wait_ns, l.os_call_ns,
           l.stretch_ns - l.gpu_work_ns - l.data_loading_ns - l.sync_wait_ns - l.os_call_ns AS launch_gap_ns,
           l.gpu_work_ns,
           m.stretch_ns AS median_stretch_ns,
           m.data_loading_ns AS median_data_loading_ns, m.sync_wait_ns AS median_sync_wait_ns,
           m.os_call_ns AS median_os_call_ns,
           m.stretch_ns - m.gpu_work_ns - m.data_loading_ns - m.sync_wait_ns - m.os_call_ns
               AS median_launch_gap_ns,
           m.gpu_work_ns AS median_gpu_work_ns
    FROM split l JOIN split m ON m.pair_id = l.pair_id AND m.role = 1
    WHERE l.role = 0
),
extras AS (
    -- how much longer the last rank spent in each part than the median rank (NULL: no stretch)
    SELECT run_id, op_key, cause, extra_ns, listed FROM (
        SELECT run_id, op_key, 'data loading' AS cause, data_loading_ns - median_data_loading_ns AS extra_ns, 1 AS listed FROM per_op
        UNION ALL SELECT run_id, op_key, 'sync wait', sync_wait_ns - median_sync_wait_ns, 2 FROM per_op
        UNION ALL SELECT run_id, op_key, 'OS calls', os_call_ns - median_os_call_ns, 3 FROM per_op
        UNION ALL SELECT run_id, op_key, 'launch gaps', launch_gap_ns - median_launch_gap_ns, 4 FROM per_op
        UNION ALL SELECT run_id, op_key, 'GPU work', gpu_work_ns - median_gpu_work_ns, 5 FROM per_op
        UNION ALL SELECT run_id, op_key, 'later start', later_start_ns, 6 FROM per_op)
    WHERE extra_ns IS NOT NULL
),
explained AS (
    SELECT e.run_id, e.op_key,
           arg_max(e.cause, (e.extra_ns, -e.listed)) FILTER (WHERE e.extra_ns > 0) AS cause,
           string_agg(printf('%+.2f ms ', e.extra_ns / 1e6) || e.cause, ', '
                      ORDER BY e.extra_ns DESC, e.listed)
               FILTER (WHERE e.extra_ns > 0 AND e.extra_ns >= 0.01 * p.late_ns) AS parts
    FROM extras e JOIN per_op p ON p.run_id = e.run_id AND p.op_key = e.op_key
    GROUP BY e.run_id, e.op_key
),
described AS (
    SELECT p.*, x.cause,
           'rank ' || p.rank || ' arrived ' || printf('%.2f ms', p.late_ns / 1e6) || ' late'
               || coalesce(': ' || x.parts, '') AS why
    FROM per_op p LEFT JOIN explained x ON x.run_id = p.run_id AND x.op_key = p.op_key
),
-- per step and rank ----------------------------------------------------------------------------
step_late AS (
    SELECT run_id, iteration, rank, count(*) AS times_last, sum(late_ns) AS late_ns
    FROM described WHERE iteration IS NOT NULL
    GROUP BY run_id, iteration, rank
),
step_cause AS (
    SELECT run_id, iteration, rank,
           arg_max(cause, (extra_ns, -listed)) FILTER (WHERE extra_ns > 0) AS cause
    FROM (SELECT p.run_id, p.iteration, p.rank, e.cause, e.listed, sum(e.extra_ns) AS extra_ns
          FROM extras e JOIN per_op p ON p.run_id = e.run_id AND p.op_key = e.op_key
          WHERE p.iteration IS NOT NULL
          GROUP BY p.run_id, p.iteration, p.rank, e.cause, e.listed)
    GROUP BY run_id, iteration, rank
),
-- per run and rank ----------------------------------------------------------------------------
step_culprits AS (
    -- per step, the rank late the longest in total (ties: the lowest rank)
    SELECT run_id, iteration, arg_min(rank, (-late, rank)) AS culprit
    FROM (SELECT run_id, iteration, rank, sum(late_ns) AS late FROM described
          WHERE iteration IS NOT NULL GROUP BY ALL)
    GROUP BY run_id, iteration
),
run_steps AS (
    SELECT run_id, count(*) AS steps,
           count(*) >= 2 AND count(DISTINCT culprit) = 1 AS culprit_stable
    FROM step_culprits GROUP BY run_id
),
taking_part AS (
    SELECT a.run_id, a.rank, count(*) AS collectives
    FROM arrivals a SEMI JOIN chosen c ON c.run_id = a.run_id AND c.op_key = a.op_key
    GROUP BY ALL
),
main_causes AS (
    -- each rank's most frequent cause when last (ties: the first in text order)
    SELECT run_id, rank, arg_max(cause, (n, -rank_in_text)) AS main_cause
    FROM (SELECT run_id, rank, cause, count(*) AS n,
                 dense_rank() OVER (ORDER BY cause) AS rank_in_text
          FROM described WHERE cause IS NOT NULL GROUP BY run_id, rank, cause)
    GROUP BY run_id, rank
),
culprit_steps AS (
    SELECT run_id, culprit AS rank, count(*) AS steps_culprit FROM step_culprits GROUP BY ALL
),
per_rank AS (
    SELECT t.run_id, t.rank, t.collectives,
           count(d.op_key) AS times_last,
           count(d.op_key) * 100.0 / t.collectives AS last_pct,
           sum(d.late_ns) AS late_ns,
           any_value(m.main_cause) AS main_cause,
           coalesce(any_value(c.steps_culprit), 0) AS steps_culprit
    FROM taking_part t
    LEFT JOIN described d ON d.run_id = t.run_id AND d.rank = t.rank
    LEFT JOIN main_causes m ON m.run_id = t.run_id AND m.rank = t.rank
    LEFT JOIN culprit_steps c ON c.run_id = t.run_id AND c.rank = t.rank
    GROUP BY t.run_id, t.rank, t.collectives
),
answer AS (
    SELECT
        run_id,
        op_key,                     -- the collective (per_rank: NULL)
        collective,
        process_group,              -- Process Group Name ('' when the trace names none)
        iteration,                  -- the step that launched it
        ranks,                      -- ranks it was matched on
        rank,                       -- the last rank to arrive (per_rank: every rank)
        median_rank,
        CAST(late_ns AS BIGINT) AS late_ns,  -- last arrival - the median rank's (per_rank: summed)
        cause,                      -- the term that adds the most to late_ns
        why,
        later_start_ns,             -- its synchronisation point - the median rank's (aligned)
        since_ns,                   -- the last rank's previous synchronisation point, its clock
        stretch_ns,                 -- since_ns -> its arrival
        data_loading_ns, sync_wait_ns, os_call_ns, launch_gap_ns, gpu_work_ns,
        median_stretch_ns,
        median_data_loading_ns, median_sync_wait_ns, median_os_call_ns, median_launch_gap_ns,
        median_gpu_work_ns,
        NULL::BIGINT AS collectives, NULL::BIGINT AS times_last, NULL::DOUBLE AS last_pct,
        NULL::VARCHAR AS main_cause, NULL::BIGINT AS steps_culprit, NULL::BIGINT AS steps,
        NULL::BOOLEAN AS culprit_stable
    FROM described
    WHERE NOT coalesce(CAST(getvariable('per_rank') AS BOOLEAN), false)
      AND NOT coalesce(CAST(getvariable('per_step') AS BOOLEAN), false)
    UNION ALL
    SELECT
        p.run_id, NULL, NULL, NULL, NULL, NULL, p.rank, NULL, CAST(p.late_ns AS BIGINT),
        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        p.collectives,              -- collectives it took part in
        p.times_last,               -- ... and arrived last in
        p.last_pct,
        p.main_cause,               -- its most frequent cause when last
        p.steps_culprit,            -- steps in which it was late the longest
        coalesce(s.steps, 0),       -- run: steps with a late rank
        s.culprit_stable            -- run: one rank was the culprit of every step (2 or more)
    FROM per_rank p
    LEFT JOIN run_steps s ON s.run_id = p.run_id
    WHERE coalesce(CAST(getvariable('per_rank') AS BOOLEAN), false)
      AND NOT coalesce(CAST(getvariable('per_step') AS BOOLEAN), false)
    UNION ALL
    SELECT
        l.run_id, NULL, NULL, NULL, l.iteration, NULL, l.rank, NULL, CAST(l.late_ns AS BIGINT),
        c.cause,                    -- per_step: the term adding the most over its collectives
        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        NULL, l.times_last, NULL, NULL, NULL, NULL, NULL
    FROM step_late l
    LEFT JOIN step_cause c ON c.run_id = l.run_id AND c.iteration = l.iteration AND c.rank = l.rank
    WHERE coalesce(CAST(getvariable('per_step') AS BOOLEAN), false)
)
SELECT * FROM answer
ORDER BY run_id, iteration, op_key, rank;
