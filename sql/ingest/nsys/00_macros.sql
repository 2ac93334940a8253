-- Enum labels of the nsys export (ENUM_CUDA_MEMCPY_OPER, ENUM_CUDA_MEM_KIND), written out
-- because the 2021 export has no ENUM tables. Short copy kinds, as users and nsys 2021 say them.
CREATE OR REPLACE TEMP MACRO nsys_copy_kind(k) AS
    CASE k WHEN 0 THEN 'Unknown' WHEN 1 THEN 'HtoD' WHEN 2 THEN 'DtoH' WHEN 3 THEN 'HtoA'
           WHEN 4 THEN 'AtoH' WHEN 5 THEN 'AtoA' WHEN 6 THEN 'AtoD' WHEN 7 THEN 'DtoA'
           WHEN 8 THEN 'DtoD' WHEN 9 THEN 'HtoH' WHEN 10 THEN 'PtoP' WHEN 11 THEN 'UVM HtoD'
           WHEN 12 THEN 'UVM DtoH' WHEN 13 THEN 'UVM DtoD' END;

CREATE OR REPLACE TEMP MACRO nsys_mem_kind(k) AS
    CASE k WHEN 0 THEN 'Pageable' WHEN 1 THEN 'Pinned' WHEN 2 THEN 'Device' WHEN 3 THEN 'Array'
           WHEN 4 THEN 'Managed' WHEN 5 THEN 'Device Static' WHEN 6 THEN 'Managed Static'
           WHEN 7 THEN 'Unknown' END;

-- nsys_gpu_activity(activity): the rows of a staged GPU activity table (_nsys_kernel,
-- _nsys_memcpy, _nsys_memset) with what every GPU op takes from the host: its process (pid),
-- its UTC times (start_ns, end_ns), the call that launched it (launch_ns: _launches' start,
-- NULL when the file has none) and its iteration: the launching call's, else the host step
-- whose range holds the op's start (_iterations).
CREATE OR REPLACE TEMP MACRO nsys_gpu_activity(activity) AS TABLE
SELECT a.*,
       coalesce(l.iteration, (
           -- no launch call in the file: the host step whose range holds the op's start
           SELECT max(i.iteration) FROM _iterations i
           WHERE l.pid IS NULL AND i.file_key = a.file_key AND i.pid = a.pid AND a.start_ns >= i.start_ns AND a.start_ns < i.end_ns))
           AS iteration,
       l.start_ns AS launch_ns
FROM (
    SELECT o.*, p.pid, o.start + f.origin_ns AS start_ns, o."end" + f.origin_ns AS end_ns
    FROM query_table(activity) o
    JOIN _nsys_processes p ON p.file_key = o.file_key AND p.pid = (o.globalPid >> 24) & 16777215
    JOIN _nsys_files f ON f.file_key = o.file_key
) a
LEFT JOIN _launches l
       ON l.file_key = a.file_key AND l.pid = a.pid AND l.correlation_id = a.correlationId;
