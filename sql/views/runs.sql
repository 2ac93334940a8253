-- uses: run_cards, run_config
-- One row per training job (run), with its configuration (run_config: the most trusted value of
-- each key) as typed columns, the other keys in `params`, and where each value came from: the
-- run_cards view with the parallel layout (tp, dp, pp, cp, ep, zero_stage), which, when no
-- source gives it, is inferred from the trace's collectives (parallel_groups scans them).
--
-- runs_of: the rows of the runs want_runs (a VARCHAR list; NULL: every run), configured from
-- those runs' rows only (run_config_of). tracewh export reads a run's row through it.
CREATE OR REPLACE MACRO runs_of(want_runs) AS TABLE
WITH config AS (
    SELECT run_id,
           TRY_CAST(struct_pack(tp := v['tp'], dp := v['dp'], pp := v['pp'], cp := v['cp'],
                                ep := v['ep'], zero_stage := v['zero_stage'])
                    AS STRUCT(tp INTEGER, dp INTEGER, pp INTEGER, cp INTEGER, ep INTEGER,
                              zero_stage INTEGER)) AS typed,
           config_sources
    FROM (SELECT run_id, map_from_entries(list((key, value))) AS v,
                 map_from_entries(list((key, source) ORDER BY key)) AS config_sources
          FROM run_config_of(want_runs)
          GROUP BY run_id)
)
SELECT
    r.run_id,                                   -- run name
    r.root,                                     -- directory it was discovered in
    r.description,
    r.world_size,                               -- ranks ingested
    r.sources,                                  -- files ingested
    r.batch_size,                               -- global batch size
    r.seq_len,                                  -- sequence length
    r.gpus_per_node,
    r.model_size,                               -- as written, e.g. 1.3B
    c.typed.tp,                                 -- tensor-parallel size
    c.typed.dp,                                 -- data-parallel size
    c.typed.pp,                                 -- pipeline stages
    c.typed.cp,                                 -- context-parallel size
    c.typed.ep,                                 -- expert-parallel size
    c.typed.zero_stage,                         -- DeepSpeed ZeRO stage
    r.layers,
    r.hidden,                                   -- hidden size
    r.heads,                                    -- attention heads
    r.global_batch,
    r.micro_batch,
    r.params,                                   -- every other configuration key, as text
    coalesce(c.config_sources, MAP {}) AS config_sources, -- key -> run-param | card | ds_config | megatron-args | name-template | inferred
    r.metadata,                                 -- JSON: workload card, distributed info
    r.created_at
FROM run_cards r
LEFT JOIN config c USING (run_id)
WHERE want_runs IS NULL OR list_contains(CAST(want_runs AS VARCHAR[]), r.run_id);

CREATE OR REPLACE VIEW runs AS
SELECT * FROM runs_of(NULL);
