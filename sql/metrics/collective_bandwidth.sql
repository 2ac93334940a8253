-- metric: collective_bandwidth
-- version: 3
-- summary: Algorithm and bus bandwidth of each collective matched across ranks, as nccl-tests computes them
-- unit: GB/s
-- grain: run_id, op_key
-- columns: run_id VARCHAR, op_key VARCHAR, collective VARCHAR, pg_name VARCHAR, iteration INTEGER, ranks BIGINT, n BIGINT, full_bytes BIGINT, t_ns BIGINT, max_dur_ns BIGINT, start_ns BIGINT, end_ns BIGINT, algbw_gbps DOUBLE, bus_factor DOUBLE, busbw_gbps DOUBLE, note VARCHAR
-- params: run (text, optional), collective (text, optional), iteration_from (int, optional), iteration_to (int, optional), start_ns (int, optional), end_ns (int, optional), binary_units (bool, default false)
-- see: nccl-tests doc/PERFORMANCE.md (algbw, busbw); TraceLens multi-rank collective report (nccl_implicit_sync: algo bw, bus bw)
-- uses: clock_offsets, collective_ops, collective_sizes, sources
-- complexity: O(n log n) in NCCL ops (hash joins on keys, output sorted)
-- show: collective, busbw_gbps, full_bytes, t_ns, algbw_gbps, iteration, op_key, run_id
--
-- v3: clock_offsets counts a grouped kernel (several collectives in one NCCL group) as one observation: nsys runs with grouped collectives get Kineto's offsets (issue 34).
-- A collective is matched across ranks by nccl_ops.op_key; a send or receive is its own rank's
-- operation (op_key shown as `op_key@rank`). Per collective:
--   ranks         ranks it was seen on;  n = group_size when known, else ranks
--   t_ns          the shortest duration over its ranks (nccl-tests times the fastest view of the
--                 operation: the others include waiting for late peers)
--   algbw_gbps    full_bytes / t  (bytes per ns = GB/s, 1e9 bytes per second, as nccl-tests;
--                 binary_units=true: GiB/s, 2^30 bytes per second, which TraceLens prints as
--                 "GB/s": its MB is 2^20 bytes; its comm_latency is this t_ns, in us)
--   bus_factor    AllReduce 2(n-1)/n; AllGather, ReduceScatter, AllToAll (n-1)/n; others 1
--   busbw_gbps    algbw_gbps x bus_factor
--   start_ns, end_ns  first start and last end over its ranks, on the aligned clock
--                 (raw time - clock_offsets.offset_ns), UTC ns
-- Bandwidths are NULL, never an error, when they cannot be known; `note` says why (nsys
-- exports carry no message sizes unless exported with --include-blobs, so full_bytes is NULL;
-- Kineto traces before PyTorch 2.2 carry none either: the note names the run's profiler).
-- A collective seen on fewer ranks than its group is still reported, with a note.
-- collective: keep one kind (AllReduce, ...). iteration_from / iteration_to keep operations
-- launched in those iterations; start_ns / end_ns (UTC) keep operations that overlap the window.
WITH ops AS (
    SELECT n.run_id, n.rank, n.collective, n.pg_name, n.op_key, n.full_bytes, n.group_size,
           n.dur_ns, n.iteration,
           n.start_ns - coalesce(c.offset_ns, 0) AS start_ns,
           n.end_ns - coalesce(c.offset_ns, 0) AS end_ns
    FROM collective_ops(getvariable('run'), getvariable('collective'),
                        getvariable('iteration_from'), getvariable('iteration_to'),
                        getvariable('start_ns'), getvariable('end_ns')) n
    LEFT JOIN clock_offsets c ON c.run_id = n.run_id AND c.rank = n.rank
),
matched AS (
    SELECT run_id, op_key,
           min(collective) AS collective,
           min(pg_name) AS pg_name,
           min(iteration) AS iteration,
           count(DISTINCT rank) AS ranks,
           coalesce(max(group_size), count(DISTINCT rank)) AS n,
           max(full_bytes) AS full_bytes,
           min(dur_ns) AS t_ns,
           max(dur_ns) AS max_dur_ns,
           min(start_ns) AS start_ns,
           max(end_ns) AS end_ns
    FROM ops
    GROUP BY run_id, op_key
),
rated AS (
    SELECT *,
           bus_factor(collective, n) AS bus_factor,
           CASE WHEN t_ns > 0
                THEN full_bytes * 1.0 / t_ns
                     / CASE WHEN getvariable('binary_units') THEN 1.073741824 ELSE 1 END
           END AS algbw_gbps
    FROM matched
)
SELECT
    run_id,
    op_key,               -- the collective's cross-rank key (sends/receives: op_key@rank)
    collective,
    pg_name,              -- process group; NULL when the trace has none
    iteration,
    ranks,                -- ranks it was matched on
    n,                    -- group size used for bus_factor
    full_bytes,           -- bytes (nccl-tests size); NULL when unknown
    t_ns,                 -- shortest duration over its ranks
    max_dur_ns,           -- longest duration over its ranks
    start_ns,             -- aligned UTC ns
    end_ns,               -- aligned UTC ns
    algbw_gbps,           -- GB/s
    bus_factor,
    algbw_gbps * bus_factor AS busbw_gbps,  -- GB/s
    CASE WHEN full_bytes IS NULL AND f.kineto
             THEN 'message size unknown: full_bytes is NULL (this Kineto trace records no NCCL sizes; PyTorch 2.2+ writes them in the kernels'' args)'
         WHEN full_bytes IS NULL
             THEN 'message size unknown: full_bytes is NULL (nsys exports carry NCCL sizes only with --include-blobs)'
         WHEN t_ns <= 0 THEN 'zero duration: bandwidth undefined'
         WHEN ranks < n THEN 'seen on ' || ranks || ' of ' || n || ' ranks: t is the shortest of those'
    END AS note
FROM rated
LEFT JOIN (SELECT run_id, bool_and(format = 'kineto-json') AS kineto FROM sources GROUP BY run_id) f
    USING (run_id)  -- the hint for a missing size depends on the profiler
ORDER BY run_id, start_ns, op_key;
