-- 0012: what Kineto traces hold beyond ops and kernels: CUDA synchronization events (cuda_sync:
-- a stream, event or context sync, or a stream waiting on an event) and Python frames
-- (python_function, written by with_stack=True: how nn.Modules are named). Both were dropped.
-- (Branch linklayer: 0011 keeps the numbers gap-free here; the lead renumbers at merge.)
CREATE TABLE store.gpu_syncs (
    run_id         VARCHAR NOT NULL,
    rank           INTEGER NOT NULL,
    file_id        BIGINT NOT NULL,
    pid            BIGINT,            -- host process (the launch calls' pid)
    device_id      INTEGER,
    stream_id      BIGINT,            -- NULL: not on one stream (context or event sync)
    start_ns       BIGINT NOT NULL,
    end_ns         BIGINT NOT NULL,
    sync_kind      VARCHAR NOT NULL,  -- Stream Sync | Event Sync | Context Sync | Stream Wait Event
    correlation_id BIGINT,            -- the API call that waited (cuda_api.correlation_id)
    external_id    BIGINT,
    wait_stream_id BIGINT,            -- Stream Wait Event: the stream waited on (newer traces)
    wait_event_correlation_id BIGINT, -- the cudaEventRecord waited on (newer traces)
    iteration      INTEGER
);

CREATE TABLE store.python_frames (
    run_id           VARCHAR NOT NULL,
    rank             INTEGER NOT NULL,
    file_id          BIGINT NOT NULL,
    pid              BIGINT,
    tid              BIGINT,
    start_ns         BIGINT NOT NULL,
    end_ns           BIGINT NOT NULL,
    name             VARCHAR NOT NULL,  -- 'file.py(line): function' or 'nn.Module: Linear_0'
    python_id        BIGINT,            -- unique in the file
    python_parent_id BIGINT,            -- the calling frame's python_id (NULL: outermost)
    iteration        INTEGER
);
