-- Hardware counters -> _nsys_store_gpu_metrics and _nsys_store_nic_metrics, in UTC epoch ns.
-- GPU_METRICS: one row per sample, device and metric; the device is the low byte of typeId
-- (<HW:8><VM:8><Source:16><Type:32>, the type's low 8 bits the GPU id), the name from
-- TARGET_INFO_GPU_METRICS (typeId, metricId). NET_NIC_METRIC: one row per interval, NIC port
-- and counter; the NIC from NIC_ID_MAP (globalId -> nicId) and TARGET_INFO_NIC_INFO, the
-- counter's name and unit from TARGET_INFO_NETWORK_METRICS (metricsListId, metricsIdx).
-- Link layers as ENUM_NET_LINK_TYPE numbers them (0 Unknown, 1 Ethernet, 2 InfiniBand).
CREATE OR REPLACE TEMP TABLE _nsys_store_gpu_metrics AS
SELECT m.file_key, CAST(m.typeId & 255 AS INTEGER) AS device_id,
       m.timestamp + f.origin_ns AS ts_ns,
       coalesce(n.metricName, 'metric ' || m.metricId) AS metric, m.value
FROM _nsys_gpu_metrics m
JOIN _nsys_files f USING (file_key)
LEFT JOIN _nsys_gpu_metric_names n
    ON n.file_key = m.file_key AND n.typeId = m.typeId AND n.metricId = m.metricId;

CREATE OR REPLACE TEMP TABLE _nsys_store_nic_metrics AS
SELECT m.file_key, nic.name AS nic,
       CASE nic.linkLayer WHEN 1 THEN 'Ethernet' WHEN 2 THEN 'InfiniBand' ELSE 'Unknown' END
           AS link_layer,
       CAST(m.portId AS INTEGER) AS port,
       m.start + f.origin_ns AS start_ns, m."end" + f.origin_ns AS end_ns,
       coalesce(n.name, 'counter ' || m.metricsListId || '.' || m.metricsIdx) AS metric, n.unit,
       m.value
FROM _nsys_nic_metrics m
JOIN _nsys_files f USING (file_key)
LEFT JOIN _nsys_nic_metric_names n ON n.file_key = m.file_key
    AND n.metricsListId = m.metricsListId AND n.metricsIdx = m.metricsIdx
LEFT JOIN (SELECT DISTINCT file_key, globalId, nicId FROM _nsys_nic_ids) i
    ON i.file_key = m.file_key AND i.globalId = m.globalId
LEFT JOIN _nsys_nics nic ON nic.file_key = m.file_key AND nic.nicId = i.nicId;
