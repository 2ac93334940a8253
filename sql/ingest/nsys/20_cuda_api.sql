-- CUDA runtime and driver calls -> store.cuda_api, each with the iteration it ran in.
-- Out: temp table _launches (pid, correlation_id, tid, start_ns, iteration): the call that
-- launched each GPU op, joined on correlationId AND process (ids repeat across processes).

INSERT INTO store.cuda_api
SELECT getvariable('run_id'), r.rank, getvariable('file_id'), c.pid, c.tid, c.start_ns, c.end_ns,
       regexp_replace(s.value, '_v[0-9]+$', ''),
       CASE c.eventClass WHEN 0 THEN 'runtime' WHEN 1 THEN 'driver' END,
       c.correlationId, c.returnValue,
       CASE WHEN c.start_ns < i.end_ns THEN i.iteration END
FROM (
    SELECT *, (globalTid >> 24) & 16777215 AS pid, globalTid & 16777215 AS tid,
           start + getvariable('origin_ns') AS start_ns, "end" + getvariable('origin_ns') AS end_ns
    FROM _nsys_runtime
) c
JOIN _nsys_ranks r ON r.pid = c.pid
LEFT JOIN _nsys_strings s ON s.id = c.nameId
ASOF LEFT JOIN _iterations i ON i.pid = c.pid AND c.start_ns >= i.start_ns;

CREATE OR REPLACE TEMP TABLE _launches AS
SELECT pid, correlation_id, arg_min(tid, start_ns) AS tid, min(start_ns) AS start_ns,
       arg_min(iteration, start_ns) AS iteration
FROM store.cuda_api
WHERE file_id = getvariable('file_id') AND correlation_id IS NOT NULL
GROUP BY pid, correlation_id;
