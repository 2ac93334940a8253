-- Ranks -> store.ranks, each with the GPU most of its kernels ran on.
INSERT INTO store.ranks BY NAME
WITH device AS (
    SELECT pid, mode(device_id) AS device_id FROM store.kernels
    WHERE file_id = getvariable('file_id') GROUP BY pid
)
SELECT getvariable('run_id') AS run_id, r.rank, getvariable('file_id') AS file_id, r.pid,
       r.global_pid AS process_key, r.host, d.device_id, r.rank_source
FROM _nsys_ranks r LEFT JOIN device d USING (pid);
