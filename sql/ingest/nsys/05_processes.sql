-- The processes of the staged nsys exports that become ranks: every process with CUDA activity
-- (kernels, copies, memsets, API calls), or, in an export of OS runtime calls alone, every
-- process that made one. Every script of this folder maps a batch of exports at once, each
-- export's rows carrying its file_key; _nsys_files (file_key, origin_ns) says what to add to an
-- export's times to get UTC epoch ns (written by tracewh.ingest.nsys). The rows of the other
-- processes (data loader workers, helpers) are not mapped: nothing ties them to a rank.
-- A process's NCCL rank is its rank in the largest communicator its NCCL init ranges (payloads
-- with "No. of ranks" and "Rank": ncclCommInitRank*, ncclCommSplit, ...) name, the first one
-- created when several are as large: the job's world communicator, whose rank is the global rank.
-- Out: temp table _nsys_processes (file_key, pid, global_pid, nccl_rank), which
-- tracewh.ingest.nsys numbers as ranks (_nsys_ranks) and store.sql joins on.
CREATE OR REPLACE TEMP TABLE _nsys_processes AS
WITH cuda AS (
    SELECT file_key, (gpid >> 24) & 16777215 AS pid, max(gpid) AS global_pid FROM (
        SELECT DISTINCT file_key, globalPid AS gpid FROM _nsys_kernel
        UNION ALL SELECT DISTINCT file_key, globalPid FROM _nsys_memcpy
        UNION ALL SELECT DISTINCT file_key, globalPid FROM _nsys_memset
        UNION ALL SELECT DISTINCT file_key, (globalTid >> 24) << 24 FROM _nsys_runtime)
    GROUP BY file_key, pid
), processes AS (
    SELECT * FROM cuda
    UNION ALL
    SELECT file_key, (globalTid >> 24) & 16777215 AS pid, max((globalTid >> 24) << 24)
    FROM _nsys_osrt
    WHERE file_key NOT IN (SELECT file_key FROM cuda)
    GROUP BY file_key, pid
), nccl AS (
    SELECT file_key, pid, first(comm_rank ORDER BY nranks DESC, start, range_id) AS nccl_rank
    FROM _nsys_payload
    WHERE nranks > 0 AND comm_rank >= 0 AND comm_rank < nranks
    GROUP BY file_key, pid
)
SELECT p.file_key, p.pid, p.global_pid, n.nccl_rank
FROM processes p LEFT JOIN nccl n USING (file_key, pid);
