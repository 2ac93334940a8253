-- GPU kernels -> store.kernels. A kernel's iteration is its launching call's; when the link is
-- missing, the iteration whose host range contains the kernel's start.
INSERT INTO store.kernels
SELECT getvariable('run_id'), r.rank, getvariable('file_id'), k.pid, k.deviceId, k.contextId,
       k.streamId, k.start_ns, k.end_ns,
       coalesce(dn.value, sn.value, '<unknown>'), sn.value, k.correlationId,
       k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ, k.registersPerThread,
       k.staticSharedMemory, k.dynamicSharedMemory, k.graphNodeId,
       coalesce(l.iteration, (
           -- no launch call in the file: the host step whose range holds the op's start
           SELECT max(i.iteration) FROM _iterations i
           WHERE l.pid IS NULL AND i.pid = k.pid AND k.start_ns >= i.start_ns AND k.start_ns < i.end_ns))
FROM (
    SELECT *, (globalPid >> 24) & 16777215 AS pid,
           start + getvariable('origin_ns') AS start_ns, "end" + getvariable('origin_ns') AS end_ns
    FROM _nsys_kernel
) k
JOIN _nsys_ranks r ON r.pid = k.pid
LEFT JOIN _nsys_strings dn ON dn.id = k.demangledName
LEFT JOIN _nsys_strings sn ON sn.id = k.shortName
LEFT JOIN _launches l ON l.pid = k.pid AND l.correlation_id = k.correlationId;
