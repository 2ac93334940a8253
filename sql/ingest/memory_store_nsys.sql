-- nsys allocator events (nsys/35_memory.sql, totals by memory_totals.sql) -> store.memory_events,
-- each with the rank of its process.
INSERT INTO store.memory_events BY NAME
SELECT getvariable('run_id') AS run_id, r.rank, getvariable('file_id') AS file_id,
       m.* EXCLUDE (cpu_op_no)
FROM _staged_memory_events m JOIN _nsys_ranks r ON r.pid = m.pid;
