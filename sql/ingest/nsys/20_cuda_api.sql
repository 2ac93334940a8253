-- CUDA runtime and driver calls -> store.cuda_api, each with the iteration it ran in.
-- Out: temp table _launches (pid, correlation_id, tid, start_ns, iteration): the call that
-- launched each GPU op, joined on correlationId AND process (ids repeat across processes).

CREATE OR REPLACE TEMP TABLE _api AS
SELECT r.rank, c.pid, c.tid, c.start_ns, c.end_ns, s.name, c.eventClass, c.correlationId,
       c.returnValue,
       CASE WHEN c.start_ns < i.end_ns THEN i.iteration END AS iteration
FROM (
    SELECT *, (globalTid >> 24) & 16777215 AS pid, globalTid & 16777215 AS tid,
           start + getvariable('origin_ns') AS start_ns, "end" + getvariable('origin_ns') AS end_ns
    FROM _nsys_runtime
) c
JOIN _nsys_ranks r ON r.pid = c.pid
-- the name as nsys stats prints it: a `_v` six characters from the end is the 4-digit API
-- version suffix (_v7000, _v3020), cut; _v2, _v10000 and _v2_v12000 stay (cuGetProcAddress and
-- cuGetProcAddress_v2 are different functions). Once per distinct name, not once per call.
LEFT JOIN (SELECT id, regexp_replace(value, '_v.{4}$', '') AS name FROM _nsys_strings) s
       ON s.id = c.nameId
ASOF LEFT JOIN _iterations i ON i.pid = c.pid AND c.start_ns >= i.start_ns;

INSERT INTO store.cuda_api BY NAME
SELECT getvariable('run_id') AS run_id, rank, getvariable('file_id') AS file_id, pid, tid,
       start_ns, end_ns, name,
       CASE eventClass WHEN 0 THEN 'runtime' WHEN 1 THEN 'driver' END AS api_kind,
       correlationId AS correlation_id, returnValue AS return_value, iteration
FROM _api;

CREATE OR REPLACE TEMP TABLE _launches AS
SELECT pid, correlationId AS correlation_id, arg_min(tid, start_ns) AS tid,
       min(start_ns) AS start_ns, arg_min(iteration, start_ns) AS iteration
FROM _api
WHERE correlationId IS NOT NULL
GROUP BY pid, correlationId;
