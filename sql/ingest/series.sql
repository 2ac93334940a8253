-- A CSV of samples -> store.samples, one row per (sample, measure). Python fills {csv_file}
-- (read_csv takes a literal) and sets: run_id, file_id, time_column, time_unit (s, ms, us, ns,
-- or 'text' for stamps such as nvidia-smi's '2024/05/01 12:34:56.789'), tz_offset_ns (added to
-- text stamps that carry no zone of their own), device_column and host_column (NULL when
-- absent), host. A stamp may carry its zone ('...T01:10:00+02:00', '...Z', '... EDT'); one whose
-- zone is not known here is not stored (counted in _series_faults).
-- Values may carry units ('80 MiB', '45 %'): the number is kept; the column name says the unit.
CREATE OR REPLACE TEMP TABLE _series_cells AS
WITH raw AS (
    SELECT row_number() OVER () AS _row, *
    FROM read_csv('{csv_file}', all_varchar = true, header = true)
)
UNPIVOT raw ON COLUMNS(* EXCLUDE (_row)) INTO NAME name VALUE text;

CREATE OR REPLACE TEMP TABLE _series_rows AS
WITH keys AS (
    SELECT _row,
           trim(any_value(text) FILTER (WHERE name = getvariable('time_column'))) AS time_text,
           any_value(text) FILTER (WHERE name = getvariable('device_column')) AS device_text,
           any_value(text) FILTER (WHERE name = getvariable('host_column')) AS host_text
    FROM _series_cells GROUP BY _row
), zoned AS (
    -- a zone after the clock time: an offset, Z, or a name
    SELECT *, regexp_extract(time_text,
                  '\d:\d\d(?::\d\d(?:\.\d+)?)?\s*(Z|[A-Za-z]{2,5}|[+-]\d\d(?::?\d\d)?)$', 1) AS zone
    FROM keys
), offsets AS (
    SELECT *,
           CASE
               WHEN zone = '' THEN getvariable('tz_offset_ns')
               WHEN upper(zone) IN ('Z', 'UTC', 'GMT') THEN 0
               WHEN zone[1] IN ('+', '-') THEN
                   (CASE zone[1] WHEN '+' THEN 1 ELSE -1 END)
                   * (CAST(zone[2:3] AS BIGINT) * 3600
                      + CASE WHEN length(replace(zone, ':', '')) = 5
                             THEN CAST(right(replace(zone, ':', ''), 2) AS BIGINT) ELSE 0 END * 60)
                   * 1000000000
               ELSE 3600000000000 * CASE upper(zone)  -- North American and European names
                   WHEN 'EST' THEN -5 WHEN 'EDT' THEN -4 WHEN 'CST' THEN -6 WHEN 'CDT' THEN -5
                   WHEN 'MST' THEN -7 WHEN 'MDT' THEN -6 WHEN 'PST' THEN -8 WHEN 'PDT' THEN -7
                   WHEN 'WET' THEN 0 WHEN 'BST' THEN 1 WHEN 'CET' THEN 1 WHEN 'CEST' THEN 2
                   WHEN 'EET' THEN 2 WHEN 'EEST' THEN 3 WHEN 'JST' THEN 9 WHEN 'KST' THEN 9
               END
           END AS zone_offset_ns
    FROM zoned
)
SELECT _row, time_text, device_text, zone, zone_offset_ns,
       CASE getvariable('time_unit')
           WHEN 'text' THEN epoch_ns(TRY_CAST(replace(rtrim(left(time_text,
                                                   length(time_text) - length(zone))), '/', '-')
                                             AS TIMESTAMP))
                            - zone_offset_ns
           WHEN 's' THEN CAST(round(TRY_CAST(time_text AS DOUBLE) * 1e9) AS BIGINT)
           WHEN 'ms' THEN CAST(round(TRY_CAST(time_text AS DOUBLE) * 1e6) AS BIGINT)
           WHEN 'us' THEN CAST(round(TRY_CAST(time_text AS DOUBLE) * 1e3) AS BIGINT)
           ELSE TRY_CAST(time_text AS BIGINT)
       END AS ts_ns,
       TRY_CAST(trim(device_text) AS INTEGER) AS device_id,
       coalesce(trim(host_text), getvariable('host')) AS host
FROM offsets;

INSERT INTO store.samples BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('file_id') AS file_id, s.host, s.device_id,
       s.ts_ns, trim(c.name) AS metric,
       TRY_CAST(regexp_extract(c.text, '-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?', 0) AS DOUBLE) AS value
FROM _series_cells c JOIN _series_rows s USING (_row)
WHERE s.ts_ns >= 0  -- before 1970 is no sample of a training job
  AND c.name NOT IN (getvariable('time_column'), coalesce(getvariable('device_column'), ''),
                     coalesce(getvariable('host_column'), ''))
  AND regexp_matches(c.text, '[0-9]')
  AND isfinite(TRY_CAST(regexp_extract(c.text, '-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?', 0) AS DOUBLE));
