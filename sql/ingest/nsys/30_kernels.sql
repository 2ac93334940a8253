-- GPU kernels -> _nsys_store_kernels. A kernel's iteration is its launching call's; when the
-- link is missing, the iteration whose host range contains the kernel's start.
CREATE OR REPLACE TEMP TABLE _nsys_store_kernels AS
SELECT k.file_key, k.pid,
       k.deviceId AS device_id, k.contextId AS context_id, k.streamId AS stream_id,
       k.start_ns, k.end_ns,
       coalesce(dn.value, sn.value, '<unknown>') AS name, sn.value AS short_name,
       k.correlationId AS correlation_id,
       k.gridX AS grid_x, k.gridY AS grid_y, k.gridZ AS grid_z,
       k.blockX AS block_x, k.blockY AS block_y, k.blockZ AS block_z,
       k.registersPerThread AS registers_per_thread,
       k.staticSharedMemory AS static_smem_bytes, k.dynamicSharedMemory AS dynamic_smem_bytes,
       k.staticSharedMemory + k.dynamicSharedMemory AS shared_mem_bytes,
       k.graphNodeId AS graph_node_id,
       k.iteration, k.launch_ns
FROM nsys_gpu_activity(_nsys_kernel) k
LEFT JOIN _nsys_strings dn ON dn.file_key = k.file_key AND dn.id = k.demangledName
LEFT JOIN _nsys_strings sn ON sn.file_key = k.file_key AND sn.id = k.shortName;
DROP TABLE _nsys_kernel;  -- read: freed now (10_nvtx_ranges.sql)
