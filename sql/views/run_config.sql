-- uses: parallel_groups, run_config_given
-- Each run's configuration, one row per key (tp, dp, zero_stage, ratio, ...), with where the
-- value came from: as given (run_config_given: --run-param, the workload card, a DeepSpeed
-- ds_config.json or Megatron arguments block, the file name read with --name-template), else
-- what the trace shows (parallel_groups: the largest group of each pattern gives tp, dp, pp or
-- ep; FSDP / ZeRO-3 and ZeRO-2 a zero_stage).
--
-- run_config_of: the rows of the runs want_runs (a VARCHAR list; NULL: every run), inferring
-- from those runs' collectives only (parallel_groups_of). runs_of and tracewh export read it.
CREATE OR REPLACE MACRO run_config_of(want_runs) AS TABLE
WITH groups AS MATERIALIZED (  -- once for both uses below
    SELECT run_id, group_size, pattern FROM parallel_groups_of(want_runs)
),
given AS (
    SELECT * FROM run_config_given
    WHERE want_runs IS NULL OR list_contains(CAST(want_runs AS VARCHAR[]), run_id)
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
SELECT run_id, key, value, source FROM given
UNION ALL
SELECT run_id, key, value, source  -- source: inferred, for a key no source gives
FROM inferred i
WHERE NOT EXISTS (SELECT 1 FROM given g WHERE g.run_id = i.run_id AND g.key = i.key);

CREATE OR REPLACE VIEW run_config AS
SELECT * FROM run_config_of(NULL);
