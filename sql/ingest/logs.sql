-- The decoded lines of a training log (temp table _log_lines of the cursor that decoded it, filled by
-- src/tracewh/ingest/logs.py: one row per number) -> store.log_values. Variables: run_id, file_id.
INSERT INTO store.log_values BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('file_id') AS file_id,
       line_no, line_rank, ts_ns, kind, step, name, value
FROM _log_lines;
