-- Faults the profiler wrote into the trace that ingest stores as read, counted for the source's
-- warnings (ingest/kineto.py reads variable event_faults): events with a negative duration, or
-- one that is NaN or Infinity (stored with duration 0), events whose time is NaN or Infinity
-- (not stored: they have no place), and events written more than once, identical in every
-- field (stored as often as written: which copy is the true one is not known).
-- In: _ev_rows (10_events.sql). Out: variable event_faults.
-- Only events that share their start, duration and thread with another are compared whole:
-- grouping every event by all its fields (args included) cost 0.11 CPU s per 100 MB file of
-- the Kineto bench, this 0.06.

SET VARIABLE event_faults = (
    WITH suspects AS (
        SELECT start_ns, dur_ns, tid FROM _ev_rows GROUP BY ALL HAVING count(*) > 1
    ), copies AS (
        SELECT count(*) AS copies
        FROM _ev_rows e
        SEMI JOIN suspects s
            ON s.start_ns = e.start_ns AND s.dur_ns = e.dur_ns AND s.tid IS NOT DISTINCT FROM e.tid
        GROUP BY e.name, e.cat, e.pid, e.tid, e.tid_text, e.args, e.start_ns, e.dur_ns, e.negative_dur
        HAVING count(*) > 1
    )
    SELECT {negative_durations: (SELECT count(*) FROM _ev_rows WHERE negative_dur),
            durations_not_finite: (SELECT count(*) FROM _ev_rows WHERE dur_not_finite),
            times_not_finite: (SELECT count(*) FROM _ev_rows WHERE kind = 'unplaced'),
            duplicates: coalesce((SELECT sum(copies - 1) FROM copies), 0)});
