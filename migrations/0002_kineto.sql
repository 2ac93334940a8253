-- 0002: what Kineto (PyTorch profiler) traces add.
-- External id links an op's CPU side (cpu_op, annotation) to the runtime call and GPU work it
-- caused; Kineto reports a kernel's shared memory as one total; each source keeps its own
-- top-level metadata (distributedInfo, deviceProperties, versions) as JSON.
ALTER TABLE store.kernels ADD COLUMN external_id BIGINT;
ALTER TABLE store.kernels ADD COLUMN shared_mem_bytes BIGINT;   -- static + dynamic
ALTER TABLE store.memcpy ADD COLUMN external_id BIGINT;
ALTER TABLE store.memset ADD COLUMN external_id BIGINT;
ALTER TABLE store.cuda_api ADD COLUMN external_id BIGINT;
ALTER TABLE store.nvtx_ranges ADD COLUMN external_id BIGINT;
ALTER TABLE store.sources ADD COLUMN metadata VARCHAR;          -- JSON
-- The profiler's own words for a collective ("_allgather_base") and its element counts.
ALTER TABLE store.nccl_ops ADD COLUMN collective_name VARCHAR;
ALTER TABLE store.nccl_ops ADD COLUMN in_nelems BIGINT;
ALTER TABLE store.nccl_ops ADD COLUMN out_nelems BIGINT;
-- nsys rows written before this migration: fill the total from the two parts.
UPDATE store.kernels SET shared_mem_bytes = coalesce(static_smem_bytes, 0) + coalesce(dynamic_smem_bytes, 0)
WHERE static_smem_bytes IS NOT NULL OR dynamic_smem_bytes IS NOT NULL;
