-- Allocator events: PyTorch's [memory] instant events (profile_memory=True), one per
-- allocation (Bytes > 0) or free (Bytes < 0). Args: Bytes, Addr, Device Type (0 CPU, 1 CUDA),
-- Device Id (-1 for host memory), and since PyTorch 1.10 Total Allocated / Total Reserved after
-- the event (before that no Addr nor totals: ../memory_totals.sql derives them).
-- Out: temp table _memory_raw; views _memory_ops and _memory_ranges, the cpu_ops and user
-- annotations (20_host.sql), for memory_totals.sql to find the innermost of each holding an
-- event.
CREATE OR REPLACE TEMP TABLE _memory_raw AS
SELECT 0 AS file_key, event_no AS order_no, pid, tid, start_ns,
       CASE WHEN TRY_CAST(a[3] AS INTEGER) = 0 THEN 'CPU' ELSE 'GPU' END AS device_type,
       TRY_CAST(a[4] AS INTEGER) AS device_id,
       TRY_CAST(a[2] AS BIGINT) AS address,
       TRY_CAST(a[1] AS BIGINT) AS bytes,
       TRY_CAST(a[5] AS BIGINT) AS total_allocated,
       TRY_CAST(a[6] AS BIGINT) AS total_reserved,
       iteration
FROM (SELECT *, json_extract_string(args, ['$.Bytes', '$.Addr', '$."Device Type"', '$."Device Id"',
                                           '$."Total Allocated"', '$."Total Reserved"']) AS a
      FROM _ev WHERE kind = 'memory')
WHERE TRY_CAST(a[1] AS BIGINT) IS NOT NULL;

CREATE OR REPLACE TEMP VIEW _memory_ops AS
SELECT 0 AS file_key, op_no AS range_id, tid, start_ns, end_ns FROM _kineto_cpu_ops;

CREATE OR REPLACE TEMP VIEW _memory_ranges AS
SELECT 0 AS file_key, range_id, tid, start_ns, end_ns FROM _nvtx WHERE kind = 'annotation';
