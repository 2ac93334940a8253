-- The writer's step for a batch of nsys exports: the rows 05..40 and memory_totals.sql staged
-- in temp tables _nsys_store_<stored table> go into the stored tables, inside the batch's
-- transaction, each process's rows under the run, rank and file_id the writer gave it.
-- In: _nsys_ranks (file_key, pid, global_pid, rank, rank_source, host, run_id, file_id), written
-- by tracewh.ingest.nsys; the rows of a file left out (its ranks clash) find no rank and stay out.

-- A mapped table's rows, each under its process's run, rank and file_id.
CREATE OR REPLACE TEMP MACRO nsys_ranked(mapped) AS TABLE
SELECT r.run_id, r.rank, r.file_id, t.* EXCLUDE (file_key)
FROM query_table(mapped) t JOIN _nsys_ranks r ON r.file_key = t.file_key AND r.pid = t.pid;

-- A file's rows of no process (hardware counters, 36_counters.sql: a device's or a NIC's), under
-- the file's run and host.
CREATE OR REPLACE TEMP MACRO nsys_filed(mapped) AS TABLE
SELECT f.run_id, f.file_id, f.host, t.* EXCLUDE (file_key)
FROM query_table(mapped) t
JOIN (SELECT file_key, any_value(run_id) AS run_id, any_value(file_id) AS file_id,
             any_value(host) AS host FROM _nsys_ranks GROUP BY file_key) f USING (file_key);

-- One INSERT per mapped table _nsys_store_<t>, written from DuckDB's catalog (tracewh.store runs
-- each statement the query returns; the DuckDB shell lists them): a new table needs no line here.
-- A table with a pid holds a process's rows (nsys_ranked), one without a file's (nsys_filed).
SELECT format('INSERT INTO store."{}" BY NAME FROM {}(''{}'')', t.table_name[13:],
              CASE WHEN p.table_name IS NULL THEN 'nsys_filed' ELSE 'nsys_ranked' END,
              t.table_name) AS statement
FROM duckdb_tables() t
LEFT JOIN duckdb_columns() p
       ON p.database_name = 'temp' AND p.table_name = t.table_name AND p.column_name = 'pid'
WHERE t.temporary AND starts_with(t.table_name, '_nsys_store_')
ORDER BY t.table_name;

-- allocator events (nsys/35_memory.sql, totals and pairing by memory_totals.sql)
INSERT INTO store.memory_events BY NAME
SELECT * EXCLUDE (cpu_op_no) FROM nsys_ranked('_staged_memory_events');

-- GPUs: from TARGET_INFO_GPU when the export has it, else the device ids the kernels ran on
-- (name unknown). A device's rank is the rank whose kernels ran on it.
INSERT INTO store.devices BY NAME
WITH used AS (
    SELECT k.file_key, k.device_id, min(r.rank) AS rank
    FROM _nsys_store_kernels k JOIN _nsys_ranks r ON r.file_key = k.file_key AND r.pid = k.pid
    GROUP BY ALL
), files AS (
    SELECT DISTINCT file_key, run_id, file_id FROM _nsys_ranks
)
SELECT f.run_id, u.rank, f.file_id, coalesce(g.id, u.device_id) AS device_id, g.name,
       g.smCount AS sm_count, g.totalMemory AS total_memory,
       g.computeMajor || '.' || g.computeMinor AS compute_capability,
       g.busLocation AS bus_location, g.uuid
FROM _nsys_gpu g
FULL JOIN used u ON u.file_key = g.file_key AND u.device_id = g.id
JOIN files f ON f.file_key = coalesce(g.file_key, u.file_key);

-- ranks, each with the GPU most of its kernels ran on
INSERT INTO store.ranks BY NAME
WITH device AS (
    SELECT file_key, pid, mode(device_id) AS device_id FROM _nsys_store_kernels
    GROUP BY file_key, pid
)
SELECT r.run_id, r.rank, r.file_id, r.pid,
       r.global_pid AS process_key, r.host, d.device_id, r.rank_source
FROM _nsys_ranks r LEFT JOIN device d ON d.file_key = r.file_key AND d.pid = r.pid;
