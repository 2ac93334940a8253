-- uses: none
-- Time series sampled beside the job (tracewh ingest --series FILE.csv), one row per sample,
-- device and measure.
CREATE OR REPLACE VIEW samples AS
SELECT
    run_id,
    file_id,
    host,
    device_id,      -- GPU index; NULL for host-wide measures
    ts_ns,          -- UTC epoch ns
    metric,         -- the column it came from, e.g. 'memory.free [MiB]'
    value
FROM store.samples;
