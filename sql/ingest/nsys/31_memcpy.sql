-- Memory copies -> _nsys_store_memcpy, with the copy kind spelled as users read it (HtoD, ...).
CREATE OR REPLACE TEMP TABLE _nsys_store_memcpy AS
SELECT m.file_key, m.pid,
       m.deviceId AS device_id, m.contextId AS context_id, m.streamId AS stream_id,
       m.start_ns, m.end_ns, m.correlationId AS correlation_id, m.bytes,
       nsys_copy_kind(m.copyKind) AS copy_kind, nsys_mem_kind(m.srcKind) AS src_kind,
       nsys_mem_kind(m.dstKind) AS dst_kind,
       m.iteration, m.launch_ns
FROM nsys_gpu_activity(_nsys_memcpy) m;
