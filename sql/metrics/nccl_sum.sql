-- metric: nccl_sum
-- version: 1
-- summary: Time per NCCL API function on the host, from NCCL's NVTX ranges, as nsys' nccl_sum summarises them
-- unit: ns
-- grain: run_id, rank, name, style
-- columns: run_id VARCHAR, rank INTEGER, time_pct DOUBLE, total_ns BIGINT, instances BIGINT, avg_ns DOUBLE, med_ns DOUBLE, min_ns BIGINT, max_ns BIGINT, stddev_ns DOUBLE, style VARCHAR, name VARCHAR
-- params: run (text, optional), rank (int, optional), window (text, optional), start_ns (int, optional), end_ns (int, optional), top (int, default 0)
-- see: nsys recipe nccl_sum; nsys stats -r nvtx_sum restricted to the NCCL domain
-- uses: nvtx_ranges, summary_stats
-- complexity: O(n log n) in NVTX ranges (only NCCL's domain kept; a hash aggregate; quantiles sort each name's durations)
-- show: name, time_pct, total_ns, instances, avg_ns, rank, run_id
--
-- The NCCL API calls as NCCL's own NVTX instrumentation records them (nsys --trace=nvtx with
-- NCCL >= 2.x: ranges such as ncclAllReduce, ncclSend, ncclGroupStart in the NCCL domain),
-- summarised per function name on each rank with the columns of nsys' summaries:
--   time_pct    Time (%): this function's total x 100 / all NCCL ranges of the rank (ranges of
--               grouped calls nest, so this is not a share of wall time)
--   total_ns    Total Time; instances: Instances; avg_ns, med_ns (mean of the middle two when the
--               count is even), min_ns, max_ns; stddev_ns: sample (n - 1), 0 for one instance
--   style       PushPop | StartEnd, as nvtx_sum says
--   name        the NCCL function (ncclAllReduce, ncclSend, ncclCommInitRank, ...)
-- A range is NCCL's when its domain is NCCL; a sliced export whose domain create event was cut
-- off still has it (nvtx_ranges.domain_guessed: a non-default domain, a name starting nccl).
-- Marks and ranges still open at the end of the capture are left out, as nvtx_sum does. Message
-- sizes, communicators and data types (nsys' advanced NCCL tracing, or NCCL's NVTX payloads)
-- are not in these ranges: collective_counts and traffic_distribution read them from nccl_ops.
-- window (`4s420ms/35s390ms`, relative to each source's start) and start_ns / end_ns (UTC) keep
-- ranges that overlap the window, bounds included. top > 0 keeps the N functions with the most
-- time on each rank.
WITH picked AS (
    SELECT r.run_id, r.rank, r.dur_ns,
           CASE r.kind WHEN 'push_pop' THEN 'PushPop' ELSE 'StartEnd' END AS style,
           r.name  -- ncclAllReduce, ncclSend, ...
    FROM summary_rows(nvtx_ranges, getvariable('run'), getvariable('rank'), getvariable('window'),
                      getvariable('start_ns'), getvariable('end_ns')) r
    WHERE r.domain = 'NCCL' AND r.kind IN ('push_pop', 'start_end') AND r.end_ns IS NOT NULL
)
SELECT * FROM summary_stats(picked)
QUALIFY within_top(row_number() OVER (PARTITION BY run_id, rank
                                      ORDER BY total_ns DESC, name, style),
                   getvariable('top'))
ORDER BY run_id, rank, total_ns DESC, name, style;
