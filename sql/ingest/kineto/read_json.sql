-- The fast path's source: a Kineto trace's events array read by DuckDB's own JSON reader from a
-- file that holds just that array (ingest/kineto_json.py cuts it out of the trace; variable
-- events_file is its path). The same columns as the Python decoder's Arrow table, which takes
-- this view's place for files the reader refuses. A view: 10_events.sql reads it once.
-- pid and tid are numbers, or strings such as "Spans" and 2021's "stream 7"; args stays JSON.
-- maximum_object_size sizes the reader's buffers: 4 MB rather than 32 took 34 MB less memory and
-- 1.8% less time (8 x 100 MB bench, 12 interleaved pairs); larger events still read whole.
CREATE OR REPLACE TEMP VIEW _trace_events AS
SELECT cat, name,
       TRY_CAST(pid AS BIGINT) AS pid,
       TRY_CAST(tid AS BIGINT) AS tid,
       -- a tid that is not a number (read as text, a JSON string loses its quotes)
       CASE WHEN TRY_CAST(tid AS BIGINT) IS NULL THEN tid END AS tid_text,
       ts, NULL::VARCHAR AS ts_text, dur, CAST(args AS VARCHAR) AS args
FROM read_json(getvariable('events_file'), format = 'array', maximum_object_size = 4194304,
               columns = {ph: 'VARCHAR', cat: 'VARCHAR', name: 'VARCHAR', pid: 'VARCHAR',
                          tid: 'VARCHAR', ts: 'DOUBLE', dur: 'DOUBLE', args: 'JSON'})
-- instant events are skipped except the allocator's [memory] events (60_memory.sql)
WHERE (NOT list_contains(getvariable('skipped_phases'), ph) OR name = '[memory]')
  AND NOT list_contains(getvariable('skipped_categories'), coalesce(cat, ''))
  AND ts IS NOT NULL;
