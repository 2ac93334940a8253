-- Remove every row of one source (variable file_id) from the stored tables.
-- The first statement writes one DELETE per stored table with a file_id column, from DuckDB's
-- catalog (tracewh.store runs each statement it returns): a new table of a source's rows needs
-- no edit here.
SELECT format('DELETE FROM store."{}" WHERE file_id = getvariable(''file_id'')', table_name)
           AS statement
FROM duckdb_columns()
WHERE database_name = current_database() AND schema_name = 'store' AND column_name = 'file_id'
ORDER BY table_name;
-- Shapes no source has any more go too.
DELETE FROM store.op_shapes WHERE shape_id NOT IN (SELECT shape_id FROM store.shaped_ops);
-- A run's NVTX names go with its last source (sql/nvtx_name_ids.sql).
DELETE FROM store.nvtx_names WHERE run_id NOT IN (SELECT run_id FROM store.sources);
-- A run left without sources goes too.
DELETE FROM store.runs WHERE run_id NOT IN (SELECT run_id FROM store.sources);
