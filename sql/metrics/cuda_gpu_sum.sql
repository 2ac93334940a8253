-- metric: cuda_gpu_sum
-- version: 1
-- summary: Time per kernel and memory operation together, as nsys stats -r cuda_gpu_sum prints it
-- unit: ns
-- grain: run_id, rank, category, operation
-- columns: run_id VARCHAR, rank INTEGER, time_pct DOUBLE, total_ns BIGINT, instances BIGINT, avg_ns DOUBLE, med_ns DOUBLE, min_ns BIGINT, max_ns BIGINT, stddev_ns DOUBLE, category VARCHAR, operation VARCHAR
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), window (text, optional), start_ns (int, optional), end_ns (int, optional), top (int, default 0)
-- see: nsys stats -r cuda_gpu_sum (CUDA GPU Summary (Kernels/MemOps))
-- uses: gpu_ops, scope, summary_stats
-- complexity: O(n log n) in GPU ops (one hash join to its sources, a hash aggregate; quantiles sort each group's durations)
-- show: operation, time_pct, total_ns, instances, avg_ns, category, rank, run_id
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
    SELECT g.run_id, g.rank, g.dur_ns,
           CASE WHEN g.op = 'kernel' THEN 'CUDA_KERNEL' ELSE 'MEMORY_OPER' END AS category,
           CAST(g.name AS VARCHAR) AS operation  -- kernel name, [CUDA memcpy Host-to-Device], ...
    FROM summary_rows(gpu_ops, getvariable('run'), getvariable('rank'), getvariable('window'),
                      getvariable('start_ns'), getvariable('end_ns')) g
    WHERE iteration_in(g.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
)
SELECT * FROM summary_stats(picked)
QUALIFY within_top(row_number() OVER (PARTITION BY run_id, rank
                                      ORDER BY total_ns DESC, category, operation),
                   getvariable('top'))
ORDER BY run_id, rank, total_ns DESC, category, operation;
