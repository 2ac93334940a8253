-- GPUs -> store.devices: from TARGET_INFO_GPU when the export has it, else the device ids the
-- kernels ran on (name unknown). A device's rank is the rank whose kernels ran on it.
INSERT INTO store.devices
WITH used AS (
    SELECT device_id, min(rank) AS rank FROM store.kernels
    WHERE file_id = getvariable('file_id') GROUP BY device_id
)
SELECT getvariable('run_id'), u.rank, getvariable('file_id'), coalesce(g.id, u.device_id),
       g.name, g.smCount, g.totalMemory, g.computeMajor || '.' || g.computeMinor,
       g.busLocation, g.uuid
FROM _nsys_gpu g
FULL JOIN used u ON u.device_id = g.id;
