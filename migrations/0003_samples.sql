-- 0003: time series sampled beside the job (GPU monitors: free/used memory, utilisation, power),
-- stored long: one row per (sample time, device, measure).
CREATE TABLE store.samples (
    run_id    VARCHAR NOT NULL,
    file_id   BIGINT NOT NULL,
    host      VARCHAR,            -- NULL: the run's only host, or unknown
    device_id INTEGER,            -- GPU index; NULL for host-wide measures
    ts_ns     BIGINT NOT NULL,    -- UTC epoch ns
    metric    VARCHAR NOT NULL,   -- the column name, e.g. 'memory.free [MiB]'
    value     DOUBLE
);
