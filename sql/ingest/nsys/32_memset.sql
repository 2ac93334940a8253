-- Memsets -> _nsys_store_memset.
CREATE OR REPLACE TEMP TABLE _nsys_store_memset AS
SELECT m.file_key, m.pid,
       m.deviceId AS device_id, m.contextId AS context_id, m.streamId AS stream_id,
       m.start_ns, m.end_ns, m.correlationId AS correlation_id, m.bytes, m.value,
       nsys_mem_kind(m.memKind) AS mem_kind,
       m.iteration, m.launch_ns
FROM nsys_gpu_activity(_nsys_memset) m;
