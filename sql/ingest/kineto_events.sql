-- A Kineto trace's events array, read by DuckDB's own JSON reader straight from a file that
-- holds just that array (ingest/kineto.py cuts it out of the trace): the fast path, with the
-- same columns as the Python decoder's Arrow table. {events_file} is that file's path.
-- pid and tid are numbers, or strings such as "Spans" and 2021's "stream 7"; args stays JSON.
CREATE OR REPLACE TEMP TABLE _kineto_events AS
SELECT row_number() OVER () AS event_no, cat, name,
       TRY_CAST(pid AS BIGINT) AS pid,
       TRY_CAST(tid AS BIGINT) AS tid,
       CASE WHEN json_type(tid) = 'VARCHAR' THEN tid ->> '$' END AS tid_text,
       ts, NULL::VARCHAR AS ts_text, dur, CAST(args AS VARCHAR) AS args
FROM read_json('{events_file}', format = 'array', maximum_object_size = 33554432,
               columns = {ph: 'VARCHAR', cat: 'VARCHAR', name: 'VARCHAR', pid: 'JSON',
                          tid: 'JSON', ts: 'DOUBLE', dur: 'DOUBLE', args: 'JSON'})
WHERE NOT list_contains(getvariable('skipped_phases'), ph)
  AND NOT list_contains(getvariable('skipped_categories'), coalesce(cat, ''))
  AND ts IS NOT NULL;
