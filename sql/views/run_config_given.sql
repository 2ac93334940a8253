-- uses: none
-- Each run's configuration as given, one row per key, with where the value came from: what
-- run_config holds except what the trace shows (parallel_groups' inferred tp/dp/pp/ep/
-- zero_stage), so that reading it scans no facts. A key given by several sources takes the most
-- trusted one: --run-param, then the workload card, then a DeepSpeed ds_config.json or a
-- Megatron arguments block, then the file name read with --name-template.
CREATE OR REPLACE VIEW run_config_given AS
SELECT
    run_id,
    key,
    arg_min(value, (trust, file_id)) AS value,
    arg_min(source, (trust, file_id)) AS source  -- run-param | card | ds_config | megatron-args | name-template
FROM (SELECT run_id, key, value, source, file_id,
             CASE source WHEN 'run-param' THEN 1 WHEN 'card' THEN 2 WHEN 'ds_config' THEN 3
                         WHEN 'megatron-args' THEN 3 WHEN 'name-template' THEN 4 ELSE 5 END AS trust
      FROM store.run_params)
GROUP BY run_id, key;
