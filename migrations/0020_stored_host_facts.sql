-- 0020: facts the host-side views recomputed over every NVTX range and CUDA API call, stored
-- (issue 32). What each NVTX range's name says: the iteration it numbers, its host phase, data
-- loading, the phase of collectives launched inside it (sql/nvtx_range_facts.sql, derive entry
-- nvtx_range_facts); which CUDA API calls wait for the GPU, and which are a runtime call's
-- driver call (sql/cuda_api_roles.sql, derive entry cuda_api_roles). Both entries fill them for
-- every source when the upgraded warehouse is opened for writing.
ALTER TABLE store.nvtx_ranges ADD COLUMN iteration INTEGER;
ALTER TABLE store.nvtx_ranges ADD COLUMN phase VARCHAR;
ALTER TABLE store.nvtx_ranges ADD COLUMN data_loading BOOLEAN;
ALTER TABLE store.nvtx_ranges ADD COLUMN launch_phase UTINYINT;
ALTER TABLE store.cuda_api ADD COLUMN in_runtime_call BOOLEAN;
ALTER TABLE store.cuda_api ADD COLUMN blocking_rule VARCHAR;
