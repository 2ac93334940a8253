-- uses: none
-- What a name says on the host side, one definition for the host-side metrics and for the facts
-- stored at ingest (sql/nvtx_range_facts.sql, sql/cuda_api_roles.sql). Plain SQL over the name:
-- no table is read, so a derive script calling these depends on nothing else.

-- data_loader_pattern: CPU ops and ranges that load data (the `data_pattern` parameter):
-- PyTorch's `enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__` (and the
-- multi-process iterator), and annotations named like data loading.
-- @arg want  any  a regular expression (NULL: the default)
-- @ret VARCHAR
CREATE OR REPLACE MACRO data_loader_pattern(want) AS
    coalesce(CAST(want AS VARCHAR), '(?i)dataloader|data_load|data loading|get_batch|next_batch');

-- api_class: what a CUDA API call is, by its name: sync api (cudaDeviceSynchronize,
-- cudaStreamSynchronize, cudaEventSynchronize, cuCtxSynchronize and the cu / hip spellings),
-- memcpy, memset, launch (other names with Launch: cudaLaunchKernel, cuLaunchKernelEx,
-- cudaGraphLaunch, hipExtModuleLaunchKernel, ...); NULL: other names.
-- @arg name  VARCHAR
-- @ret VARCHAR
CREATE OR REPLACE MACRO api_class(name) AS
    CASE WHEN regexp_matches(name, '^(cu|cuda|hip)(Device|Stream|Event|Ctx)Synchronize') THEN 'sync api'
         WHEN regexp_matches(name, '^(cu|cuda|hip)[A-Za-z0-9_]*Memcpy') THEN 'memcpy'
         WHEN regexp_matches(name, '^(cu|cuda|hip)[A-Za-z0-9_]*Memset') THEN 'memset'
         WHEN regexp_matches(name, '^(cu|cuda|hip)[A-Za-z0-9_]*Launch') THEN 'launch' END;
