-- metric: link_utilization
-- version: 1
-- summary: NVLink, PCIe and NIC (InfiniBand / Ethernet) throughput from the hardware counters nsys sampled, against each link's peak
-- unit: percent, GB/s
-- grain: run_id, host, device, counter
-- columns: run_id VARCHAR, host VARCHAR, rank INTEGER, device VARCHAR, counter VARCHAR, source VARCHAR, link VARCHAR, direction VARCHAR, samples BIGINT, mean_pct DOUBLE, max_pct DOUBLE, mean_gbps DOUBLE, max_gbps DOUBLE, peak_link VARCHAR, peak_gbps DOUBLE, reason VARCHAR
-- params: run (text, optional), rank (int, optional), start_ns (int, optional), end_ns (int, optional), inter_node_link (text, optional)
-- see: nsys GPU Metrics (--gpu-metrics-devices) and NIC metrics (--nic-metrics); issue 34 item 3
-- uses: device_peaks, gpu_metrics, link_peaks, nic_metrics, ranks, scope
-- complexity: O(n log n) in counter samples (one window sort per GPU and counter; hash aggregates)
-- show: counter, rank, mean_pct, max_pct, mean_gbps, link, reason, host, run_id
--
-- One row per link counter of a GPU or NIC port, over the samples whose interval ends in the
-- window (start_ns / end_ns, UTC ns):
--   GPU counters (gpu_metrics: 'NVLink RX/TX ... [Throughput %]', 'PCIe RX/TX Throughput
--   [Throughput %]'): each sample is the percentage of the link's peak over the interval since
--   the GPU's previous sample of it; mean_pct is the time-weighted mean (the first sample,
--   with no interval, only counts in max_pct), gbps = pct / 100 x the link's peak per direction
--   (link_peaks: the GPU model's NVLink generation, or its PCIe generation, from gpu_links).
--   NIC counters (nic_metrics, those counting bytes: 'IB: Bytes sent', 'IB: Bytes received'):
--   each interval's bytes / its length; mean_gbps = all bytes / all time, against the host's
--   network link (inter_node_link, or the workload card's workload.hardware.interconnect; the
--   trace does not name it).
-- direction: RX (into the GPU or host) or TX. rank filters GPU rows to that rank's GPU and NIC
-- rows to its host. Unknown peaks leave the percentages (NIC) or the GB/s (GPU) NULL, and
-- `reason` says why.
SELECT * FROM (
WITH gpu_samples AS (
    SELECT run_id, rank, host, device_id, metric, ts_ns, value,
           ts_ns - lag(ts_ns) OVER (PARTITION BY file_id, device_id, metric ORDER BY ts_ns) AS interval_ns
    FROM gpu_metrics
    WHERE regexp_matches(metric, '^(NVLink|PCIe) .*\b(RX|TX)\b.*\[Throughput %\]$')
      AND scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
),
gpu_rows AS (
    SELECT run_id, host, rank, CAST(device_id AS VARCHAR) AS device, metric AS counter,
           'GPU_METRICS' AS source,
           regexp_extract(metric, '^(NVLink|PCIe)', 1) AS link,
           regexp_extract(metric, '\b(RX|TX)\b', 1) AS direction,
           count(*) AS samples,
           sum(value * interval_ns) / sum(interval_ns) AS mean_pct,
           max(value) AS max_pct
    FROM gpu_samples
    WHERE window_overlaps(ts_ns, ts_ns, getvariable('start_ns'), getvariable('end_ns'))
    GROUP BY ALL
),
gpu_peaks AS (  -- each rank's GPU: its NVLink and PCIe, by model
    SELECT d.run_id, d.rank, d.device_name, k.kind AS link, p.link AS peak_link, p.gbps
    FROM rank_device_peaks(NULL) d
    CROSS JOIN (VALUES ('NVLink'), ('PCIe')) k(kind)
    LEFT JOIN gpu_links() g ON d.device_name ILIKE g.pattern
    LEFT JOIN link_peaks() p
        ON p.link = CASE k.kind WHEN 'PCIe' THEN g.pcie ELSE g.link END AND p.kind = k.kind
    QUALIFY row_number() OVER (PARTITION BY d.run_id, d.rank, k.kind ORDER BY g.priority NULLS LAST) = 1
),
nic_rows AS (
    SELECT run_id, host, NULL::INTEGER AS rank, nic || ':' || port AS device, metric AS counter,
           'NET_NIC_METRIC' AS source, link_layer AS link,
           CASE WHEN regexp_matches(metric, '(?i)sent|xmit|transmit|\btx\b') THEN 'TX' ELSE 'RX' END
               AS direction,
           count(*) AS samples,
           sum(value) / sum(dur_ns) AS mean_gbps,
           max(value / nullif(dur_ns, 0)) AS max_gbps
    FROM nic_metrics n
    WHERE regexp_matches(metric, '(?i)bytes')
      AND run_match(run_id, getvariable('run'))
      AND (getvariable('rank') IS NULL OR host IN (
          SELECT host FROM ranks k WHERE k.run_id = n.run_id AND k.rank = CAST(getvariable('rank') AS INTEGER)))
      AND window_overlaps(end_ns, end_ns, getvariable('start_ns'), getvariable('end_ns'))
    GROUP BY ALL
),
host_links AS (  -- the network of each host: the slowest inter-node link named for its ranks
    SELECT k.run_id, k.host,
           CASE WHEN count(l.gbps) = count(*) THEN arg_min(l.link, l.gbps) END AS peak_link,
           CASE WHEN count(l.gbps) = count(*) THEN min(l.gbps) END AS gbps,
           min(l.link_reason) AS link_reason
    FROM ranks k
    JOIN rank_links(NULL, getvariable('inter_node_link')) l
        ON l.run_id = k.run_id AND l.rank = k.rank AND l.scope = 'inter-node'
    GROUP BY k.run_id, k.host
)
SELECT
    g.run_id,
    g.host,
    g.rank,                   -- the rank on this GPU (NULL for a NIC)
    g.device,                 -- GPU id, or NIC:port
    g.counter,                -- the counter as nsys names it
    g.source,                 -- GPU_METRICS | NET_NIC_METRIC
    g.link,                   -- NVLink | PCIe | InfiniBand | Ethernet
    g.direction,              -- RX | TX
    g.samples,
    g.mean_pct,               -- time-weighted mean, % of the link's peak
    g.max_pct,
    g.mean_pct / 100 * p.gbps AS mean_gbps,   -- GB/s
    g.max_pct / 100 * p.gbps AS max_gbps,
    p.peak_link,              -- the link_peaks row
    p.gbps AS peak_gbps,      -- GB/s per direction
    CASE WHEN p.gbps IS NULL AND p.device_name IS NULL THEN 'the GPU''s model is unknown: GB/s need its peak'
         WHEN p.gbps IS NULL
             THEN 'no ' || g.link || ' peak for ''' || p.device_name || ''' in gpu_links (version '
                  || (SELECT max(table_version) FROM gpu_links()) || '): GB/s unknown'
    END AS reason
FROM gpu_rows g
LEFT JOIN gpu_peaks p ON p.run_id = g.run_id AND p.rank IS NOT DISTINCT FROM g.rank AND p.link = g.link
UNION ALL
SELECT
    n.run_id, n.host, n.rank, n.device, n.counter, n.source, n.link, n.direction, n.samples,
    n.mean_gbps / h.gbps * 100 AS mean_pct,
    n.max_gbps / h.gbps * 100 AS max_pct,
    n.mean_gbps, n.max_gbps, h.peak_link, h.gbps AS peak_gbps,
    CASE WHEN h.gbps IS NULL THEN coalesce(h.link_reason, 'no rank ran on this host: its network link is unknown')
    END AS reason
FROM nic_rows n
LEFT JOIN host_links h ON h.run_id = n.run_id AND h.host IS NOT DISTINCT FROM n.host
)
ORDER BY run_id, host NULLS FIRST, source, device, counter;
