-- GPUs -> store.devices: from TARGET_INFO_GPU when the export has it, else the device ids the
-- kernels ran on (name unknown). A device's rank is the rank whose kernels ran on it.
INSERT INTO store.devices BY NAME
WITH used AS (
    SELECT run_id, file_id, device_id, min(rank) AS rank FROM store.kernels
    WHERE file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id')
    GROUP BY ALL
), gpus AS (
    SELECT f.run_id, f.file_id, g.*
    FROM _nsys_gpu g JOIN (SELECT DISTINCT file_key, run_id, file_id FROM _nsys_ranks) f USING (file_key)
)
SELECT coalesce(g.run_id, u.run_id) AS run_id, u.rank, coalesce(g.file_id, u.file_id) AS file_id,
       coalesce(g.id, u.device_id) AS device_id, g.name, g.smCount AS sm_count,
       g.totalMemory AS total_memory, g.computeMajor || '.' || g.computeMinor AS compute_capability,
       g.busLocation AS bus_location, g.uuid
FROM gpus g
FULL JOIN used u ON u.file_id = g.file_id AND u.device_id = g.id;
