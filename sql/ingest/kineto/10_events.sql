-- The events of one Kineto trace in warehouse terms: UTC ns, normalised categories, host pid.
-- In: _kineto_events (Arrow, from ingest/kineto.py: event_no, cat, name, pid, tid, tid_text,
-- ts, ts_text, dur, args); variables run_id, file_id, rank, base_ns.
-- Out: view _ev (read once per target table, never copied whole), variable host_pid,
-- temp table _iterations.

CREATE OR REPLACE TEMP VIEW _ev AS
SELECT event_no,                              -- position in the file: the range id of annotations
       name, cat, pid, tid, tid_text, args,
       CASE
           -- April 2024: epoch µs with ns decimals, 19 digits: from the literal text, exactly
           WHEN ts_text IS NOT NULL THEN CAST(CAST(ts_text AS DECIMAL(24, 3)) * 1000 AS BIGINT)
           -- Otherwise whole µs and the ns decimals apart: ts * 1000 in double arithmetic is off
           -- by a nanosecond for relative times above 2^52 ns and wrong for epoch µs (1.7e18 ns
           -- needs 61 bits). The fraction ts - floor(ts) is exact, and the double nearest a
           -- 3-decimal literal below 2^43 µs is within 0.5 ns of it, so rounding recovers it.
           ELSE CAST(floor(ts) AS BIGINT) * 1000 + CAST(round((ts - floor(ts)) * 1000) AS BIGINT)
       END + coalesce(getvariable('base_ns'), 0) AS start_ns,
       CAST(round(greatest(coalesce(dur, 0), 0) * 1000) AS BIGINT) AS dur_ns,
       CASE
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
           ELSE 'other'
       END AS kind
FROM _kineto_events
-- Kineto clamps events from before the base time to ts = 0 (and dur 0): no real time left.
WHERE NOT (getvariable('base_ns') IS NOT NULL AND ts = 0);

-- Host events carry the OS pid; GPU events carry the device index in pid.
SET VARIABLE host_pid = (
    SELECT mode(pid) FROM _ev
    WHERE kind IN ('cpu_op', 'runtime', 'driver', 'annotation'));

-- Host steps, non-overlapping per file: an event's iteration is the step holding its start.
CREATE OR REPLACE TEMP TABLE _iterations AS
SELECT iteration_number(name) AS iteration, start_ns, start_ns + dur_ns AS end_ns
FROM _ev
WHERE kind = 'annotation' AND iteration_number(name) IS NOT NULL;
