-- uses: none
-- What the collective metrics share of nccl-tests' arithmetic (doc/PERFORMANCE.md): the bus
-- factor that turns algorithm bandwidth into bus bandwidth, and the message size buckets
-- (binary units, upper bound exclusive; 9 = size unknown).
CREATE OR REPLACE MACRO bus_factor(collective, n) AS
    CASE WHEN collective = 'AllReduce' THEN 2.0 * (n - 1) / n
         WHEN collective IN ('AllGather', 'ReduceScatter', 'AllToAll') THEN (n - 1) * 1.0 / n
         ELSE 1.0 END;

CREATE OR REPLACE MACRO size_bucket_order(full_bytes) AS
    CASE WHEN full_bytes IS NULL THEN 9
         WHEN full_bytes < 128 THEN 1 WHEN full_bytes < 1024 THEN 2
         WHEN full_bytes < 8192 THEN 3 WHEN full_bytes < 65536 THEN 4
         WHEN full_bytes < 262144 THEN 5 WHEN full_bytes < 1048576 THEN 6
         WHEN full_bytes < 33554432 THEN 7 ELSE 8 END;

CREATE OR REPLACE MACRO size_bucket_name(bucket_order) AS
    ['<128B', '128B-1K', '1K-8K', '8K-64K', '64K-256K', '256K-1M', '1M-32M', '>=32M', 'unknown'][bucket_order];
