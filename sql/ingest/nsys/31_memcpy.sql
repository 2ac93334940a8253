-- Memory copies -> _nsys_store_memcpy, with the copy kind spelled as users read it (HtoD, ...).
CREATE OR REPLACE TEMP TABLE _nsys_store_memcpy AS
SELECT m.file_key, m.pid,
       m.deviceId AS device_id, m.contextId AS context_id, m.streamId AS stream_id,
       m.start_ns, m.end_ns, m.correlationId AS correlation_id, m.bytes,
       nsys_copy_kind(m.copyKind) AS copy_kind, nsys_mem_kind(m.srcKind) AS src_kind,
       nsys_mem_kind(m.dstKind) AS dst_kind,
       coalesce(l.iteration, (
           -- no launch call in the file: the host step whose range holds the op's start
           SELECT max(i.iteration) FROM _iterations i
           WHERE l.pid IS NULL AND i.file_key = m.file_key AND i.pid = m.pid AND m.start_ns >= i.start_ns AND m.start_ns < i.end_ns))
           AS iteration,
       l.start_ns AS launch_ns
FROM (
    SELECT o.*, p.pid, o.start + f.origin_ns AS start_ns, o."end" + f.origin_ns AS end_ns
    FROM _nsys_memcpy o
    JOIN _nsys_processes p ON p.file_key = o.file_key AND p.pid = (o.globalPid >> 24) & 16777215
    JOIN _nsys_files f ON f.file_key = o.file_key
) m
LEFT JOIN _launches l
       ON l.file_key = m.file_key AND l.pid = m.pid AND l.correlation_id = m.correlationId;
