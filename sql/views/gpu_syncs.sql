-- uses: none
-- CUDA synchronization as the GPU saw it (Kineto cuda_sync): a host thread waiting for a stream,
-- an event or the whole context, or a stream waiting on an event (cudaStreamWaitEvent), with
-- the API call that waited (same file, process and correlation id).
CREATE OR REPLACE VIEW gpu_syncs AS
SELECT
    s.run_id,
    s.rank,
    s.file_id,
    s.pid,
    s.device_id,
    s.stream_id,          -- the stream synchronized or made to wait (NULL: context or event sync)
    s.start_ns,
    s.end_ns,
    s.end_ns - s.start_ns AS dur_ns,
    s.sync_kind,          -- Stream Sync | Event Sync | Context Sync | Stream Wait Event
    s.wait_stream_id,     -- Stream Wait Event: the stream whose event it waits on (newer traces)
    s.wait_event_correlation_id, -- the cudaEventRecord call waited on (newer traces)
    s.correlation_id,
    s.external_id,        -- the CPU op that waited (cpu_ops.external_id)
    a.name AS api_name,   -- cudaStreamSynchronize, cudaEventSynchronize, cudaStreamWaitEvent, ...
    a.tid AS api_tid,     -- the host thread that waited
    a.start_ns AS api_start_ns,
    a.end_ns AS api_end_ns,
    s.iteration
FROM store.gpu_syncs s
-- the calls of the syncs alone are grouped (a semi join first): grouping every call of the
-- warehouse cost seconds on 8 M calls for a handful of syncs
LEFT JOIN (SELECT c.file_id, c.pid, c.correlation_id, arg_min(c.name, c.start_ns) AS name,
                  arg_min(c.tid, c.start_ns) AS tid, min(c.start_ns) AS start_ns,
                  arg_min(c.end_ns, c.start_ns) AS end_ns
           FROM store.cuda_api c
           SEMI JOIN store.gpu_syncs g
             ON g.file_id = c.file_id AND g.pid = c.pid AND g.correlation_id = c.correlation_id
           GROUP BY ALL) a
       ON a.file_id = s.file_id AND a.pid = s.pid AND a.correlation_id = s.correlation_id;
