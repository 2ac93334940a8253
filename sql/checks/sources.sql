-- check: sources
-- summary: Sources are unique: one row per file_id, per content hash and per path.
-- returns: one row per duplicated key.
SELECT format('file_id {} appears {} times in store.sources - rebuild the warehouse',
              file_id, count(*)) AS problem
FROM store.sources GROUP BY file_id HAVING count(*) > 1
UNION ALL
SELECT format('content {} is stored {} times (file_ids {}) - tracewh remove --source all but one',
              left(sha256, 12), count(*), string_agg(file_id::VARCHAR, ', ' ORDER BY file_id))
FROM store.sources GROUP BY sha256 HAVING count(*) > 1
UNION ALL
SELECT format('path {} is stored {} times (file_ids {}) - tracewh remove --source all but one',
              path, count(*), string_agg(file_id::VARCHAR, ', ' ORDER BY file_id))
FROM store.sources GROUP BY path HAVING count(*) > 1
ORDER BY problem;
