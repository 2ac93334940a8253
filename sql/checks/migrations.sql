-- check: migrations
-- summary: The applied migrations are exactly this tracewh's migrations/ files, with matching
--          checksums (an edited or missing migration means the schema is not what the code
--          expects).
-- inputs: _expected_migrations (version, name, checksum), registered by tracewh check from the
--         migrations/ folder.
-- returns: one row per missing, extra, renamed, changed or repeated migration.
SELECT
    coalesce(e.version, m.version) AS version,
    CASE
        WHEN m.version IS NULL THEN format('migration {} is not applied - open the warehouse '
                                           'read-write once (tracewh ingest) to apply it', e.name)
        WHEN e.version IS NULL THEN format('migration {} ({}) is applied but this tracewh does not '
                                           'know it - use the newer tracewh that wrote it',
                                           m.version, m.name)
        WHEN e.name <> m.name THEN format('migration {} is recorded as {} but the file is {} - '
                                          'restore the original file', m.version, m.name, e.name)
        ELSE format('migration {} changed after it was applied (checksum {} recorded, {} now) - '
                    'restore it and add a new migration instead', e.name, left(m.checksum, 12),
                    left(e.checksum, 12))
    END AS problem
FROM _expected_migrations e
FULL JOIN store.schema_migrations m USING (version)
WHERE m.version IS NULL OR e.version IS NULL OR e.name <> m.name OR e.checksum <> m.checksum
UNION ALL
SELECT version, format('migration {} is recorded {} times - rebuild the warehouse', version, count(*))
FROM store.schema_migrations GROUP BY version HAVING count(*) > 1
ORDER BY version;
