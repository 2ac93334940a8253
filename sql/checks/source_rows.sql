-- check: source_rows
-- summary: Every source is complete: its tables hold exactly the rows store.sources.rows
--          records (a source whose count differs was cut short, or changed outside tracewh).
-- inputs: _stored_rows (see _stored_rows.sql); _counted_tables (name): the tables that
--         sql/source_rows.sql counts into store.sources.rows, as it names them from the
--         catalog (tracewh.store.event_tables).
-- returns: one row per source whose stored rows differ from its recorded count.
WITH stored AS (
    SELECT file_id, sum(n) AS n
    FROM _stored_rows
    WHERE table_name IN (SELECT name FROM _counted_tables)
    GROUP BY file_id
)
SELECT
    s.file_id,
    s.path,
    s.rows AS recorded_rows,          -- what ingest recorded
    coalesce(t.n, 0) AS stored_rows,  -- what the tables hold
    format('source {} ({}): store.sources.rows records {} rows but the tables hold {} - '
           're-ingest it with --replace, or tracewh remove --source {}',
           s.file_id, s.path, s.rows, coalesce(t.n, 0), s.file_id) AS problem
FROM store.sources s
LEFT JOIN stored t USING (file_id)
WHERE s.rows IS DISTINCT FROM coalesce(t.n, 0)
ORDER BY s.file_id;
