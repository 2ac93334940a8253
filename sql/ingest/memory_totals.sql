-- Allocator events in warehouse terms, shared by the Kineto and nsys decoders.
-- In: temp table _memory_raw (file_key: which file, order_no, pid, tid, start_ns, device_type,
-- device_id, address, bytes, total_allocated, total_reserved, iteration; order_no breaks ties in
-- time).
-- Out: temp table _staged_memory_events: file_key and the columns of store.memory_events without
-- run_id, rank and file_id.
-- allocated: the source's total after the event, else a running sum of bytes per device. A trace
-- starts with memory already allocated, so the running sum dips below zero when that memory is
-- freed: it is raised by its lowest dip, the least the device held at the start (never negative).
-- Pairing by address: an allocation's free is the next event at its address when that is a free.
CREATE OR REPLACE TEMP TABLE _memory_ordered AS
SELECT *,
       row_number() OVER (PARTITION BY file_key, device_type, device_id ORDER BY start_ns, order_no) AS event_no,
       sum(bytes) OVER (PARTITION BY file_key, device_type, device_id ORDER BY start_ns, order_no
                        ROWS UNBOUNDED PRECEDING) AS running_bytes
FROM _memory_raw;

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
       iteration
FROM paired;
DROP TABLE _memory_ordered;
