-- What a series file held that was not stored as written, or looks wrong, counted once per file
-- (after series.sql, from its temp tables and the rows it stored): one row.
WITH stored AS (
    SELECT * FROM store.samples WHERE file_id = getvariable('file_id')
), order_breaks AS (
    -- a stamp earlier than the one before it, in file order, on the same device
    SELECT count(*) FILTER (WHERE ts_ns < prev) AS n
    FROM (SELECT ts_ns, lag(ts_ns) OVER (PARTITION BY device_id ORDER BY _row) AS prev
          FROM _series_rows WHERE ts_ns >= 0)
), repeats AS (
    SELECT coalesce(sum(n - 1), 0) AS n
    FROM (SELECT count(*) AS n FROM stored GROUP BY host, device_id, metric, ts_ns HAVING n > 1)
)
SELECT
    (SELECT count(*) FROM _series_rows WHERE zone_offset_ns IS NULL) AS unknown_zone_rows,
    (SELECT string_agg(DISTINCT zone, ', ') FROM _series_rows WHERE zone_offset_ns IS NULL)
        AS unknown_zones,
    (SELECT count(*) FROM _series_rows WHERE ts_ns < 0) AS before_1970_rows,
    (SELECT count(*) FROM _series_rows WHERE ts_ns IS NULL AND zone_offset_ns IS NOT NULL)
        AS unreadable_time_rows,
    (SELECT n FROM order_breaks) AS out_of_order,
    (SELECT n FROM repeats) AS repeated,
    (SELECT count(*) FROM _series_cells c JOIN _series_rows s USING (_row)
     WHERE s.ts_ns >= 0 AND regexp_matches(c.text, '[0-9]')
       AND NOT isfinite(TRY_CAST(regexp_extract(c.text, '-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?', 0)
                                 AS DOUBLE))) AS not_finite_values,
    (SELECT string_agg(DISTINCT trim(device_text), ', ') FROM _series_rows
     WHERE device_id IS NULL AND trim(device_text) <> '') AS bad_devices,
    (SELECT count(*) FROM _series_rows WHERE zone <> '') AS zoned_rows;
