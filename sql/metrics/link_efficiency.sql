-- metric: link_efficiency
-- version: 1
-- summary: Bus bandwidth of each process group per message size against the peak of its bottleneck link (NVLink, PCIe, InfiniBand, RoCE, EFA)
-- unit: GB/s, percent
-- grain: run_id, pg_name, collective, size_bucket
-- columns: run_id VARCHAR, pg_name VARCHAR, collective VARCHAR, size_bucket VARCHAR, bucket_order INTEGER, ranks VARCHAR, hosts BIGINT, scope VARCHAR, host_source VARCHAR, collectives BIGINT, total_bytes BIGINT, busbw_p50_gbps DOUBLE, busbw_max_gbps DOUBLE, link VARCHAR, peak_gbps DOUBLE, efficiency_pct DOUBLE, link_source VARCHAR, peak_source VARCHAR, reason VARCHAR
-- params: run (text, optional), collective (text, optional), iteration_from (int, optional), iteration_to (int, optional), start_ns (int, optional), end_ns (int, optional), intra_node_link (text, optional), inter_node_link (text, optional)
-- see: nccl-tests doc/PERFORMANCE.md (busbw against the hardware peak); nsys-ai#138 (PCIe vs NVLink)
-- uses: collective_ops, collective_sizes, link_peaks, ranks
-- complexity: O(n) in NCCL ops (hash aggregates and joins on keys; ranks and links are few)
-- show: collective, size_bucket, busbw_p50_gbps, peak_gbps, efficiency_pct, link, reason, run_id
--
-- Each collective counts once, matched across ranks by op_key (a send or receive is its own
-- rank's operation), with busbw as collective_bandwidth computes it (full_bytes / the shortest
-- duration over its ranks x the bus factor). Per (run, process group, collective, size bucket):
--   ranks, hosts  the group's ranks (Process Group Ranks, else those seen) and the hosts they ran
--                 on: ranks.host, or, when the trace names no host, rank // gpus_per_node from
--                 the workload card (host_source says which)
--   scope         intra-node (one host) or inter-node (spanning hosts)
--   busbw_p50_gbps, busbw_max_gbps   median and best bus bandwidth over its collectives (GB/s)
--   link, peak_gbps   the bottleneck link and its peak per GPU and direction (link_peaks): an
--                 intra-node group's GPU link; an inter-node group's slower of the GPU link and the
--                 network (one NIC per GPU). The links come from intra_node_link / inter_node_link
--                 (a link_peaks name such as 'InfiniBand NDR', or a number of GB/s), else the
--                 workload card's workload.hardware.interconnect, else (GPU links) the GPU model.
--   efficiency_pct   busbw_p50_gbps / peak_gbps x 100
-- Size buckets as traffic_distribution's. Unknown numbers are NULL, and `reason` says why (no
-- message sizes, a rank's host unknown, the link unknown or not in link_peaks).
-- iteration_from / iteration_to keep operations launched in those iterations; start_ns / end_ns
-- (UTC) keep operations that overlap the window.
WITH ops AS (
    SELECT run_id, rank, op_key, collective, pg_name, full_bytes, group_size, dur_ns,
           dur_share_ns, pg_ranks
    FROM collective_ops(getvariable('run'), getvariable('collective'),
                        getvariable('iteration_from'), getvariable('iteration_to'),
                        getvariable('start_ns'), getvariable('end_ns'))
),
rated AS (
    SELECT * FROM collectives_rated(ops)
),
members AS (  -- the group's ranks: as the trace names them (Process Group Ranks), else those seen
    SELECT DISTINCT run_id, pg_name, unnest(coalesce(TRY_CAST(pg_ranks AS INTEGER[]), [rank])) AS rank
    FROM ops
),
hosted AS (  -- each member's host: the trace's, else rank // gpus_per_node (workload card)
    SELECT m.run_id, m.pg_name, m.rank,
           CASE WHEN h.hosts_named THEN nullif(k.host, '')
                WHEN h.gpus_per_node > 0 THEN 'node ' || (m.rank // h.gpus_per_node) END AS host,
           CASE WHEN h.hosts_named THEN 'trace' WHEN h.gpus_per_node > 0 THEN 'gpus_per_node' END
               AS host_source
    FROM members m
    LEFT JOIN ranks k ON k.run_id = m.run_id AND k.rank = m.rank
    LEFT JOIN link_hosts() h ON h.run_id = m.run_id
),
links AS (
    SELECT * FROM rank_links(getvariable('intra_node_link'), getvariable('inter_node_link'))
),
groups AS (
    SELECT m.run_id, m.pg_name,
           '[' || array_to_string(list_sort(list(DISTINCT m.rank)), ', ') || ']' AS ranks,
           count(DISTINCT m.host) AS hosts,
           CASE WHEN count(m.host) < count(*) THEN NULL
                WHEN count(DISTINCT m.host) > 1 THEN 'inter-node' ELSE 'intra-node' END AS scope,
           min(m.rank) FILTER (WHERE m.host IS NULL) AS hostless_rank,
           min(m.host_source) AS host_source
    FROM hosted m
    GROUP BY m.run_id, m.pg_name
),
group_links AS (  -- every link the group's traffic crosses: its GPUs' links, and the network
    SELECT g.run_id, g.pg_name, l.rank, l.scope AS link_scope, l.link, l.gbps, l.link_source,
           l.peak_source, l.link_reason
    FROM groups g
    JOIN hosted m ON m.run_id = g.run_id AND m.pg_name IS NOT DISTINCT FROM g.pg_name
    JOIN links l ON l.run_id = m.run_id AND l.rank = m.rank
    WHERE g.scope = 'inter-node' OR (g.scope = 'intra-node' AND l.scope = 'intra-node')
),
bottleneck AS (  -- the slowest link; none when one of them is unknown
    SELECT run_id, pg_name,
           CASE WHEN count(gbps) = count(*) THEN arg_min(link, gbps) END AS link,
           CASE WHEN count(gbps) = count(*) THEN min(gbps) END AS peak_gbps,
           CASE WHEN count(gbps) = count(*) THEN arg_min(link_source, gbps) END AS link_source,
           CASE WHEN count(gbps) = count(*) THEN arg_min(peak_source, gbps) END AS peak_source,
           min(link_reason) AS link_reason
    FROM group_links
    GROUP BY run_id, pg_name
)
SELECT
    r.run_id,
    r.pg_name,            -- process group; NULL when the trace has none
    r.collective,
    size_bucket_name(r.bucket_order) AS size_bucket,
    r.bucket_order,
    any_value(g.ranks) AS ranks,            -- the group's ranks
    any_value(g.hosts) AS hosts,            -- hosts they ran on
    any_value(g.scope) AS scope,            -- intra-node | inter-node (NULL: a host unknown)
    any_value(g.host_source) AS host_source,  -- trace | gpus_per_node (the trace names no host)
    count(*) AS collectives,
    CAST(sum(r.full_bytes) AS BIGINT) AS total_bytes,   -- bytes
    median(r.busbw_gbps) AS busbw_p50_gbps,            -- GB/s
    max(r.busbw_gbps) AS busbw_max_gbps,               -- GB/s
    any_value(b.link) AS link,                          -- the bottleneck link
    any_value(b.peak_gbps) AS peak_gbps,                -- GB/s per GPU, one direction
    median(r.busbw_gbps) / any_value(b.peak_gbps) * 100 AS efficiency_pct,
    any_value(b.link_source) AS link_source,            -- parameter | workload card | GPU model (...)
    any_value(b.peak_source) AS peak_source,            -- the datasheet or standard behind the peak
    CASE WHEN r.bucket_order = 9
             THEN 'message size unknown: full_bytes is NULL (nsys exports carry NCCL sizes only with --include-blobs)'
         WHEN count(r.busbw_gbps) = 0 THEN 'zero durations: bandwidth undefined'
         WHEN any_value(g.scope) IS NULL
             THEN 'host of rank ' || any_value(g.hostless_rank) || ' unknown: intra- or inter-node cannot be told'
         WHEN any_value(b.peak_gbps) IS NULL THEN any_value(b.link_reason)
    END AS reason
FROM rated r
JOIN groups g ON g.run_id = r.run_id AND g.pg_name IS NOT DISTINCT FROM r.pg_name
LEFT JOIN bottleneck b ON b.run_id = r.run_id AND b.pg_name IS NOT DISTINCT FROM r.pg_name
GROUP BY r.run_id, r.pg_name, r.collective, r.bucket_order
ORDER BY r.run_id, r.pg_name NULLS FIRST, r.collective, r.bucket_order;
