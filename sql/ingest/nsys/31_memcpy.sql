-- Memory copies -> store.memcpy, with the copy kind spelled as users read it (HtoD, ...).
INSERT INTO store.memcpy BY NAME
SELECT getvariable('run_id') AS run_id, r.rank, getvariable('file_id') AS file_id, m.pid,
       m.deviceId AS device_id, m.contextId AS context_id, m.streamId AS stream_id,
       m.start_ns, m.end_ns, m.correlationId AS correlation_id, m.bytes,
       nsys_copy_kind(m.copyKind) AS copy_kind, nsys_mem_kind(m.srcKind) AS src_kind,
       nsys_mem_kind(m.dstKind) AS dst_kind,
       coalesce(l.iteration, (
           -- no launch call in the file: the host step whose range holds the op's start
           SELECT max(i.iteration) FROM _iterations i
           WHERE l.pid IS NULL AND i.pid = m.pid AND m.start_ns >= i.start_ns AND m.start_ns < i.end_ns))
           AS iteration,
       l.start_ns AS launch_ns
FROM (
    SELECT *, (globalPid >> 24) & 16777215 AS pid,
           start + getvariable('origin_ns') AS start_ns, "end" + getvariable('origin_ns') AS end_ns
    FROM _nsys_memcpy
) m
JOIN _nsys_ranks r ON r.pid = m.pid
LEFT JOIN _launches l ON l.pid = m.pid AND l.correlation_id = m.correlationId;
