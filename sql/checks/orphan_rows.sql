-- check: orphan_rows
-- summary: Every file_id in a stored table has its store.sources row (rows without one are
--          what an ingest cut short between its inserts would leave, were it not one
--          transaction; the sources row is written last).
-- inputs: _stored_rows (see _stored_rows.sql).
-- returns: one row per (table, file_id) without a source, with the number of rows.
SELECT
    r.table_name,
    r.file_id,
    sum(r.n) AS orphan_rows,
    format('store.{} holds {} row(s) of file_id {}, which has no store.sources row - '
           'rebuild the warehouse, or delete them in ''tracewh shell --write''',
           r.table_name, sum(r.n), r.file_id) AS problem
FROM _stored_rows r
ANTI JOIN store.sources s USING (file_id)
GROUP BY r.table_name, r.file_id
ORDER BY r.table_name, r.file_id;
