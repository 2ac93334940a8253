-- GPUs -> store.devices: from TARGET_INFO_GPU when the export has it, else the device ids the
-- kernels ran on (name unknown). A device's rank is the rank whose kernels ran on it.
INSERT INTO store.devices BY NAME
WITH used AS (
    SELECT device_id, min(rank) AS rank FROM store.kernels
    WHERE file_id = getvariable('file_id') GROUP BY device_id
)
SELECT getvariable('run_id') AS run_id, u.rank, getvariable('file_id') AS file_id,
       coalesce(g.id, u.device_id) AS device_id, g.name, g.smCount AS sm_count,
       g.totalMemory AS total_memory, g.computeMajor || '.' || g.computeMinor AS compute_capability,
       g.busLocation AS bus_location, g.uuid
FROM _nsys_gpu g
FULL JOIN used u ON u.device_id = g.id;
