-- CUDA synchronization events (-> _kineto_gpu_syncs) and Python frames (-> _kineto_python_frames).
-- cuda_sync events sit on the device's pid; a stream of 2^32 - 1 (or none) means no stream.
-- Stream Wait Event carries the stream and event it waits on in newer traces
-- (wait_on_stream, wait_on_cuda_event_record_corr_id).

CREATE OR REPLACE TEMP TABLE _kineto_gpu_syncs AS
SELECT getvariable('host_pid') AS pid,
       coalesce(TRY_CAST(a[1] AS INTEGER), CAST(pid AS INTEGER)) AS device_id,
       nullif(TRY_CAST(a[2] AS BIGINT), 4294967295) AS stream_id,
       start_ns, start_ns + dur_ns AS end_ns,
       coalesce(a[3], name) AS sync_kind,
       TRY_CAST(a[4] AS BIGINT) AS correlation_id,
       TRY_CAST(a[5] AS BIGINT) AS external_id,
       nullif(TRY_CAST(a[6] AS BIGINT), 4294967295) AS wait_stream_id,
       TRY_CAST(a[7] AS BIGINT) AS wait_event_correlation_id,
       iteration
FROM (SELECT *, json_extract_string(args, ['$.device', '$.stream', '$.cuda_sync_kind',
                                           '$.correlation', '$."External id"', '$.wait_on_stream',
                                           '$.wait_on_cuda_event_record_corr_id']) AS a
      FROM _ev WHERE kind = 'sync');

CREATE OR REPLACE TEMP TABLE _kineto_python_frames AS
SELECT pid, tid, start_ns, start_ns + dur_ns AS end_ns, name,
       TRY_CAST(a[1] AS BIGINT) AS python_id, TRY_CAST(a[2] AS BIGINT) AS python_parent_id,
       iteration
FROM (SELECT *, json_extract_string(args, ['$."Python id"', '$."Python parent id"']) AS a
      FROM _ev WHERE kind = 'python');
