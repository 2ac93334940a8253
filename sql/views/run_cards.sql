-- uses: run_config_given
-- One row per training job (run), with its configuration as given (run_config_given) as typed
-- columns and the other keys in `params`: the runs view without the parallel layout (tp, dp, pp,
-- cp, ep, zero_stage), which the trace may show (parallel_groups, from every collective and
-- phase range). Metrics needing a run's batch size, sequence length or card read this view and
-- scan no facts.
CREATE OR REPLACE VIEW run_cards AS
WITH given AS (
    SELECT run_id,
           map_from_entries(list((key, value))) AS v,
           map_from_entries(list((key, value) ORDER BY key) FILTER (WHERE key NOT IN (
               'model_size', 'tp', 'dp', 'pp', 'cp', 'ep', 'zero_stage', 'layers', 'hidden',
               'heads', 'seq_len', 'global_batch', 'micro_batch'))) AS params
    FROM run_config_given
    GROUP BY run_id
),
config AS (
    -- the typed columns, in one cast (a value that is no number is NULL here, as written in
    -- run_config)
    SELECT run_id, params, v['model_size'] AS model_size,
           TRY_CAST(struct_pack(layers := v['layers'], hidden := v['hidden'], heads := v['heads'],
                                seq_len := v['seq_len'], global_batch := v['global_batch'],
                                micro_batch := v['micro_batch'])
                    AS STRUCT(layers INTEGER, hidden INTEGER, heads INTEGER, seq_len BIGINT,
                              global_batch BIGINT, micro_batch BIGINT)) AS typed
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
    c.typed.layers,
    c.typed.hidden,                             -- hidden size
    c.typed.heads,                              -- attention heads
    c.typed.global_batch,
    c.typed.micro_batch,
    coalesce(c.params, MAP {}) AS params,       -- every other configuration key, as text
    r.metadata,                                 -- JSON: workload card, distributed info
    r.created_at
FROM store.runs r
LEFT JOIN config c USING (run_id);
