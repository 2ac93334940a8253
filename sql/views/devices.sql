-- uses: none
-- One row per GPU seen in a source.
CREATE OR REPLACE VIEW devices AS
SELECT
    run_id,
    rank,              -- rank whose kernels ran on it (NULL if none)
    file_id,
    device_id,
    name,
    sm_count,
    total_memory,      -- bytes
    compute_capability,
    bus_location,
    uuid
FROM store.devices;
