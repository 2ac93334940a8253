-- 0023: each NVTX range's name as a small integer (issue 32). store.nvtx_names numbers every
-- distinct range name of the warehouse once (name_id), with a row per run that holds the name
-- (so a lake, partitioned by run, carries each run's names); store.nvtx_ranges.name_id points
-- there. The metrics that group an autograd-NVTX capture's millions of ranges by name
-- (nvtx_summary, nvtx_gpu_projection) hash the integer and read each name's text once. Derive
-- entry nvtx_names (sql/nvtx_name_ids.sql) fills both for every source when the upgraded
-- warehouse is opened for writing.
CREATE TABLE store.nvtx_names (
    run_id  VARCHAR NOT NULL,
    name_id INTEGER NOT NULL,
    name    VARCHAR NOT NULL
);
ALTER TABLE store.nvtx_ranges ADD COLUMN name_id INTEGER;
