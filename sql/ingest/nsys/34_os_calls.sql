-- OS runtime calls (OSRT_API) of the ranks' processes -> store.os_calls, each in the iteration
-- whose host step holds its start. Calls of processes without a rank (data loader workers,
-- helpers) are not stored: nothing ties them to a rank.
INSERT INTO store.os_calls BY NAME
SELECT o.run_id, o.rank, o.file_id, o.pid, o.tid,
       o.start_ns, o.end_ns, s.value AS name, o.returnValue AS return_value,
       o.nestingLevel AS nesting_level,
       CASE WHEN o.start_ns < i.end_ns THEN i.iteration END AS iteration
FROM (SELECT o.*, o.globalTid & 16777215 AS tid, r.run_id, r.file_id, r.rank, r.pid,
             o.start + r.origin_ns AS start_ns, o."end" + r.origin_ns AS end_ns
      FROM _nsys_osrt o
      JOIN _nsys_ranks r ON r.file_key = o.file_key AND r.pid = (o.globalTid >> 24) & 16777215) o
LEFT JOIN _nsys_strings s ON s.file_key = o.file_key AND s.id = o.nameId
ASOF LEFT JOIN _iterations i ON i.file_key = o.file_key AND i.pid = o.pid AND o.start_ns >= i.start_ns;
