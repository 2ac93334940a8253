-- Each run's configuration, one row per key (tp, dp, zero_stage, ratio, ...), with where the
-- value came from. A key given by several sources takes the most trusted one: --run-param, then
-- the workload card, then a DeepSpeed ds_config.json or a Megatron arguments block, then the
-- file name read with --name-template.
CREATE OR REPLACE VIEW run_config AS
WITH given AS (
    SELECT run_id, key, value, source, file_id,
           CASE source WHEN 'run-param' THEN 1 WHEN 'card' THEN 2 WHEN 'ds_config' THEN 3
                       WHEN 'megatron-args' THEN 3 WHEN 'name-template' THEN 4 ELSE 5 END AS trust
    FROM store.run_params
)
SELECT
    run_id,
    key,
    arg_min(value, (trust, file_id)) AS value,
    arg_min(source, (trust, file_id)) AS source  -- run-param | card | ds_config | megatron-args | name-template
FROM given
GROUP BY run_id, key;
