-- uses: gpu_op_kind, gpu_op_name, memcpy_label, scope
-- Every GPU activity: kernels, memcpy and memset, with their kind. The base of every
-- busy / idle / overlap metric. Launch configuration is NULL for copies and memsets; bytes and
-- memory kinds are NULL for kernels. rank_key is one BIGINT per (run_id, rank), as in `ranks`:
-- metrics group and sort millions of ops by it (a VARCHAR run_id costs 2-3x more to sort and
-- join); a rank's ops all come from one file, so file_id and rank make it without a join.
-- alone and device_prev_end_ns let busy / idle metrics answer the ops that overlap nothing
-- with sums, and sort only the rest.
CREATE OR REPLACE VIEW gpu_ops AS
SELECT run_id, rank, rank_key(file_id, rank) AS rank_key, file_id, pid, device_id, context_id,
       stream_id,
       start_ns, end_ns, end_ns - start_ns AS dur_ns,
       CAST('kernel' AS gpu_op_type) AS op,  -- kernel | memcpy | memset (ENUM gpu_op_type)
       -- compute | comm | sync | other | memcpy | memset (ENUM gpu_op_kind)
       n.kind AS kind,  -- the name's kind in store.kernel_names
       -- kernel name, '[CUDA memcpy Host-to-Device]', '[CUDA memset]': a gpu_op_name (ENUM),
       -- taken from the join's small side (a cast per row would hash every name's text)
       coalesce(n.op_name, CAST(name AS gpu_op_name)) AS name,
       correlation_id,
       grid_x, grid_y, grid_z, block_x, block_y, block_z, registers_per_thread,
       static_smem_bytes, dynamic_smem_bytes,
       NULL::BIGINT AS bytes,
       NULL::VARCHAR AS src_kind,      -- memory kinds: Pageable, Pinned, Device, ...
       NULL::VARCHAR AS dst_kind,
       iteration,
       launch_ns,                      -- start of the launching CUDA API call (NULL: not in the trace)
       -- the op's place on the timeline (sql/gpu_op_timeline.sql, filled in at ingest):
       coalesce(alone, false) AS alone,  -- no other GPU op of the rank overlaps or touches it
       device_prev_end_ns              -- latest end of the device's earlier ops (NULL: none)
FROM store.kernels
LEFT JOIN (SELECT name, CAST(kind AS gpu_op_kind) AS kind, CAST(name AS gpu_op_name) AS op_name
           FROM store.kernel_names) n
    USING (name)
UNION ALL
SELECT run_id, rank, rank_key(file_id, rank), file_id, pid, device_id, context_id,
       stream_id, start_ns, end_ns, end_ns - start_ns,
       CAST('memcpy' AS gpu_op_type), CAST('memcpy' AS gpu_op_kind),
       CAST(memcpy_name(copy_kind) AS gpu_op_name), correlation_id,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       bytes, src_kind, dst_kind, iteration, launch_ns, coalesce(alone, false),
       device_prev_end_ns
FROM store.memcpy
UNION ALL
SELECT run_id, rank, rank_key(file_id, rank), file_id, pid, device_id, context_id,
       stream_id, start_ns, end_ns, end_ns - start_ns,
       CAST('memset' AS gpu_op_type), CAST('memset' AS gpu_op_kind),
       CAST('[CUDA memset]' AS gpu_op_name), correlation_id,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       bytes, mem_kind, NULL, iteration, launch_ns, coalesce(alone, false),
       device_prev_end_ns
FROM store.memset;
