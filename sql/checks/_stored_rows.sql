-- Input of the audits, not an audit: rows per (run, rank, source) of one stored table.
-- tracewh check runs this for every store table with a file_id column (except sources),
-- with {table} and {rank} (the rank column, or NULL for tables without one) filled in from the
-- catalog, and keeps the union as the temporary table _stored_rows(table_name, run_id, rank,
-- file_id, n): one scan of each table, shared by every audit.
SELECT
    '{table}' AS table_name,
    run_id,
    CAST({rank} AS INTEGER) AS rank,
    file_id,
    count(*) AS n  -- rows
FROM store."{table}"
GROUP BY ALL
