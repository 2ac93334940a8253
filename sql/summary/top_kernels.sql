-- The kernels that take the most GPU time across a run's ranks, from gpu_kernel_summary's rows
-- (the metric's result is registered as `kernel_summary`): time summed over ranks, share of
-- the run's kernel time. Read by `tracewh summary`.
SELECT short_name,
       any_value(kind) AS kind,
       sum(total_ns) AS total_ns,
       sum(instances) AS instances,
       100 * sum(total_ns) / sum(sum(total_ns)) OVER () AS time_pct
FROM kernel_summary
GROUP BY short_name
ORDER BY total_ns DESC, short_name
LIMIT 5
