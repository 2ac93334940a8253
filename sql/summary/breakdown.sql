-- A run's temporal breakdown over its ranks, from temporal_breakdown's rows (registered as
-- `breakdown`): each share over the ranks' summed windows (so a long rank weighs more), and
-- the rank with the most idle time. Read by `tracewh summary`.
SELECT 100 * sum(compute_ns) / sum(window_ns) AS compute_pct,
       100 * sum(exposed_comm_ns) / sum(window_ns) AS exposed_comm_pct,
       100 * sum(exposed_mem_ns) / sum(window_ns) AS exposed_mem_pct,
       100 * sum(exposed_other_ns) / sum(window_ns) AS exposed_other_pct,
       100 * sum(idle_ns) / sum(window_ns) AS idle_pct,
       arg_max(rank, idle_pct) AS idlest_rank,
       max(idle_pct) AS idlest_pct,
       count(*) AS ranks
FROM breakdown
WHERE rank IS NOT NULL
