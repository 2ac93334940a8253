-- Faults the profiler wrote into the trace that ingest stores as read, counted for the source's
-- warnings (ingest/kineto.py reads variable event_faults): events with a negative duration
-- (stored with duration 0) and events written more than once, identical in every field (stored
-- as often as written: which copy is the true one is not known).
-- In: _ev_rows (10_events.sql). Out: variable event_faults.

SET VARIABLE event_faults = (
    SELECT {negative_durations: (SELECT count(*) FROM _ev_rows WHERE negative_dur),
            duplicates: coalesce((
                SELECT sum(copies - 1) FROM (
                    SELECT count(*) AS copies FROM _ev_rows
                    GROUP BY name, cat, pid, tid, tid_text, args, start_ns, dur_ns, negative_dur
                    HAVING count(*) > 1)), 0)});
