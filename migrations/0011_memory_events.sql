-- 0011: allocator events (Kineto [memory] instant events; nsys CUDA memory-usage rows), one row
-- per allocation (bytes > 0) or free (bytes < 0). Totals are the source's own after the event,
-- NULL where it gives none (the memory_events view then derives them).
CREATE TABLE store.memory_events (
    run_id          VARCHAR NOT NULL,
    rank            INTEGER NOT NULL,
    file_id         BIGINT NOT NULL,
    event_no        BIGINT NOT NULL,   -- order within the file (ties in time keep it)
    pid             BIGINT,
    tid             BIGINT,
    start_ns        BIGINT NOT NULL,
    device_type     VARCHAR NOT NULL,  -- GPU | CPU
    device_id       INTEGER,           -- -1 for host memory
    address         BIGINT,
    bytes           BIGINT NOT NULL,   -- signed: > 0 allocation, < 0 free
    total_allocated BIGINT,
    total_reserved  BIGINT,
    iteration       INTEGER
);
