-- metric: gpu_mem_summary
-- version: 1
-- summary: Time and bytes per GPU memory operation kind, as nsys stats cuda_gpu_mem_time_sum and cuda_gpu_mem_size_sum print them
-- unit: ns, bytes
-- grain: run_id, rank, operation
-- columns: run_id VARCHAR, rank INTEGER, time_pct DOUBLE, count BIGINT, total_ns BIGINT, avg_ns DOUBLE, med_ns DOUBLE, min_ns BIGINT, max_ns BIGINT, stddev_ns DOUBLE, total_bytes BIGINT, avg_bytes DOUBLE, med_bytes DOUBLE, min_bytes BIGINT, max_bytes BIGINT, stddev_bytes DOUBLE, operation VARCHAR, op VARCHAR
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), window (text, optional), start_ns (int, optional), end_ns (int, optional)
-- see: nsys stats -r cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum
-- uses: gpu_ops, scope, summary_stats
-- complexity: O(n log n) in memcpy and memset ops (hash aggregate; quantiles)
-- show: operation, time_pct, total_ns, count, total_bytes, avg_ns, rank, run_id
--
-- One row per memory operation on each rank: `[CUDA memcpy Host-to-Device]` and the other copy
-- kinds, and `[CUDA memset]`, with both reports' numbers side by side:
--   time_pct    this operation's total time x 100 / all memory operations' time on the rank
--   count, total_ns, avg_ns, med_ns, min_ns, max_ns, stddev_ns   (cuda_gpu_mem_time_sum)
--   total_bytes, avg_bytes, med_bytes, min_bytes, max_bytes, stddev_bytes (cuda_gpu_mem_size_sum,
--               which prints MB = 1e6 bytes; these are bytes)
-- stddev is the sample standard deviation, 0 for a single operation. iteration_from /
-- iteration_to keep operations launched in those iterations; window (`4s420ms/35s390ms`,
-- relative to each source's start) and start_ns / end_ns (UTC) keep operations that overlap the
-- window, bounds included.
WITH picked AS (
    SELECT g.run_id, g.rank, g.name AS operation, g.op, g.dur_ns, g.bytes
    FROM summary_rows(gpu_ops, getvariable('run'), getvariable('rank'), getvariable('window'),
                      getvariable('start_ns'), getvariable('end_ns')) g
    WHERE iteration_in(g.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
      AND g.op IN ('memcpy', 'memset')
),
per_operation AS (
    SELECT
        run_id, rank, operation, min(op) AS op,
        count(*) AS count,
        CAST(sum(dur_ns) AS BIGINT) AS total_ns,
        avg(dur_ns) AS avg_ns,
        median(dur_ns) AS med_ns,
        min(dur_ns) AS min_ns,
        max(dur_ns) AS max_ns,
        stddev_exact(dur_ns) AS stddev_ns,
        CAST(sum(bytes) AS BIGINT) AS total_bytes,
        avg(bytes) AS avg_bytes,
        median(bytes) AS med_bytes,
        min(bytes) AS min_bytes,
        max(bytes) AS max_bytes,
        CASE WHEN count(bytes) > 0 THEN stddev_exact(bytes) END AS stddev_bytes
    FROM picked
    GROUP BY run_id, rank, operation
)
SELECT
    run_id,
    rank,
    CAST(total_ns AS DOUBLE) * 100 / nullif(sum(total_ns) OVER (PARTITION BY run_id, rank), 0)
        AS time_pct,
    count,
    total_ns,             -- ns
    avg_ns,               -- ns
    med_ns,               -- ns
    min_ns,               -- ns
    max_ns,               -- ns
    stddev_ns,            -- ns
    total_bytes,          -- bytes
    avg_bytes,            -- bytes
    med_bytes,            -- bytes
    min_bytes,            -- bytes
    max_bytes,            -- bytes
    stddev_bytes,         -- bytes
    operation,            -- [CUDA memcpy Host-to-Device], ..., [CUDA memset]
    op                    -- memcpy | memset
FROM per_operation
ORDER BY run_id, rank, total_ns DESC, operation;
