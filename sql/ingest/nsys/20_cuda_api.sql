-- CUDA runtime and driver calls -> store.cuda_api, each with the iteration it ran in.
-- Out: temp table _launches (file_key, file_id, pid, correlation_id, tid, start_ns, iteration):
-- the call that launched each GPU op, joined on correlationId AND process (ids repeat across
-- processes).

CREATE OR REPLACE TEMP TABLE _api AS
SELECT c.file_key, c.run_id, c.file_id, c.rank, c.pid, c.tid, c.start_ns, c.end_ns, s.name,
       c.eventClass, c.correlationId, c.returnValue,
       CASE WHEN c.start_ns < i.end_ns THEN i.iteration END AS iteration
FROM (
    SELECT c.*, c.globalTid & 16777215 AS tid, r.run_id, r.file_id, r.rank, r.pid,
           c.start + r.origin_ns AS start_ns, c."end" + r.origin_ns AS end_ns
    FROM _nsys_runtime c
    JOIN _nsys_ranks r ON r.file_key = c.file_key AND r.pid = (c.globalTid >> 24) & 16777215
) c
-- the name as nsys stats prints it: a `_v` six characters from the end is the 4-digit API
-- version suffix (_v7000, _v3020), cut; _v2, _v10000 and _v2_v12000 stay (cuGetProcAddress and
-- cuGetProcAddress_v2 are different functions). Once per distinct name, not once per call.
LEFT JOIN (SELECT file_key, id, regexp_replace(value, '_v.{4}$', '') AS name FROM _nsys_strings) s
       ON s.file_key = c.file_key AND s.id = c.nameId
ASOF LEFT JOIN _iterations i ON i.file_key = c.file_key AND i.pid = c.pid AND c.start_ns >= i.start_ns;

INSERT INTO store.cuda_api BY NAME
SELECT run_id, rank, file_id, pid, tid,
       start_ns, end_ns, name,
       CASE eventClass WHEN 0 THEN 'runtime' WHEN 1 THEN 'driver' END AS api_kind,
       correlationId AS correlation_id, returnValue AS return_value, iteration
FROM _api;

CREATE OR REPLACE TEMP TABLE _launches AS
SELECT file_key, file_id, pid, correlationId AS correlation_id, arg_min(tid, start_ns) AS tid,
       min(start_ns) AS start_ns, arg_min(iteration, start_ns) AS iteration
FROM _api
WHERE correlationId IS NOT NULL
GROUP BY file_key, file_id, pid, correlationId;
