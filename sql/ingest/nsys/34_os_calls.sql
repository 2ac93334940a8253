-- OS runtime calls (OSRT_API) of the ranks' processes -> store.os_calls, each in the iteration
-- whose host step holds its start. Calls of processes without a rank (data loader workers,
-- helpers) are not stored: nothing ties them to a rank.
INSERT INTO store.os_calls BY NAME
SELECT getvariable('run_id') AS run_id, r.rank, getvariable('file_id') AS file_id, o.pid, o.tid,
       o.start_ns, o.end_ns, s.value AS name, o.returnValue AS return_value,
       o.nestingLevel AS nesting_level,
       CASE WHEN o.start_ns < i.end_ns THEN i.iteration END AS iteration
FROM (SELECT *, (globalTid >> 24) & 16777215 AS pid, globalTid & 16777215 AS tid,
             start + getvariable('origin_ns') AS start_ns, "end" + getvariable('origin_ns') AS end_ns
      FROM _nsys_osrt) o
JOIN _nsys_ranks r ON r.pid = o.pid
LEFT JOIN _nsys_strings s ON s.id = o.nameId
ASOF LEFT JOIN _iterations i ON i.pid = o.pid AND o.start_ns >= i.start_ns;
