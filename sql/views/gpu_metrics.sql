-- uses: ranks
-- GPU counters sampled by nsys (`nsys profile --gpu-metrics-devices`, GPU_METRICS): one row per
-- sample, GPU and metric, with the rank whose kernels ran on that GPU. Throughput metrics
-- ('[Throughput %]') are the percentage of the unit's peak over the interval ending at ts_ns;
-- clocks are in the unit of their name ('GPC Clock Frequency [MHz]').
CREATE OR REPLACE VIEW gpu_metrics AS
SELECT
    g.run_id,
    k.rank,           -- NULL: no rank ran on this GPU
    g.file_id,
    g.host,
    g.device_id,      -- nsys GPU id (= devices.device_id)
    g.ts_ns,          -- UTC epoch ns, the end of the sample's interval
    g.metric,         -- 'SMs Active [Throughput %]', 'NVLink TX Responses User Data [Throughput %]', ...
    g.value
FROM store.gpu_metrics g
LEFT JOIN ranks k ON k.run_id = g.run_id AND k.file_id = g.file_id AND k.device_id = g.device_id;
