-- uses: parallel_groups
-- Each run's configuration, one row per key (tp, dp, zero_stage, ratio, ...), with where the
-- value came from. A key given by several sources takes the most trusted one: --run-param, then
-- the workload card, then a DeepSpeed ds_config.json or a Megatron arguments block, then the
-- file name read with --name-template, and last what the trace shows (parallel_groups: the
-- largest group of each pattern gives tp, dp, pp or ep; FSDP / ZeRO-3 and ZeRO-2 a zero_stage).
CREATE OR REPLACE VIEW run_config AS
WITH given AS (
    SELECT run_id, key, value, source, file_id,
           CASE source WHEN 'run-param' THEN 1 WHEN 'card' THEN 2 WHEN 'ds_config' THEN 3
                       WHEN 'megatron-args' THEN 3 WHEN 'name-template' THEN 4 ELSE 5 END AS trust
    FROM store.run_params
),
groups AS MATERIALIZED (  -- once for both uses below
    SELECT run_id, group_size, pattern FROM parallel_groups
),
inferred AS (
    SELECT run_id, key, CAST(max(size) AS VARCHAR) AS value, 'inferred' AS source,
           CAST(NULL AS BIGINT) AS file_id, 6 AS trust
    FROM (
        SELECT run_id, group_size AS size,
               CASE pattern WHEN 'tensor parallel' THEN 'tp' WHEN 'pipeline parallel' THEN 'pp'
                            WHEN 'expert parallel' THEN 'ep' ELSE 'dp' END AS key
        FROM groups WHERE pattern <> 'unclassified'
        UNION ALL
        SELECT run_id, CASE pattern WHEN 'FSDP / ZeRO-3' THEN 3 ELSE 2 END, 'zero_stage'
        FROM groups WHERE pattern IN ('FSDP / ZeRO-3', 'ZeRO-2')
    )
    GROUP BY run_id, key
)
SELECT
    run_id,
    key,
    arg_min(value, (trust, file_id)) AS value,
    arg_min(source, (trust, file_id)) AS source  -- run-param | card | ds_config | megatron-args | name-template | inferred
FROM (SELECT * FROM given UNION ALL SELECT * FROM inferred)
GROUP BY run_id, key;
