-- OS runtime calls (OSRT_API) of the ranks' processes -> _nsys_store_os_calls, each in the
-- iteration whose host step holds its start.
CREATE OR REPLACE TEMP TABLE _nsys_store_os_calls AS
SELECT o.file_key, o.pid, o.tid,
       o.start_ns, o.end_ns, s.value AS name, o.returnValue AS return_value,
       o.nestingLevel AS nesting_level,
       CASE WHEN o.start_ns < i.end_ns THEN i.iteration END AS iteration
FROM (SELECT o.*, o.globalTid & 16777215 AS tid, p.pid,
             o.start + f.origin_ns AS start_ns, o."end" + f.origin_ns AS end_ns
      FROM _nsys_osrt o
      JOIN _nsys_processes p ON p.file_key = o.file_key AND p.pid = (o.globalTid >> 24) & 16777215
      JOIN _nsys_files f ON f.file_key = o.file_key) o
LEFT JOIN _nsys_strings s ON s.file_key = o.file_key AND s.id = o.nameId
ASOF LEFT JOIN _iterations i ON i.file_key = o.file_key AND i.pid = o.pid AND o.start_ns >= i.start_ns;
