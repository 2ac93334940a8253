-- Faults the exporter wrote, by Kineto's rules (../kineto/90_faults.sql), counted for each
-- export's warnings: a GPU operation that ends before it starts is stored with duration 0 (its
-- end moved to its start); one exported again, identical in process, device, stream, times and
-- correlation id, is stored as often as written (which copy is the true one is not known).
-- In: _nsys_store_kernels, _nsys_store_memcpy, _nsys_store_memset.
-- Out: temp table _nsys_faults (file_key, negative_durations, duplicates), for each export with
-- a fault; tracewh.ingest.nsys reads it into the export's warnings.
-- One hash aggregate over the GPU operations' key columns.
CREATE OR REPLACE TEMP TABLE _nsys_faults AS
WITH ops AS (
    SELECT file_key, pid, device_id, stream_id, start_ns, end_ns, correlation_id
    FROM _nsys_store_kernels
    UNION ALL
    SELECT file_key, pid, device_id, stream_id, start_ns, end_ns, correlation_id
    FROM _nsys_store_memcpy
    UNION ALL
    SELECT file_key, pid, device_id, stream_id, start_ns, end_ns, correlation_id
    FROM _nsys_store_memset
), same AS (
    SELECT file_key, count(*) AS copies, count(*) FILTER (WHERE end_ns < start_ns) AS negative
    FROM ops
    GROUP BY file_key, pid, device_id, stream_id, start_ns, end_ns, correlation_id
)
SELECT file_key, CAST(sum(negative) AS BIGINT) AS negative_durations,
       CAST(sum(copies) - count(*) AS BIGINT) AS duplicates
FROM same
GROUP BY file_key
HAVING sum(negative) > 0 OR sum(copies) > count(*);

UPDATE _nsys_store_kernels SET end_ns = start_ns WHERE end_ns < start_ns;
UPDATE _nsys_store_memcpy SET end_ns = start_ns WHERE end_ns < start_ns;
UPDATE _nsys_store_memset SET end_ns = start_ns WHERE end_ns < start_ns;
