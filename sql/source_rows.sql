-- Event rows stored for each source just written (variables first_file_id, last_file_id): what
-- store.sources.rows records. A source's events are the rows of every stored table with a
-- file_id and a time (start_ns; ts_ns for samples and log lines), as DuckDB's catalog lists them
-- (the variable event_tables, which tracewh check reads too): a new table of events needs no
-- edit here.
SET VARIABLE event_tables = (
    SELECT coalesce(list('store.' || table_name ORDER BY table_name), [])
    FROM (SELECT table_name FROM duckdb_columns()
          WHERE database_name = current_database() AND schema_name = 'store'
          GROUP BY table_name
          HAVING bool_or(column_name = 'file_id') AND bool_or(column_name IN ('start_ns', 'ts_ns'))));
SELECT file_id, count(*) AS rows
FROM query_table(getvariable('event_tables'), true)
WHERE file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id')
GROUP BY file_id;
