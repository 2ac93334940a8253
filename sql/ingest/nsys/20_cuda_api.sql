-- CUDA runtime and driver calls -> _nsys_store_cuda_api, each with the iteration it ran in.
-- Out: temp table _launches (file_key, pid, correlation_id, tid, start_ns, iteration): the call
-- that launched each GPU op, joined on correlationId AND process (ids repeat across processes).

CREATE OR REPLACE TEMP TABLE _nsys_store_cuda_api AS
SELECT c.file_key, c.pid, c.tid, c.start_ns, c.end_ns, s.name,
       CASE c.eventClass WHEN 0 THEN 'runtime' WHEN 1 THEN 'driver' END AS api_kind,
       c.correlationId AS correlation_id, c.returnValue AS return_value,
       CASE WHEN c.start_ns < i.end_ns THEN i.iteration END AS iteration
FROM (
    SELECT c.file_key, c.eventClass, c.correlationId, c.returnValue, c.nameId, p.pid,
           c.globalTid & 16777215 AS tid,
           c.start + f.origin_ns AS start_ns, c."end" + f.origin_ns AS end_ns
    FROM _nsys_runtime c
    JOIN _nsys_processes p ON p.file_key = c.file_key AND p.pid = (c.globalTid >> 24) & 16777215
    JOIN _nsys_files f ON f.file_key = c.file_key
) c
-- the name as nsys stats prints it: a `_v` six characters from the end is the 4-digit API
-- version suffix (_v7000, _v3020), cut; _v2, _v10000 and _v2_v12000 stay (cuGetProcAddress and
-- cuGetProcAddress_v2 are different functions). Once per distinct name, not once per call.
LEFT JOIN (SELECT file_key, id, regexp_replace(value, '_v.{4}$', '') AS name FROM _nsys_strings) s
       ON s.file_key = c.file_key AND s.id = c.nameId
ASOF LEFT JOIN _iterations i ON i.file_key = c.file_key AND i.pid = c.pid AND c.start_ns >= i.start_ns;
DROP TABLE _nsys_runtime;  -- read: freed now (10_nvtx_ranges.sql)

CREATE OR REPLACE TEMP TABLE _launches AS
SELECT file_key, pid, correlation_id, arg_min(tid, start_ns) AS tid,
       min(start_ns) AS start_ns, arg_min(iteration, start_ns) AS iteration
FROM _nsys_store_cuda_api
WHERE correlation_id IS NOT NULL
GROUP BY file_key, pid, correlation_id;
