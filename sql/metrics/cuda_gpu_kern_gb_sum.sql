-- metric: cuda_gpu_kern_gb_sum
-- version: 1
-- summary: Time per kernel name and launch shape (grid and block), as nsys stats -r cuda_gpu_kern_gb_sum prints it
-- unit: ns
-- grain: run_id, rank, name, grid_x, grid_y, grid_z, block_x, block_y, block_z
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), window (text, optional), start_ns (int, optional), end_ns (int, optional), top (int, default 0)
-- see: nsys stats -r cuda_gpu_kern_gb_sum (CUDA GPU Kernel/Grid/Block Summary)
-- uses: kernels, scope, sources
-- complexity: O(n log n) in kernels (one hash join to its sources, a hash aggregate; quantiles sort each group's durations)
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
    SELECT k.run_id, k.rank, k.name, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y,
           k.block_z, k.dur_ns
    FROM kernels k
    LEFT JOIN sources s ON s.file_id = k.file_id
    CROSS JOIN relative_window(getvariable('window')) w
    WHERE scope_match(k.run_id, k.rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(k.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
      AND relative_window_overlaps(k.start_ns, k.end_ns, s.origin_ns, w.from_ns, w.to_ns)
      AND window_overlaps(k.start_ns, k.end_ns, getvariable('start_ns'), getvariable('end_ns'))
),
per_shape AS (
    SELECT
        run_id, rank, name, grid_x, grid_y, grid_z, block_x, block_y, block_z,
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
    -- GridXYZ, BlockXYZ (NULL when the trace has no launch configuration)
    CASE WHEN grid_x IS NOT NULL THEN printf('%4d %4d %4d', grid_x, grid_y, grid_z) END
        AS grid_xyz,
    CASE WHEN block_x IS NOT NULL THEN printf('%4d %4d %4d', block_x, block_y, block_z) END
        AS block_xyz,
    name,
    grid_x, grid_y, grid_z,
    block_x, block_y, block_z
FROM per_shape
WINDOW per_rank AS (PARTITION BY run_id, rank)
QUALIFY coalesce(CAST(getvariable('top') AS BIGINT), 0) <= 0
     OR row_number() OVER (PARTITION BY run_id, rank
                           ORDER BY total_ns DESC, instances, name, grid_x, grid_y, grid_z,
                                    block_x, block_y, block_z)
        <= CAST(getvariable('top') AS BIGINT)
ORDER BY run_id, rank, total_ns DESC, instances, name, grid_x, grid_y, grid_z, block_x, block_y,
         block_z;
