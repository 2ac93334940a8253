-- nsys allocator events (nsys/35_memory.sql, totals by memory_totals.sql) -> store.memory_events,
-- each with the rank of its process.
INSERT INTO store.memory_events BY NAME
SELECT r.run_id, r.rank, r.file_id, m.* EXCLUDE (file_key, cpu_op_no)
FROM _staged_memory_events m JOIN _nsys_ranks r ON r.file_key = m.file_key AND r.pid = m.pid;
