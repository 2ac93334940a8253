-- metric: traffic_distribution
-- version: 3
-- summary: Collective traffic by kind, process group and message size: bytes, count, time and bus bandwidth percentiles
-- unit: bytes, ns, GB/s
-- grain: run_id, collective, pg_name, size_bucket
-- columns: run_id VARCHAR, collective VARCHAR, pg_name VARCHAR, size_bucket VARCHAR, bucket_order INTEGER, collectives BIGINT, total_bytes BIGINT, total_ns BIGINT, busbw_p10_gbps DOUBLE, busbw_p50_gbps DOUBLE, busbw_p90_gbps DOUBLE, note VARCHAR
-- params: run (text, optional), iteration_from (int, optional), iteration_to (int, optional), start_ns (int, optional), end_ns (int, optional)
-- see: CCL-Bench traffic_distribution; nccl-tests doc/PERFORMANCE.md
-- uses: collective_ops, collective_sizes, sources
-- complexity: O(n) in NCCL ops (hash aggregates)
-- show: collective, size_bucket, collectives, busbw_p50_gbps, total_bytes, total_ns, note, run_id
--
-- Each collective counts once, matched across ranks by op_key (a send or receive is its own
-- rank's operation), with its size (full_bytes, nccl-tests size), t = the shortest duration over
-- its ranks and busbw as collective_bandwidth computes it. Per (run, collective, process group,
-- size bucket):
--   collectives, total_bytes (sum of full_bytes), total_ns (sum of t, each counting its share of
--   a kernel that runs several operations, nccl_ops.dur_share_ns: a grouped SendRecv kernel once),
--   busbw_p10/p50/p90_gbps (continuous percentiles over the bucket's collectives, GB/s)
-- Size buckets (binary units, upper bound exclusive): <128B, 128B-1K, 1K-8K, 8K-64K, 64K-256K,
-- 256K-1M, 1M-32M, >=32M, and `unknown` when the trace has no sizes (nsys exports carry NCCL
-- sizes only with --include-blobs); bucket_order sorts them. `note` says why numbers are NULL.
-- iteration_from / iteration_to keep operations launched in those iterations; start_ns / end_ns
-- (UTC) keep operations that overlap the window.
WITH ops AS (
    SELECT * FROM collective_ops(getvariable('run'), NULL,
                                 getvariable('iteration_from'), getvariable('iteration_to'),
                                 getvariable('start_ns'), getvariable('end_ns'))
),
rated AS (
    SELECT * FROM collectives_rated(ops)
)
SELECT
    run_id,
    collective,
    pg_name,              -- process group; NULL when the trace has none
    size_bucket_name(bucket_order) AS size_bucket,
    bucket_order,
    count(*) AS collectives,
    CAST(sum(full_bytes) AS BIGINT) AS total_bytes,   -- bytes
    CAST(round(sum(t_share_ns)) AS BIGINT) AS total_ns, -- ns
    quantile_cont(busbw_gbps, 0.1) AS busbw_p10_gbps,
    quantile_cont(busbw_gbps, 0.5) AS busbw_p50_gbps,
    quantile_cont(busbw_gbps, 0.9) AS busbw_p90_gbps,
    CASE WHEN bucket_order = 9 AND run_id IN (SELECT run_id FROM sources WHERE format = 'kineto-json')
             THEN 'message size unknown: full_bytes is NULL (this Kineto trace records no message size on these NCCL ops: no ''In msg nelems'' in their args)'
         WHEN bucket_order = 9
             THEN 'message size unknown: full_bytes is NULL (nsys exports carry NCCL sizes only with --include-blobs)'
         WHEN count(busbw_gbps) = 0 THEN 'zero durations: bandwidth undefined'
    END AS note
FROM rated
GROUP BY run_id, collective, pg_name, bucket_order
ORDER BY run_id, collective, pg_name NULLS FIRST, bucket_order;
