-- Ranks -> store.ranks, each with the GPU most of its kernels ran on.
INSERT INTO store.ranks BY NAME
WITH device AS (
    SELECT file_id, pid, mode(device_id) AS device_id FROM store.kernels
    WHERE file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id')
    GROUP BY file_id, pid
)
SELECT r.run_id, r.rank, r.file_id, r.pid,
       r.global_pid AS process_key, r.host, d.device_id, r.rank_source
FROM _nsys_ranks r LEFT JOIN device d USING (file_id, pid);
