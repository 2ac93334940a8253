-- metric: nccl_sum
-- version: 1
-- summary: Time per NCCL API function on the host, from NCCL's NVTX ranges, as nsys' nccl_sum summarises them
-- unit: ns
-- grain: run_id, rank, name, style
-- params: run (text, optional), rank (int, optional), window (text, optional), start_ns (int, optional), end_ns (int, optional), top (int, default 0)
-- see: nsys recipe nccl_sum; nsys stats -r nvtx_sum restricted to the NCCL domain
-- uses: nvtx_ranges, scope, sources
-- complexity: O(n log n) in NVTX ranges (only NCCL's domain kept; a hash aggregate; quantiles sort each name's durations)
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
    SELECT r.run_id, r.rank, r.name,
           CASE r.kind WHEN 'push_pop' THEN 'PushPop' ELSE 'StartEnd' END AS style,
           r.dur_ns
    FROM nvtx_ranges r
    LEFT JOIN sources s ON s.file_id = r.file_id
    CROSS JOIN relative_window(getvariable('window')) w
    WHERE r.domain = 'NCCL' AND r.kind IN ('push_pop', 'start_end') AND r.end_ns IS NOT NULL
      AND scope_match(r.run_id, r.rank, getvariable('run'), getvariable('rank'))
      AND relative_window_overlaps(r.start_ns, r.end_ns, s.origin_ns, w.from_ns, w.to_ns)
      AND window_overlaps(r.start_ns, r.end_ns, getvariable('start_ns'), getvariable('end_ns'))
),
per_name AS (
    SELECT
        run_id, rank, name, style,
        CAST(sum(dur_ns) AS BIGINT) AS total_ns,
        count(*) AS instances,
        avg(dur_ns) AS avg_ns,
        median(dur_ns) AS med_ns,
        min(dur_ns) AS min_ns,
        max(dur_ns) AS max_ns,
        coalesce(stddev_samp(dur_ns), 0.0) AS stddev_ns
    FROM picked
    GROUP BY ALL
)
SELECT
    run_id,
    rank,
    CAST(total_ns AS DOUBLE) * 100 / nullif(sum(total_ns) OVER per_rank, 0) AS time_pct,
    total_ns,             -- ns
    instances,
    avg_ns,               -- ns
    med_ns,               -- ns
    min_ns,               -- ns
    max_ns,               -- ns
    stddev_ns,            -- ns
    style,                -- PushPop | StartEnd
    name                  -- ncclAllReduce, ncclSend, ...
FROM per_name
WINDOW per_rank AS (PARTITION BY run_id, rank)
QUALIFY coalesce(CAST(getvariable('top') AS BIGINT), 0) <= 0
     OR row_number() OVER (PARTITION BY run_id, rank ORDER BY total_ns DESC, name, style)
        <= CAST(getvariable('top') AS BIGINT)
ORDER BY run_id, rank, total_ns DESC, name, style;
