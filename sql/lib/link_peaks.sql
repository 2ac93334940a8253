-- uses: device_peaks, ranks, run_hardware
-- link_peaks(), version 1: the peak data rate of the links that carry collectives, per GPU and per
-- direction, in GB/s (10^9 bytes/s), each row with its source. This is the unit of nccl-tests'
-- bus bandwidth (doc/PERFORMANCE.md: "busbw ... reflects how optimally the hardware is used"):
-- a ring AllReduce at full speed moves busbw bytes per second through each GPU's slowest link.
--   NVLink: the GPU's total NVLink bandwidth in one direction (half the bidirectional figure
--   the datasheets print). PCIe: an x16 slot, one direction, after line encoding.
--   InfiniBand, RoCE, EFA: one NIC per GPU (rail-optimised nodes: DGX, HGX, AWS p4d/p5), its
--   line rate in one direction.
-- A link name (a workload card's workload.hardware.interconnect, a metric's intra_node_link /
-- inter_node_link parameter) matches the first row, by `priority`, whose `pattern` it matches
-- (ILIKE). Editing a row changes every metric that reads it: raise the version and say so.
-- A table macro, not a view: views are per-run data (the Parquet lake partitions them by run).
-- Shell: SELECT * FROM link_peaks();
CREATE OR REPLACE MACRO link_peaks() AS TABLE
SELECT
    1 AS table_version,
    link,             -- key
    kind,             -- NVLink, PCIe, InfiniBand, RoCE, EFA
    scope,            -- intra-node (GPU to GPU in one host) or inter-node (host to host)
    pattern,          -- ILIKE pattern over link names
    priority,         -- first match wins
    CAST(gbps AS DOUBLE) AS gbps,  -- GB/s per GPU, one direction
    source
FROM (VALUES
    ('NVLink 2', 'NVLink', 'intra-node', '%NVLink%2%', 10, 150.0,
     'NVIDIA Tesla V100 datasheet: NVLink 300 GB/s (bidirectional; 6 links x 25 GB/s per direction)'),
    ('NVLink 3', 'NVLink', 'intra-node', '%NVLink%3%', 11, 300.0,
     'NVIDIA A100 datasheet: NVLink 600 GB/s (bidirectional; 12 links x 25 GB/s per direction)'),
    ('NVLink 4', 'NVLink', 'intra-node', '%NVLink%4%', 12, 450.0,
     'NVIDIA H100 datasheet (SXM column): NVLink 900 GB/s (bidirectional; 18 links)'),
    ('NVLink 4 bridge (H100 NVL)', 'NVLink', 'intra-node', '%NVLink%bridge%', 9, 300.0,
     'NVIDIA H100 datasheet (H100 NVL column): NVLink bridge 600 GB/s (bidirectional)'),
    ('NVLink 5', 'NVLink', 'intra-node', '%NVLink%5%', 13, 900.0,
     'NVIDIA Blackwell datasheet (HGX B200): fifth-generation NVLink 1.8 TB/s per GPU (bidirectional)'),
    ('PCIe Gen3 x16', 'PCIe', 'intra-node', '%PCIe%3%', 20, 15.75,
     'PCI-SIG PCIe 3.0: 8 GT/s per lane, 128b/130b encoding: 16 lanes = 15.75 GB/s per direction'),
    ('PCIe Gen4 x16', 'PCIe', 'intra-node', '%PCIe%4%', 21, 31.5,
     'PCI-SIG PCIe 4.0: 16 GT/s per lane, 128b/130b encoding: 16 lanes = 31.5 GB/s per direction'),
    ('PCIe Gen5 x16', 'PCIe', 'intra-node', '%PCIe%5%', 22, 63.0,
     'PCI-SIG PCIe 5.0: 32 GT/s per lane, 128b/130b encoding: 16 lanes = 63 GB/s per direction'),
    ('InfiniBand EDR', 'InfiniBand', 'inter-node', '%EDR%', 30, 12.5,
     'InfiniBand Trade Association roadmap: EDR 4x = 100 Gb/s per port'),
    ('InfiniBand HDR', 'InfiniBand', 'inter-node', '%HDR%', 31, 25.0,
     'InfiniBand Trade Association roadmap: HDR 4x = 200 Gb/s per port'),
    ('InfiniBand NDR', 'InfiniBand', 'inter-node', '%NDR%', 32, 50.0,
     'InfiniBand Trade Association roadmap: NDR 4x = 400 Gb/s per port (NVIDIA ConnectX-7)'),
    ('InfiniBand XDR', 'InfiniBand', 'inter-node', '%XDR%', 33, 100.0,
     'InfiniBand Trade Association roadmap: XDR 4x = 800 Gb/s per port (NVIDIA ConnectX-8)'),
    ('RoCE 100GbE', 'RoCE', 'inter-node', '%RoCE%100%', 40, 12.5,
     'IEEE 802.3 100 Gb/s Ethernet line rate (RDMA over Converged Ethernet)'),
    ('RoCE 200GbE', 'RoCE', 'inter-node', '%RoCE%200%', 41, 25.0,
     'IEEE 802.3 200 Gb/s Ethernet line rate (RDMA over Converged Ethernet)'),
    ('RoCE 400GbE', 'RoCE', 'inter-node', '%RoCE%400%', 42, 50.0,
     'IEEE 802.3 400 Gb/s Ethernet line rate (RDMA over Converged Ethernet)'),
    ('RoCE 800GbE', 'RoCE', 'inter-node', '%RoCE%800%', 43, 100.0,
     'IEEE 802.3 800 Gb/s Ethernet line rate (RDMA over Converged Ethernet)'),
    ('EFA p4d', 'EFA', 'inter-node', '%EFA%p4%', 50, 6.25,
     'AWS EC2 P4d: 400 Gbps EFA per instance of 8 A100 = 50 Gb/s per GPU'),
    ('EFA p5', 'EFA', 'inter-node', '%EFA%p5%', 51, 50.0,
     'AWS EC2 P5: 3200 Gbps EFA (v2) per instance of 8 H100 = 400 Gb/s per GPU'),
    ('EFA p6', 'EFA', 'inter-node', '%EFA%p6%', 52, 50.0,
     'AWS EC2 P6-B200: 3200 Gbps EFA (v4) per instance of 8 B200 = 400 Gb/s per GPU')
) AS p(link, kind, scope, pattern, priority, gbps, source);


