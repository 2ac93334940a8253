-- uses: none
-- One row per ingested file.
CREATE OR REPLACE VIEW sources AS
SELECT
    file_id,
    run_id,
    path,            -- absolute path at ingest time
    sha256,          -- content hash, the idempotency key
    format,          -- nsys-sqlite | kineto-json
    tool_version,    -- e.g. nsys 2026.2.1.210
    schema_version,  -- e.g. export schema 3.25.0
    bytes,           -- file size
    rows,            -- event rows stored from this file
    has_utc,         -- false: times are session-relative ns (no UTC anchor in the file)
    origin_ns,       -- UTC epoch ns of the source's time zero
    time_base,       -- how the file's times became UTC (NULL: ingested before tracewh recorded it)
    host,
    warnings,
    metadata,        -- JSON: Kineto top-level keys (distributedInfo, deviceProperties, versions)
    ingested_at
FROM store.sources;
