-- metric: cuda_gpu_sum
-- version: 1
-- summary: Time per kernel and memory operation together, as nsys stats -r cuda_gpu_sum prints it
-- unit: ns
-- grain: run_id, rank, category, operation
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), window (text, optional), start_ns (int, optional), end_ns (int, optional), top (int, default 0)
-- see: nsys stats -r cuda_gpu_sum (CUDA GPU Summary (Kernels/MemOps))
-- uses: gpu_ops, scope, sources
-- complexity: O(n log n) in GPU ops (one hash join to its sources, a hash aggregate; quantiles sort each group's durations)
--
-- NVIDIA's definition (report cuda_gpu_sum: cuda_gpu_kern_sum and cuda_gpu_mem_time_sum in one
-- table): every kernel, memcpy and memset, grouped by operation name; one row per operation on
-- each rank, with nsys' columns:
--   time_pct    Time (%): this operation's total x 100 / the total of all operations listed on
--               the rank (a share of GPU operation time, not of wall time)
--   total_ns    Total Time; instances: Instances; avg_ns, med_ns (mean of the middle two when the
--               count is even), min_ns, max_ns; stddev_ns: sample (n - 1), 0 for one instance
--   category    CUDA_KERNEL | MEMORY_OPER
--   operation   the kernel's demangled name, `[CUDA memcpy Host-to-Device]` (and the other copy
--               kinds, ENUM_CUDA_MEMCPY_OPER's labels) or `[CUDA memset]`
-- nsys rounds Time (%), Avg, Med and StdDev to one decimal when it prints; these are not rounded.
-- Filters, as gpu_kernel_summary takes them: iteration_from / iteration_to (operations launched
-- in those iterations), window (`4s420ms/35s390ms` relative to each source's start, the
-- --filter-time of nsys stats) and start_ns / end_ns (UTC) keep operations that overlap the
-- window, bounds included. top > 0 keeps the N operations with the most time on each rank.
WITH picked AS (
    SELECT g.run_id, g.rank, g.name, g.op, g.dur_ns
    FROM gpu_ops g
    LEFT JOIN sources s ON s.file_id = g.file_id
    CROSS JOIN relative_window(getvariable('window')) w
    WHERE scope_match(g.run_id, g.rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(g.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
      AND relative_window_overlaps(g.start_ns, g.end_ns, s.origin_ns, w.from_ns, w.to_ns)
      AND window_overlaps(g.start_ns, g.end_ns, getvariable('start_ns'), getvariable('end_ns'))
),
per_operation AS (
    SELECT
        run_id,
        rank,
        CASE WHEN op = 'kernel' THEN 'CUDA_KERNEL' ELSE 'MEMORY_OPER' END AS category,
        CAST(name AS VARCHAR) AS operation,
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
    category,             -- CUDA_KERNEL | MEMORY_OPER
    operation             -- kernel name, [CUDA memcpy Host-to-Device], ..., [CUDA memset]
FROM per_operation
WINDOW per_rank AS (PARTITION BY run_id, rank)
QUALIFY coalesce(CAST(getvariable('top') AS BIGINT), 0) <= 0
     OR row_number() OVER (PARTITION BY run_id, rank ORDER BY total_ns DESC, category, operation)
        <= CAST(getvariable('top') AS BIGINT)
ORDER BY run_id, rank, total_ns DESC, category, operation;
