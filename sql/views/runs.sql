-- uses: none
-- One row per training job (run), with what metrics need from its workload card.
CREATE OR REPLACE VIEW runs AS
SELECT
    r.run_id,                                   -- run name
    r.root,                                     -- directory it was discovered in
    r.description,
    (SELECT count(*) FROM store.ranks k WHERE k.run_id = r.run_id) AS world_size, -- ranks ingested
    (SELECT count(*) FROM store.sources s WHERE s.run_id = r.run_id) AS sources,  -- files ingested
    r.batch_size,                               -- global batch size
    r.seq_len,                                  -- sequence length
    r.gpus_per_node,
    r.metadata,                                 -- JSON: workload card, distributed info
    r.created_at
FROM store.runs r;
