-- uses: collective_sizes, nccl_ops, scope
-- Collectives counted once each, as the collective metrics count them (collective_bandwidth,
-- traffic_distribution, link_efficiency): matched across ranks by op_key, a send or receive
-- being its own rank's operation, and rated as nccl-tests rates them (doc/PERFORMANCE.md).

-- collective_ops(want_run, want_collective, want_iteration_from, want_iteration_to,
-- want_start_ns, want_end_ns): the nccl_ops rows a metric's parameters keep (NULL: no filter;
-- iterations: launched in them; start_ns / end_ns: UTC, operations overlapping the window),
-- each with the key of the operation it belongs to.
-- @column *        as nccl_ops, but for:
-- @column pg_name  VARCHAR  pg_name, else pg_desc (NULL: the trace names no process group)
-- @column op_key   VARCHAR  the operation across ranks: nccl_ops.op_key; a send or receive, or
--                           an op without op_key, is its rank's own (op_key or file:start, @rank)
CREATE OR REPLACE MACRO collective_ops(want_run, want_collective, want_iteration_from,
                                       want_iteration_to, want_start_ns, want_end_ns) AS TABLE
SELECT * REPLACE (
           coalesce(pg_name, pg_desc) AS pg_name,
           CASE WHEN op_key IS NULL OR collective IN ('Send', 'Recv', 'SendRecv')
                THEN coalesce(op_key, file_id || ':' || start_ns) || '@' || rank
                ELSE op_key END AS op_key)
FROM nccl_ops
WHERE run_match(run_id, want_run)
  AND (want_collective IS NULL OR collective = CAST(want_collective AS VARCHAR))
  AND iteration_in(iteration, want_iteration_from, want_iteration_to)
  AND window_overlaps(start_ns, end_ns, want_start_ns, want_end_ns);

-- collectives_rated(ops): one row per operation of the table or CTE named by ops (rows of
-- collective_ops: run_id, rank, op_key, collective, pg_name, full_bytes, group_size, dur_ns,
-- dur_share_ns), its size and bus bandwidth.
-- @column run_id, op_key, collective, pg_name   the operation (its ranks' smallest names)
-- @column n             BIGINT  group size for the bus factor (group_size, else the ranks seen)
-- @column full_bytes    BIGINT  nccl-tests size, the largest over its ranks (NULL: unknown)
-- @column t_ns          BIGINT  the shortest duration over its ranks
-- @column t_share_ns    DOUBLE  the smallest dur_share_ns: a kernel running several operations
--                               counts once over them
-- @column bucket_order  INTEGER size_bucket_order(full_bytes)
-- @column busbw_gbps    DOUBLE  full_bytes / t_ns x bus_factor, GB/s (NULL: t_ns <= 0 or no size)
CREATE OR REPLACE MACRO collectives_rated(ops) AS TABLE
SELECT *,
       size_bucket_order(full_bytes) AS bucket_order,
       CASE WHEN t_ns > 0 THEN full_bytes * 1.0 / t_ns END * bus_factor(collective, n) AS busbw_gbps
FROM (
    SELECT run_id, op_key, min(collective) AS collective, min(pg_name) AS pg_name,
           coalesce(max(group_size), count(DISTINCT rank)) AS n,
           max(full_bytes) AS full_bytes,
           min(dur_ns) AS t_ns,
           min(dur_share_ns) AS t_share_ns
    FROM query_table(ops)
    GROUP BY run_id, op_key
);
