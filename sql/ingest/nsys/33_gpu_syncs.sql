-- CUDA synchronization (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) -> _nsys_store_gpu_syncs, named as
-- Kineto names its cuda_sync events; a stream or event id of 2^32 - 1 means none.
CREATE OR REPLACE TEMP TABLE _nsys_store_gpu_syncs AS
SELECT s.file_key, p.pid,
       s.deviceId AS device_id, nullif(s.streamId, 4294967295) AS stream_id,
       s.start + f.origin_ns AS start_ns, s."end" + f.origin_ns AS end_ns,
       CASE s.syncType WHEN 1 THEN 'Event Sync' WHEN 2 THEN 'Stream Wait Event'
                       WHEN 3 THEN 'Stream Sync' WHEN 4 THEN 'Context Sync' ELSE 'Unknown' END
           AS sync_kind,
       s.correlationId AS correlation_id,
       l.iteration
FROM _nsys_sync s
JOIN _nsys_processes p ON p.file_key = s.file_key AND p.pid = (s.globalPid >> 24) & 16777215
JOIN _nsys_files f ON f.file_key = s.file_key
LEFT JOIN _launches l
       ON l.file_key = s.file_key AND l.pid = p.pid AND l.correlation_id = s.correlationId;
