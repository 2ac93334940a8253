-- check: views
-- summary: Every view and macro of sql/views exists in the warehouse.
-- inputs: _expected_views (name), registered by tracewh check from sql/views.
-- returns: one row per missing name.
SELECT
    e.name,
    format('view or macro {} is missing - open the warehouse read-write once (tracewh ingest) '
           'to recreate the views', e.name) AS problem
FROM _expected_views e
WHERE NOT EXISTS (SELECT 1 FROM duckdb_views() v
                  WHERE v.schema_name = 'main' AND v.database_name = current_database()
                    AND lower(v.view_name) = lower(e.name))
  AND NOT EXISTS (SELECT 1 FROM duckdb_functions() f
                  WHERE f.schema_name = 'main' AND f.database_name = current_database()
                    AND f.function_type IN ('macro', 'table_macro')
                    AND lower(f.function_name) = lower(e.name))
ORDER BY e.name;
