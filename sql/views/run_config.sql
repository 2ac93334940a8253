-- uses: parallel_groups, run_config_given
-- Each run's configuration, one row per key (tp, dp, zero_stage, ratio, ...), with where the
-- value came from: as given (run_config_given: --run-param, the workload card, a DeepSpeed
-- ds_config.json or Megatron arguments block, the file name read with --name-template), else
-- what the trace shows (parallel_groups: the largest group of each pattern gives tp, dp, pp or
-- ep; FSDP / ZeRO-3 and ZeRO-2 a zero_stage).
CREATE OR REPLACE VIEW run_config AS
WITH groups AS MATERIALIZED (  -- once for both uses below
    SELECT run_id, group_size, pattern FROM parallel_groups
),
inferred AS (
    SELECT run_id, key, CAST(max(size) AS VARCHAR) AS value, 'inferred' AS source
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
SELECT run_id, key, value, source FROM run_config_given
UNION ALL
SELECT run_id, key, value, source  -- source: inferred, for a key no source gives
FROM inferred i
WHERE NOT EXISTS (SELECT 1 FROM run_config_given g WHERE g.run_id = i.run_id AND g.key = i.key);
