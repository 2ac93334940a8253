-- The kernels that take the most GPU time across a run's ranks, from gpu_kernel_summary's rows
-- (named `kernel_summary`: `tracewh summary` puts the metric's query before this one as a CTE,
-- so the sum over ranks and the top 5 are DuckDB's, under its memory limit, even for millions
-- of kernel names): time summed over ranks, share of the run's kernel time.
SELECT short_name,
       any_value(kind) AS kind,
       sum(total_ns) AS total_ns,
       sum(instances) AS instances,
       100 * sum(total_ns) / sum(sum(total_ns)) OVER () AS time_pct
FROM kernel_summary
GROUP BY short_name
ORDER BY total_ns DESC, short_name
LIMIT 5
