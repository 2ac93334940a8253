-- Every GPU activity: kernels, memcpy and memset, with their kind. The base of every
-- busy / idle / overlap metric. Launch configuration is NULL for copies and memsets; bytes and
-- memory kinds are NULL for kernels.
CREATE OR REPLACE VIEW gpu_ops AS
SELECT run_id, rank, file_id, pid, device_id, context_id, stream_id,
       start_ns, end_ns, end_ns - start_ns AS dur_ns,
       'kernel' AS op,                 -- kernel | memcpy | memset
       coalesce(n.kind, kernel_kind(name)) AS kind,  -- compute | comm | sync | other | memcpy | memset
       name,                           -- kernel name, '[CUDA memcpy Host-to-Device]', '[CUDA memset]'
       correlation_id,
       grid_x, grid_y, grid_z, block_x, block_y, block_z, registers_per_thread,
       static_smem_bytes, dynamic_smem_bytes,
       NULL::BIGINT AS bytes,
       NULL::VARCHAR AS src_kind,      -- memory kinds: Pageable, Pinned, Device, ...
       NULL::VARCHAR AS dst_kind,
       iteration
FROM store.kernels LEFT JOIN store.kernel_names n USING (name)
UNION ALL
SELECT run_id, rank, file_id, pid, device_id, context_id, stream_id,
       start_ns, end_ns, end_ns - start_ns,
       'memcpy', 'memcpy', memcpy_name(copy_kind), correlation_id,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       bytes, src_kind, dst_kind, iteration
FROM store.memcpy
UNION ALL
SELECT run_id, rank, file_id, pid, device_id, context_id, stream_id,
       start_ns, end_ns, end_ns - start_ns,
       'memset', 'memset', '[CUDA memset]', correlation_id,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       bytes, mem_kind, NULL, iteration
FROM store.memset;
