-- 0014: allocator events
-- (Kineto [memory] instant events), one row per allocation (bytes > 0) or free (bytes < 0).
-- The totals, the pairing of frees with allocations and the time order are worked out once per
-- file at ingest (sql/ingest/memory_totals.sql): the metrics then read 10 M events without a
-- sort.
CREATE TABLE store.memory_events (
    run_id          VARCHAR NOT NULL,
    rank            INTEGER NOT NULL,
    file_id         BIGINT NOT NULL,
    event_no        BIGINT NOT NULL,   -- time order within the file and device, from 1
    pid             BIGINT,
    tid             BIGINT,
    start_ns        BIGINT NOT NULL,
    device_type     VARCHAR NOT NULL,  -- GPU | CPU
    device_id       INTEGER,           -- -1 for host memory
    address         BIGINT,
    bytes           BIGINT NOT NULL,   -- signed: > 0 allocation, < 0 free
    allocated       BIGINT NOT NULL,   -- total allocated after the event
    reserved        BIGINT,            -- total reserved after the event (NULL: not given)
    derived         BOOLEAN NOT NULL,  -- allocated is a running sum, not the source's total
    freed_no        BIGINT,            -- an allocation's free (its event_no); NULL: none
    unpaired        BOOLEAN,           -- see the memory_events view; NULL without addresses
    iteration       INTEGER
);
