-- uses: none
-- NIC counters sampled by nsys (`nsys profile --nic-metrics`, NET_NIC_METRIC): one row per
-- interval, NIC port and counter ('IB: Bytes sent', 'IB: Bytes received', ...), counted over
-- [start_ns, end_ns). NICs belong to a host, not to a rank.
CREATE OR REPLACE VIEW nic_metrics AS
SELECT
    run_id,
    file_id,
    host,
    nic,              -- mlx5_0, ...
    link_layer,       -- InfiniBand | Ethernet | Unknown
    port,
    start_ns,         -- UTC epoch ns
    end_ns,
    end_ns - start_ns AS dur_ns,
    metric,
    unit,             -- as the export states it (TARGET_INFO_NETWORK_METRICS.unit)
    value
FROM store.nic_metrics;
