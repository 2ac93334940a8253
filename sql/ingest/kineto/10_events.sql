-- The events of one Kineto trace in warehouse terms: UTC ns, normalised kinds, host pid.
-- In: _trace_events (read_json.sql's view, or the Python decoder's Arrow table: cat, name, pid,
-- tid, tid_text, ts, ts_text, dur, args); variable base_ns.
-- Out: temp table _ev_rows and its view _ev (the one materialisation of the events, with their
-- kind and host step computed once: every later file reads it, and so does the writer, through
-- the view _kineto_cpu_ops), variable host_pid, temp table _iterations.
-- The later files stage their rows in temp tables _kineto_<stored table> (without run_id, rank and
-- file_id); store.sql moves them into the stored tables inside the file's transaction.

CREATE OR REPLACE TEMP TABLE _ev_rows AS
SELECT name, cat, pid, tid, tid_text, args,
       CASE
           -- April 2024: epoch µs with ns decimals, 19 digits: from the literal text, exactly
           WHEN ts_text IS NOT NULL THEN CAST(CAST(ts_text AS DECIMAL(24, 3)) * 1000 AS BIGINT)
           WHEN NOT isfinite(ts) THEN NULL  -- NaN, Infinity: no time (kind unplaced)
           -- Otherwise whole µs and the ns decimals apart: ts * 1000 in double arithmetic is off
           -- by a nanosecond for relative times above 2^52 ns and wrong for epoch µs (1.7e18 ns
           -- needs 61 bits). The fraction ts - floor(ts) is exact, and the double nearest a
           -- 3-decimal literal below 2^43 µs is within 0.5 ns of it, so rounding recovers it.
           ELSE CAST(floor(ts) AS BIGINT) * 1000 + CAST(round((ts - floor(ts)) * 1000) AS BIGINT)
       END + coalesce(getvariable('base_ns'), 0) AS start_ns,
       -- a negative duration, NaN or Infinity is stored as 0, and counted in the source's
       -- warnings (90_faults.sql)
       CASE WHEN isfinite(dur) THEN CAST(round(greatest(dur, 0) * 1000) AS BIGINT) ELSE 0 END
           AS dur_ns,
       dur < 0 AND isfinite(dur) AS negative_dur,
       NOT isfinite(dur) AS dur_not_finite,
       CAST(CASE
           -- Kineto clamps events from before the base time to ts = 0 (and dur 0): no real time
           -- left. Kept as rows (they hold their place in event_no), never read.
           WHEN getvariable('base_ns') IS NOT NULL AND ts = 0 THEN 'clamped'
           -- a time that is NaN or Infinity: nowhere to put the event; counted, never read
           WHEN NOT isfinite(ts) AND ts_text IS NULL THEN 'unplaced'
           WHEN name = '[memory]' THEN 'memory'
           WHEN cat IN ('kernel', 'Kernel') THEN 'kernel'
           WHEN cat IN ('gpu_memcpy', 'Memcpy') THEN 'memcpy'
           WHEN cat IN ('gpu_memset', 'Memset') THEN 'memset'
           WHEN cat IN ('cuda_runtime', 'Runtime') THEN 'runtime'
           WHEN cat = 'cuda_driver' THEN 'driver'
           -- ProfilerStep#N marks an iteration whatever category wrote it (2021: Operator)
           WHEN cat IN ('cpu_op', 'Operator') AND name LIKE 'ProfilerStep#%'
                AND iteration_number(name) IS NOT NULL THEN 'annotation'
           WHEN cat IN ('cpu_op', 'Operator') THEN 'cpu_op'
           WHEN cat IN ('user_annotation', 'User') THEN 'annotation'
           WHEN cat IN ('gpu_user_annotation', 'gpu_user_Annotation') THEN 'gpu_annotation'
           WHEN cat = 'cuda_sync' THEN 'sync'
           WHEN cat = 'python_function' THEN 'python'
           ELSE 'other'
       -- a one-byte code, not a string, in every later scan and filter
       END AS ENUM('clamped', 'unplaced', 'kernel', 'memcpy', 'memset', 'runtime', 'driver',
                   'annotation', 'cpu_op', 'gpu_annotation', 'sync', 'python', 'memory',
                   'other')) AS kind
FROM _trace_events;

-- Host events carry the OS pid; GPU events carry the device index in pid.
SET VARIABLE host_pid = (
    SELECT mode(pid) FROM _ev_rows
    WHERE kind IN ('cpu_op', 'runtime', 'driver', 'annotation'));

-- Host steps, non-overlapping per file: an event's iteration is the step holding its start.
CREATE OR REPLACE TEMP TABLE _iterations AS
SELECT iteration_number(name) AS iteration, start_ns, start_ns + dur_ns AS end_ns
FROM _ev_rows
WHERE kind = 'annotation' AND iteration_number(name) IS NOT NULL;

-- Every event's step, found once in one as-of join of the bare times (joining each target
-- table's rows would sort their names and args along: measured 3x the cost), kept in event
-- order so that _ev pairs it with its event by position.
CREATE OR REPLACE TEMP TABLE _ev_iteration AS
SELECT CASE WHEN e.start_ns < i.end_ns THEN i.iteration END AS iteration
FROM (SELECT rowid AS row_no, start_ns FROM _ev_rows) e
ASOF LEFT JOIN _iterations i ON e.start_ns >= i.start_ns
ORDER BY e.row_no;

-- event_no, the position among the kept events (the range id of annotations), is the row's
-- place in the table: CREATE TABLE AS keeps the source's order.
CREATE OR REPLACE TEMP VIEW _ev AS
SELECT e.rowid + 1 AS event_no, e.name, e.cat, e.pid, e.tid, e.tid_text, e.args, e.start_ns,
       e.dur_ns, e.kind, i.iteration
FROM _ev_rows e POSITIONAL JOIN _ev_iteration i;
