-- uses: run_config, value_order
-- Series: runs whose configurations (run_config) differ in exactly one field, e.g. the same model
-- at tp 1, 2 and 4. One row per run and series; a run belongs to one series per field it shares
-- a sweep in. Runs missing a field the others have are not in their series.
CREATE OR REPLACE VIEW series AS
WITH config_rows AS MATERIALIZED (  -- once for both uses below
    SELECT run_id, key, value FROM run_config
),
configs AS (
    SELECT run_id, list((key, value) ORDER BY key) AS config FROM config_rows GROUP BY run_id
),
one_out AS (
    -- each run once per field: the field, its value, and the rest of the configuration
    SELECT c.run_id, f.key AS varied, f.value,
           list_filter(c.config, lambda x: x[1] <> f.key) AS fixed
    FROM configs c JOIN config_rows f USING (run_id)
),
sweeps AS (
    SELECT varied, fixed FROM one_out GROUP BY varied, fixed HAVING count(DISTINCT value) >= 2
)
SELECT
    o.varied || '-' || left(md5(o.varied || list_transform(o.fixed, lambda x: x[1] || '=' || x[2])::VARCHAR), 8)
        AS series_id,   -- the varied field and a hash of what stays fixed, e.g. tp-3f2a9c1b
    o.varied,           -- the one field that differs, e.g. tp
    o.run_id,
    o.value,            -- the run's value of that field
    row_number() OVER (PARTITION BY o.varied, o.fixed
                       ORDER BY coalesce(TRY_CAST(o.value AS DOUBLE), value_magnitude(o.value))
                                NULLS LAST, o.value, o.run_id)
        AS position,    -- the run's place in the series, by value (numbers as numbers, 100M before 1G)
    array_to_string(list_transform(o.fixed, lambda x: x[1] || '=' || x[2]), ', ') AS fixed -- what the runs share
FROM one_out o SEMI JOIN sweeps s ON s.varied = o.varied AND s.fixed = o.fixed;
