-- CUDA synchronization (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) -> store.gpu_syncs, named as Kineto
-- names its cuda_sync events; a stream or event id of 2^32 - 1 means none.
INSERT INTO store.gpu_syncs BY NAME
SELECT r.run_id, r.rank, r.file_id, r.pid,
       s.deviceId AS device_id, nullif(s.streamId, 4294967295) AS stream_id,
       s.start + r.origin_ns AS start_ns, s."end" + r.origin_ns AS end_ns,
       CASE s.syncType WHEN 1 THEN 'Event Sync' WHEN 2 THEN 'Stream Wait Event'
                       WHEN 3 THEN 'Stream Sync' WHEN 4 THEN 'Context Sync' ELSE 'Unknown' END
           AS sync_kind,
       s.correlationId AS correlation_id,
       l.iteration
FROM _nsys_sync s
JOIN _nsys_ranks r ON r.file_key = s.file_key AND r.pid = (s.globalPid >> 24) & 16777215
LEFT JOIN _launches l
       ON l.file_key = s.file_key AND l.pid = r.pid AND l.correlation_id = s.correlationId;
