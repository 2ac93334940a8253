-- 0019: hardware counters of nsys exports (issue 34 item 3). GPU metrics sampled by
-- `nsys profile --gpu-metrics-devices` (GPU_METRICS + TARGET_INFO_GPU_METRICS: SM and tensor
-- activity, DRAM, NVLink and PCIe throughput, clocks) and NIC counters sampled by
-- `--nic-metrics` (NET_NIC_METRIC + TARGET_INFO_NETWORK_METRICS, NIC_ID_MAP,
-- TARGET_INFO_NIC_INFO: InfiniBand / Ethernet bytes and packets). They belong to a device or a
-- NIC of a host, not to a process: rows carry the file and host, the views add the rank.
-- (Branch links36: numbered gap-free here; the lead renumbers at merge.)
CREATE TABLE store.gpu_metrics (
    run_id     VARCHAR NOT NULL,
    file_id    BIGINT NOT NULL,
    host       VARCHAR,
    device_id  INTEGER NOT NULL,   -- nsys GPU id (typeId & 0xFF) = TARGET_INFO_GPU.id
    ts_ns      BIGINT NOT NULL,    -- UTC epoch ns: the end of the sample's interval
    metric     VARCHAR NOT NULL,   -- as nsys names it: 'SMs Active [Throughput %]', ...
    value      DOUBLE NOT NULL
);
CREATE TABLE store.nic_metrics (
    run_id     VARCHAR NOT NULL,
    file_id    BIGINT NOT NULL,
    host       VARCHAR,
    nic        VARCHAR,            -- TARGET_INFO_NIC_INFO.name, e.g. mlx5_0
    link_layer VARCHAR,            -- InfiniBand | Ethernet | Unknown
    port       INTEGER,
    start_ns   BIGINT NOT NULL,    -- UTC epoch ns: the sample's interval
    end_ns     BIGINT NOT NULL,
    metric     VARCHAR NOT NULL,   -- 'IB: Bytes sent', 'IB: Bytes received', ...
    unit       VARCHAR,
    value      DOUBLE NOT NULL     -- counted over the interval
);
