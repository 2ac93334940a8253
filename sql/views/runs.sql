-- One row per training job (run), with its configuration (run_config: the most trusted value of
-- each key) as typed columns, the other keys in `params`, and where each value came from.
CREATE OR REPLACE VIEW runs AS
WITH config AS (
    SELECT run_id,
           any_value(value) FILTER (WHERE key = 'model_size') AS model_size,
           TRY_CAST(any_value(value) FILTER (WHERE key = 'tp') AS INTEGER) AS tp,
           TRY_CAST(any_value(value) FILTER (WHERE key = 'dp') AS INTEGER) AS dp,
           TRY_CAST(any_value(value) FILTER (WHERE key = 'pp') AS INTEGER) AS pp,
           TRY_CAST(any_value(value) FILTER (WHERE key = 'cp') AS INTEGER) AS cp,
           TRY_CAST(any_value(value) FILTER (WHERE key = 'ep') AS INTEGER) AS ep,
           TRY_CAST(any_value(value) FILTER (WHERE key = 'zero_stage') AS INTEGER) AS zero_stage,
           TRY_CAST(any_value(value) FILTER (WHERE key = 'layers') AS INTEGER) AS layers,
           TRY_CAST(any_value(value) FILTER (WHERE key = 'hidden') AS INTEGER) AS hidden,
           TRY_CAST(any_value(value) FILTER (WHERE key = 'heads') AS INTEGER) AS heads,
           TRY_CAST(any_value(value) FILTER (WHERE key = 'seq_len') AS BIGINT) AS seq_len,
           TRY_CAST(any_value(value) FILTER (WHERE key = 'global_batch') AS BIGINT) AS global_batch,
           TRY_CAST(any_value(value) FILTER (WHERE key = 'micro_batch') AS BIGINT) AS micro_batch,
           map_from_entries(list((key, value) ORDER BY key) FILTER (WHERE key NOT IN (
               'model_size', 'tp', 'dp', 'pp', 'cp', 'ep', 'zero_stage', 'layers', 'hidden',
               'heads', 'seq_len', 'global_batch', 'micro_batch'))) AS params,
           map_from_entries(list((key, source) ORDER BY key)) AS config_sources
    FROM run_config
    GROUP BY run_id
)
SELECT
    r.run_id,                                   -- run name
    r.root,                                     -- directory it was discovered in
    r.description,
    (SELECT count(*) FROM store.ranks k WHERE k.run_id = r.run_id) AS world_size, -- ranks ingested
    (SELECT count(*) FROM store.sources s WHERE s.run_id = r.run_id) AS sources,  -- files ingested
    coalesce(r.batch_size, c.global_batch) AS batch_size, -- global batch size
    coalesce(r.seq_len, c.seq_len) AS seq_len,  -- sequence length
    r.gpus_per_node,
    c.model_size,                               -- as written, e.g. 1.3B
    c.tp,                                       -- tensor-parallel size
    c.dp,                                       -- data-parallel size
    c.pp,                                       -- pipeline stages
    c.cp,                                       -- context-parallel size
    c.ep,                                       -- expert-parallel size
    c.zero_stage,                               -- DeepSpeed ZeRO stage
    c.layers,
    c.hidden,                                   -- hidden size
    c.heads,                                    -- attention heads
    c.global_batch,
    c.micro_batch,
    coalesce(c.params, MAP {}) AS params,       -- every other configuration key, as text
    coalesce(c.config_sources, MAP {}) AS config_sources, -- key -> run-param | card | ds_config | megatron-args | name-template | inferred
    r.metadata,                                 -- JSON: workload card, distributed info
    r.created_at
FROM store.runs r
LEFT JOIN config c USING (run_id);
