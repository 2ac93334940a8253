-- uses: run_config
-- One row per training job (run), with its configuration (run_config: the most trusted value of
-- each key) as typed columns, the other keys in `params`, and where each value came from.
CREATE OR REPLACE VIEW runs AS
WITH config_rows AS MATERIALIZED (  -- once: the aggregates below would each recompute it
    SELECT run_id, key, value, source FROM run_config
),
given AS (
    SELECT run_id,
           map_from_entries(list((key, value))) AS v,
           map_from_entries(list((key, value) ORDER BY key) FILTER (WHERE key NOT IN (
               'model_size', 'tp', 'dp', 'pp', 'cp', 'ep', 'zero_stage', 'layers', 'hidden',
               'heads', 'seq_len', 'global_batch', 'micro_batch'))) AS params,
           map_from_entries(list((key, source) ORDER BY key)) AS config_sources
    FROM config_rows
    GROUP BY run_id
),
config AS (
    -- the typed columns, in one cast (a value that is no number is NULL here, as written in
    -- run_config)
    SELECT run_id, params, config_sources, v['model_size'] AS model_size,
           TRY_CAST(struct_pack(tp := v['tp'], dp := v['dp'], pp := v['pp'], cp := v['cp'],
                                ep := v['ep'], zero_stage := v['zero_stage'], layers := v['layers'],
                                hidden := v['hidden'], heads := v['heads'], seq_len := v['seq_len'],
                                global_batch := v['global_batch'], micro_batch := v['micro_batch'])
                    AS STRUCT(tp INTEGER, dp INTEGER, pp INTEGER, cp INTEGER, ep INTEGER,
                              zero_stage INTEGER, layers INTEGER, hidden INTEGER, heads INTEGER,
                              seq_len BIGINT, global_batch BIGINT, micro_batch BIGINT)) AS typed
    FROM given
)
SELECT
    r.run_id,                                   -- run name
    r.root,                                     -- directory it was discovered in
    r.description,
    (SELECT count(*) FROM store.ranks k WHERE k.run_id = r.run_id) AS world_size, -- ranks ingested
    (SELECT count(*) FROM store.sources s WHERE s.run_id = r.run_id) AS sources,  -- files ingested
    coalesce(r.batch_size, c.typed.global_batch) AS batch_size, -- global batch size
    coalesce(r.seq_len, c.typed.seq_len) AS seq_len,  -- sequence length
    r.gpus_per_node,
    c.model_size,                               -- as written, e.g. 1.3B
    c.typed.tp,                             -- tensor-parallel size
    c.typed.dp,                             -- data-parallel size
    c.typed.pp,                             -- pipeline stages
    c.typed.cp,                             -- context-parallel size
    c.typed.ep,                             -- expert-parallel size
    c.typed.zero_stage,                     -- DeepSpeed ZeRO stage
    c.typed.layers,
    c.typed.hidden,                         -- hidden size
    c.typed.heads,                          -- attention heads
    c.typed.global_batch,
    c.typed.micro_batch,
    coalesce(c.params, MAP {}) AS params,       -- every other configuration key, as text
    coalesce(c.config_sources, MAP {}) AS config_sources, -- key -> run-param | card | ds_config | megatron-args | name-template | inferred
    r.metadata,                                 -- JSON: workload card, distributed info
    r.created_at
FROM store.runs r
LEFT JOIN config c USING (run_id);
