-- Allocator events in warehouse terms, shared by the Kineto and nsys decoders.
-- In: temp table _memory_raw (file_key: which file, order_no, pid, tid, start_ns, device_type,
-- device_id, address, bytes, total_allocated, total_reserved, iteration; order_no breaks ties in
-- time and is unique across the files), and views _memory_ops and _memory_ranges (file_key,
-- range_id, tid, start_ns, end_ns: the files' CPU ops, and their NVTX ranges or annotations).
-- Out: temp table _staged_memory_events: file_key and the columns of store.memory_events without
-- run_id, rank and file_id, with cpu_op_no (the op's number in its file, for
-- store.cpu_ops.op_id) in place of cpu_op_id.
-- allocated: the source's total after the event, else a running sum of bytes per device. A trace
-- starts with memory already allocated, so the running sum dips below zero when that memory is
-- freed: it is raised by its lowest dip, the least the device held at the start (never negative).
-- Pairing by address: an allocation's free is the next event at its address when that is a free.
-- What made an event: the innermost op (range) holding it on its thread, by the rule of the
-- cpu_ops and nvtx_ranges trees: the event is a mark among its thread's ranges (ids below 0,
-- apart from theirs), its parent there the innermost (sql/lib/range_nesting.sql). Threads
-- are keyed by file and tid (the sweep's pid is the file_key): an OS thread id is unique in a
-- file's capture.
CREATE OR REPLACE TEMP TABLE _memory_points AS
SELECT -1 - order_no AS range_id, file_key AS pid, tid, start_ns, start_ns AS end_ns
FROM _memory_raw WHERE tid IS NOT NULL;
CREATE OR REPLACE TEMP TABLE _memory_op_spans AS
SELECT range_id, file_key AS pid, tid, start_ns, end_ns FROM _memory_ops
WHERE (file_key, tid) IN (SELECT (pid, tid) FROM _memory_points);
CREATE OR REPLACE TEMP TABLE _memory_range_spans AS
SELECT range_id, file_key AS pid, tid, start_ns, end_ns FROM _memory_ranges
WHERE (file_key, tid) IN (SELECT (pid, tid) FROM _memory_points);

CREATE OR REPLACE TEMP TABLE _memory_ordered AS
SELECT m.*, o.parent_id AS cpu_op_no, r.parent_id AS nvtx_range_id,
       row_number() OVER (PARTITION BY file_key, device_type, device_id ORDER BY start_ns, order_no) AS event_no,
       sum(bytes) OVER (PARTITION BY file_key, device_type, device_id ORDER BY start_ns, order_no
                        ROWS UNBOUNDED PRECEDING) AS running_bytes
FROM _memory_raw m
LEFT JOIN range_nesting(['_memory_op_spans', '_memory_points']) o ON o.range_id = -1 - m.order_no
LEFT JOIN range_nesting(['_memory_range_spans', '_memory_points']) r ON r.range_id = -1 - m.order_no;

CREATE OR REPLACE TEMP TABLE _staged_memory_events AS
WITH paired AS (
    SELECT *,
           lead(event_no) OVER by_address AS next_no,
           lead(bytes) OVER by_address AS next_bytes,
           lag(bytes) OVER by_address AS previous_bytes
    FROM _memory_ordered
    WINDOW by_address AS (PARTITION BY file_key, device_type, device_id, address ORDER BY event_no)
)
SELECT file_key, event_no, pid, tid, start_ns, device_type, device_id, address, bytes,
       coalesce(total_allocated, CAST(running_bytes - least(0, min(running_bytes) OVER (
           PARTITION BY file_key, device_type, device_id)) AS BIGINT)) AS allocated,
       total_reserved AS reserved,
       total_allocated IS NULL AS derived,
       CASE WHEN bytes > 0 AND next_bytes = -bytes THEN next_no END AS freed_no,
       CASE WHEN address IS NOT NULL THEN
           CASE WHEN bytes < 0 THEN previous_bytes IS DISTINCT FROM -bytes
                ELSE next_bytes IS DISTINCT FROM -bytes END
       END AS unpaired,
       iteration, cpu_op_no, nvtx_range_id
FROM paired;
DROP TABLE _memory_ordered;
DROP TABLE _memory_points;
DROP TABLE _memory_op_spans;
DROP TABLE _memory_range_spans;
