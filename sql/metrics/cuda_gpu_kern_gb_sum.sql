-- metric: cuda_gpu_kern_gb_sum
-- version: 1
-- summary: Time per kernel name and launch shape (grid and block), as nsys stats -r cuda_gpu_kern_gb_sum prints it
-- unit: ns
-- grain: run_id, rank, name, grid_x, grid_y, grid_z, block_x, block_y, block_z
-- columns: run_id VARCHAR, rank INTEGER, time_pct DOUBLE, total_ns BIGINT, instances BIGINT, avg_ns DOUBLE, med_ns DOUBLE, min_ns BIGINT, max_ns BIGINT, stddev_ns DOUBLE, grid_xyz VARCHAR, block_xyz VARCHAR, name VARCHAR, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER, block_z INTEGER
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), window (text, optional), start_ns (int, optional), end_ns (int, optional), top (int, default 0)
-- see: nsys stats -r cuda_gpu_kern_gb_sum (CUDA GPU Kernel/Grid/Block Summary)
-- uses: kernels, scope, summary_stats
-- complexity: O(n log n) in kernels (one hash join to its sources, a hash aggregate; quantiles sort each group's durations)
-- show: name, time_pct, total_ns, instances, grid_xyz, block_xyz, avg_ns, rank, run_id
--
-- NVIDIA's definition (report cuda_gpu_kern_gb_sum): kernels grouped by name, grid and block
-- dimensions; one row per (name, grid, block) on each rank, with nsys' columns:
--   time_pct    Time (%): this group's total x 100 / the total of all kernels on the rank
--   total_ns    Total Time; instances: Instances; avg_ns, med_ns (mean of the middle two when the
--               count is even), min_ns, max_ns; stddev_ns: sample (n - 1), 0 for one instance
--   grid_xyz, block_xyz   GridXYZ, BlockXYZ as nsys prints them (printf '%4d %4d %4d'); the
--               dimensions are also columns of their own
--   name        the kernel's demangled name
-- nsys rounds Time (%), Avg, Med and StdDev to one decimal when it prints; these are not rounded.
-- Rows in nsys' order: total time descending, then instances, then name. Filters as
-- gpu_kernel_summary: iteration_from / iteration_to, window (`4s420ms/35s390ms` relative to each
-- source's start, the --filter-time of nsys stats), start_ns / end_ns (UTC) keep kernels that
-- overlap the window, bounds included; top > 0 keeps the N groups with the most time per rank.
WITH picked AS (
    SELECT k.run_id, k.rank, k.dur_ns, k.name, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y,
           k.block_z
    FROM summary_rows(kernels, getvariable('run'), getvariable('rank'), getvariable('window'),
                      getvariable('start_ns'), getvariable('end_ns')) k
    WHERE iteration_in(k.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
)
SELECT s.* EXCLUDE (name, grid_x, grid_y, grid_z, block_x, block_y, block_z),
       -- GridXYZ, BlockXYZ (NULL when the trace has no launch configuration), printed per group
       -- rather than per kernel
       CASE WHEN s.grid_x IS NOT NULL THEN printf('%4d %4d %4d', s.grid_x, s.grid_y, s.grid_z)
       END AS grid_xyz,
       CASE WHEN s.block_x IS NOT NULL
            THEN printf('%4d %4d %4d', s.block_x, s.block_y, s.block_z) END AS block_xyz,
       s.name, s.grid_x, s.grid_y, s.grid_z, s.block_x, s.block_y, s.block_z
FROM summary_stats(picked) s
QUALIFY within_top(row_number() OVER (PARTITION BY run_id, rank
                                      ORDER BY total_ns DESC, instances, name, grid_x, grid_y,
                                               grid_z, block_x, block_y, block_z),
                   getvariable('top'))
ORDER BY run_id, rank, total_ns DESC, instances, name, grid_x, grid_y, grid_z, block_x, block_y,
         block_z;
