-- A CSV of samples -> store.samples, one row per (sample, measure). Python fills {csv_file}
-- (read_csv takes a literal) and sets: run_id, file_id, time_column, time_unit (s, ms, us, ns,
-- or 'text' for stamps such as nvidia-smi's '2024/05/01 12:34:56.789'), tz_offset_ns (added to
-- text stamps, which carry no zone), device_column and host_column (NULL when absent), host.
-- Values may carry units ('80 MiB', '45 %'): the number is kept; the column name says the unit.
INSERT INTO store.samples BY NAME
WITH raw AS (
    SELECT row_number() OVER () AS _row, *
    FROM read_csv('{csv_file}', all_varchar = true, header = true)
), cells AS (
    UNPIVOT raw ON COLUMNS(* EXCLUDE (_row)) INTO NAME name VALUE text
), keys AS (
    SELECT _row,
           trim(any_value(text) FILTER (WHERE name = getvariable('time_column'))) AS time_text,
           any_value(text) FILTER (WHERE name = getvariable('device_column')) AS device_text,
           any_value(text) FILTER (WHERE name = getvariable('host_column')) AS host_text
    FROM cells GROUP BY _row
), stamped AS (
    SELECT _row,
           CASE getvariable('time_unit')
               WHEN 'text' THEN epoch_ns(TRY_CAST(replace(time_text, '/', '-') AS TIMESTAMP))
                                - getvariable('tz_offset_ns')
               WHEN 's' THEN CAST(round(TRY_CAST(time_text AS DOUBLE) * 1e9) AS BIGINT)
               WHEN 'ms' THEN CAST(round(TRY_CAST(time_text AS DOUBLE) * 1e6) AS BIGINT)
               WHEN 'us' THEN CAST(round(TRY_CAST(time_text AS DOUBLE) * 1e3) AS BIGINT)
               ELSE TRY_CAST(time_text AS BIGINT)
           END AS ts_ns,
           TRY_CAST(trim(device_text) AS INTEGER) AS device_id,
           coalesce(trim(host_text), getvariable('host')) AS host
    FROM keys
)
SELECT getvariable('run_id') AS run_id, getvariable('file_id') AS file_id, s.host, s.device_id,
       s.ts_ns, trim(c.name) AS metric,
       TRY_CAST(regexp_extract(c.text, '-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?', 0) AS DOUBLE) AS value
FROM cells c JOIN stamped s USING (_row)
WHERE s.ts_ns IS NOT NULL
  AND c.name NOT IN (getvariable('time_column'), coalesce(getvariable('device_column'), ''),
                     coalesce(getvariable('host_column'), ''))
  AND regexp_matches(c.text, '[0-9]');
