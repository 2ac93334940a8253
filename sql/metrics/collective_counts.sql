-- metric: collective_counts
-- version: 2
-- summary: Number of collective and point-to-point operations by kind, process group and rank, per iteration too
-- unit: count
-- grain: run_id, rank, collective, pg_name
-- columns: run_id VARCHAR, rank INTEGER, collective VARCHAR, pg_name VARCHAR, pg_desc VARCHAR, calls BIGINT, iterations BIGINT, calls_per_iteration DOUBLE, total_bytes BIGINT, total_ns BIGINT, ranks BIGINT
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), start_ns (int, optional), end_ns (int, optional)
-- see: CCL-Bench coll_call_num
-- uses: iterations, nccl_ops, scope
-- complexity: O(n) in NCCL ops, plus one scan of the NVTX names for iterations (prefix test, then the regex on the few candidates)
-- show: collective, rank, calls, total_ns, total_bytes, calls_per_iteration, pg_name, run_id
--
-- Counts NCCL operations (rows of nccl_ops: one per collective or send/recv, so a kernel that
-- runs a group of operations counts each of them), not NCCL kernels, and keeps kinds, process
-- groups and ranks apart (CCL-Bench's coll_call_num counts kernels of one GPU in one iteration).
-- Per (run, rank, collective, process group):
--   calls                 operations
--   iterations            iterations of the rank in the iterations view (in the kept range)
--   calls_per_iteration   calls with an iteration / iterations (NULL without iterations)
--   total_bytes           sum of full_bytes (nccl-tests size; NULL when the trace has no sizes)
--   total_ns              kernel time: each operation's share of its kernel (nccl_ops.dur_share_ns),
--                         so a grouped SendRecv kernel counts once, split over its sends and receives
-- Rows with rank NULL count the run's distinct operations (distinct op_key: one collective seen
-- on several ranks counts once; a send or receive is one operation of its rank) and the ranks
-- that took part.
-- iteration_from / iteration_to keep operations launched in those iterations; start_ns /
-- end_ns (UTC) keep operations that overlap the window.
WITH ops AS (
    SELECT run_id, rank, collective, coalesce(pg_name, pg_desc) AS pg_name, pg_desc,
           op_key, iteration, full_bytes, dur_share_ns,
           file_id || ':' || start_ns || ':' || coalesce(correlation_id, 0) || ':' || collective AS row_key
    FROM nccl_ops
    WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(iteration, getvariable('iteration_from'), getvariable('iteration_to'))
      AND window_overlaps(start_ns, end_ns, getvariable('start_ns'), getvariable('end_ns'))
),
steps AS (
    SELECT run_id, rank, count(DISTINCT iteration) AS iterations
    FROM iterations
    WHERE iteration_in(iteration, getvariable('iteration_from'), getvariable('iteration_to'))
    GROUP BY run_id, rank
),
per_rank AS (
    SELECT o.run_id, o.rank, o.collective, o.pg_name, min(o.pg_desc) AS pg_desc,
           count(*) AS calls,
           max(s.iterations) AS iterations,
           count(o.iteration) * 1.0 / nullif(max(s.iterations), 0) AS calls_per_iteration,
           CAST(sum(o.full_bytes) AS BIGINT) AS total_bytes,
           CAST(round(sum(o.dur_share_ns)) AS BIGINT) AS total_ns,
           NULL::BIGINT AS ranks
    FROM ops o
    LEFT JOIN steps s ON s.run_id = o.run_id AND s.rank = o.rank
    GROUP BY o.run_id, o.rank, o.collective, o.pg_name
),
per_run AS (
    SELECT run_id, NULL::INTEGER AS rank, collective, pg_name, min(pg_desc) AS pg_desc,
           count(DISTINCT CASE WHEN op_key IS NULL OR collective IN ('Send', 'Recv', 'SendRecv')
                               THEN coalesce(op_key, '') || '@' || rank || '@' || row_key
                               ELSE op_key END) AS calls,
           NULL::BIGINT AS iterations,
           NULL::DOUBLE AS calls_per_iteration,
           NULL::BIGINT AS total_bytes,
           NULL::BIGINT AS total_ns,
           count(DISTINCT rank) AS ranks
    FROM ops
    GROUP BY run_id, collective, pg_name
)
SELECT
    run_id,
    rank,                 -- NULL: the run's distinct operations
    collective,           -- AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll, Send, Recv, ...
    pg_name,              -- process group (name, else description); NULL when the trace has none
    pg_desc,
    calls,
    iterations,
    calls_per_iteration,
    total_bytes,          -- bytes (full_bytes)
    total_ns,             -- ns of kernel time
    ranks                 -- ranks that took part (run rows only)
FROM (SELECT * FROM per_rank UNION ALL SELECT * FROM per_run)
ORDER BY run_id, rank NULLS LAST, collective, pg_name NULLS FIRST;