-- gpu_links(), version 1: the link that joins GPUs of one model inside a host (NVLink
-- generation, or PCIe for cards without NVLink), matched to a device name like device_peaks
-- (first row by priority whose pattern the name matches, ILIKE).
-- `link` is what joins two GPUs of the host (NVLink, or PCIe without it); `pcie` the GPU's own
-- host interface (what nsys' PCIe counters measure).
CREATE OR REPLACE MACRO gpu_links() AS TABLE
SELECT 1 AS table_version, device, pattern, priority, link, pcie, source
FROM (VALUES
    ('V100 PCIe', '%V100%PCIe%', 10, 'PCIe Gen3 x16', 'PCIe Gen3 x16', 'NVIDIA Tesla V100 datasheet (PCIe column: PCIe Gen3)'),
    ('V100 SXM2', '%V100%', 11, 'NVLink 2', 'PCIe Gen3 x16', 'NVIDIA Tesla V100 datasheet (SXM2 column: NVLink 300 GB/s, PCIe Gen3)'),
    ('A100 PCIe', '%A100%PCIe%', 20, 'PCIe Gen4 x16', 'PCIe Gen4 x16', 'NVIDIA A100 datasheet (PCIe column: PCIe Gen4)'),
    ('A100 SXM', '%A100%', 21, 'NVLink 3', 'PCIe Gen4 x16', 'NVIDIA A100 datasheet (SXM column: NVLink 600 GB/s, PCIe Gen4)'),
    ('H100 PCIe', '%H100%PCIe%', 30, 'PCIe Gen5 x16', 'PCIe Gen5 x16', 'NVIDIA H100 datasheet (PCIe column: PCIe Gen5)'),
    ('H100 NVL', '%H100 NVL%', 31, 'NVLink 4 bridge (H100 NVL)', 'PCIe Gen5 x16', 'NVIDIA H100 datasheet (H100 NVL column: NVLink bridge 600 GB/s, PCIe Gen5)'),
    ('H100 SXM', '%H100%', 32, 'NVLink 4', 'PCIe Gen5 x16', 'NVIDIA H100 datasheet (SXM column: NVLink 900 GB/s, PCIe Gen5)'),
    ('H200 SXM', '%H200%', 40, 'NVLink 4', 'PCIe Gen5 x16', 'NVIDIA H200 datasheet (SXM column: NVLink 900 GB/s, PCIe Gen5)'),
    ('GB200', '%GB200%', 50, 'NVLink 5', NULL, 'NVIDIA GB200 NVL72 datasheet: NVLink 1.8 TB/s per GPU (its CPU link is NVLink-C2C, not PCIe)'),
    ('B200', '%B200%', 51, 'NVLink 5', 'PCIe Gen5 x16', 'NVIDIA Blackwell datasheet (HGX B200): NVLink 1.8 TB/s per GPU, PCIe Gen5'),
    ('L40S', '%L40S%', 60, 'PCIe Gen4 x16', 'PCIe Gen4 x16', 'NVIDIA L40S datasheet: PCIe Gen4 x16, no NVLink')
) AS g(device, pattern, priority, link, pcie, source);


-- rank_links(intra_param, inter_param): per rank and scope (intra-node, inter-node), the link
-- and its peak. The link comes from, in order: the parameter (intra_param / inter_param: a
-- link_peaks name, or a number of GB/s), the run's workload card (workload.hardware.interconnect:
-- a mapping with intra_node / inter_node, or scale_up / scale_out; or one name, which applies to
-- the scope of the link it names), and for intra-node links the GPU model (gpu_links, on the
-- device name as rank_device_peaks finds it). A name that matches no row, or no name at all,
-- gives a NULL peak and says why in link_reason: never a guess. The trace never says which
-- network joins the hosts, so an inter-node link is known only when given.
-- Output: run_id, rank, scope, link, gbps, link_source, peak_source, link_reason.
CREATE OR REPLACE MACRO rank_links(intra_param, inter_param) AS TABLE
WITH devices_named AS (
    SELECT run_id, rank, device_name FROM rank_device_peaks(NULL)
),
card AS (
    SELECT run_id, CAST(interconnect AS JSON) AS ic FROM run_hardware
),
given AS (  -- every name given for a rank, with its preference (1 first)
    SELECT d.run_id, d.rank, s.scope, s.given, s.link_source, s.preference
    FROM devices_named d
    LEFT JOIN card c USING (run_id)
    CROSS JOIN LATERAL (VALUES
        ('intra-node', CAST(intra_param AS VARCHAR), 'parameter', 1),
        ('inter-node', CAST(inter_param AS VARCHAR), 'parameter', 1),
        ('intra-node', coalesce(c.ic->>'$.intra_node', c.ic->>'$.scale_up'), 'workload card', 2),
        ('inter-node', coalesce(c.ic->>'$.inter_node', c.ic->>'$.scale_out'), 'workload card', 2),
        (NULL, CASE WHEN json_type(c.ic) = 'VARCHAR' THEN c.ic->>'$' END, 'workload card', 3)
    ) s(scope, given, link_source, preference)
    WHERE s.given IS NOT NULL
    UNION ALL
    SELECT d.run_id, d.rank, 'intra-node', g.link, 'GPU model (' || g.device || ')', 4
    FROM devices_named d JOIN gpu_links() g ON d.device_name ILIKE g.pattern
    QUALIFY row_number() OVER (PARTITION BY d.run_id, d.rank ORDER BY g.priority) = 1
),
named AS (  -- each name as a link_peaks row, or as a number of GB/s
    SELECT g.run_id, g.rank, coalesce(g.scope, p.scope) AS scope, g.given, g.link_source,
           g.preference, TRY_CAST(g.given AS DOUBLE) AS number, p.link, p.gbps, p.source
    FROM given g
    LEFT JOIN link_peaks() p ON TRY_CAST(g.given AS DOUBLE) IS NULL AND g.given ILIKE p.pattern
    QUALIFY row_number() OVER (PARTITION BY g.run_id, g.rank, g.scope, g.preference, g.given
                               ORDER BY p.priority NULLS LAST) = 1
),
picked AS (  -- the most trusted name of each scope, known or not
    SELECT * FROM named
    WHERE scope IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY run_id, rank, scope ORDER BY preference) = 1
)
SELECT d.run_id, d.rank, s.scope,
       CASE WHEN p.number > 0 THEN p.given || ' GB/s (given)' ELSE p.link END AS link,
       CASE WHEN p.number > 0 THEN p.number ELSE p.gbps END AS gbps,
       p.link_source,
       CASE WHEN p.number > 0 THEN 'given as a number' ELSE p.source END AS peak_source,
       CASE WHEN p.given IS NULL AND s.scope = 'inter-node'
                THEN 'inter-node link unknown: the trace does not say which network joins the hosts '
                     || '(give workload.hardware.interconnect.inter_node in the workload card, or '
                     || '--param inter_node_link=NAME or GB/s)'
            WHEN p.given IS NULL AND d.device_name IS NULL
                THEN 'intra-node link unknown: the trace names no GPU (give '
                     || 'workload.hardware.interconnect.intra_node, or --param intra_node_link=NAME or GB/s)'
            WHEN p.given IS NULL
                THEN 'intra-node link unknown: device ''' || d.device_name || ''' is not in gpu_links '
                     || '(version ' || (SELECT max(table_version) FROM gpu_links()) || ')'
            WHEN p.number <= 0 OR (p.number IS NULL AND p.link IS NULL)
                THEN 'link ''' || p.given || ''' (' || p.link_source || ') is not in link_peaks (version '
                     || (SELECT max(table_version) FROM link_peaks()) || ')'
       END AS link_reason
FROM devices_named d
CROSS JOIN (VALUES ('intra-node'), ('inter-node')) s(scope)
LEFT JOIN picked p ON p.run_id = d.run_id AND p.rank = d.rank AND p.scope = s.scope;


-- link_hosts(): per run, whether its trace names the hosts, and the GPUs per node its workload
-- card gives (workload.hardware.xpu_spec.count_per_node), to place ranks the trace does not.
CREATE OR REPLACE MACRO link_hosts() AS TABLE
SELECT r.run_id, r.gpus_per_node, coalesce(h.named, false) AS hosts_named
FROM run_hardware r
LEFT JOIN (SELECT run_id, bool_or(nullif(host, '') IS NOT NULL) AS named FROM ranks GROUP BY run_id) h
    USING (run_id);
