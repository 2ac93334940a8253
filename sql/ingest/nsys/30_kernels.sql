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
       coalesce(l.iteration, (
           -- no launch call in the file: the host step whose range holds the op's start
           SELECT max(i.iteration) FROM _iterations i
           WHERE l.pid IS NULL AND i.file_key = k.file_key AND i.pid = k.pid AND k.start_ns >= i.start_ns AND k.start_ns < i.end_ns))
           AS iteration,
       l.start_ns AS launch_ns
FROM (
    SELECT o.*, p.pid, o.start + f.origin_ns AS start_ns, o."end" + f.origin_ns AS end_ns
    FROM _nsys_kernel o
    JOIN _nsys_processes p ON p.file_key = o.file_key AND p.pid = (o.globalPid >> 24) & 16777215
    JOIN _nsys_files f ON f.file_key = o.file_key
) k
LEFT JOIN _nsys_strings dn ON dn.file_key = k.file_key AND dn.id = k.demangledName
LEFT JOIN _nsys_strings sn ON sn.file_key = k.file_key AND sn.id = k.shortName
LEFT JOIN _launches l
       ON l.file_key = k.file_key AND l.pid = k.pid AND l.correlation_id = k.correlationId;
DROP TABLE _nsys_kernel;  -- read: freed now (10_nvtx_ranges.sql)
