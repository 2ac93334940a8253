-- metric: gpu_kernel_summary
-- version: 2
-- summary: Time per kernel name, as nsys stats -r cuda_gpu_kern_sum prints it
-- unit: ns
-- grain: run_id, rank, name
-- columns: run_id VARCHAR, rank INTEGER, time_pct DOUBLE, total_ns BIGINT, instances BIGINT, avg_ns DOUBLE, med_ns DOUBLE, min_ns BIGINT, max_ns BIGINT, stddev_ns DOUBLE, name VARCHAR, short_name VARCHAR, kind VARCHAR
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), window (text, optional), start_ns (int, optional), end_ns (int, optional), top (int, default 0)
-- see: nsys stats -r cuda_gpu_kern_sum --filter-time
-- uses: kernels, scope, summary_stats
-- complexity: O(n log n) in kernels (hash aggregate; quantiles sort each name's durations)
-- show: short_name, time_pct, total_ns, rank, instances, run_id, avg_ns, med_ns, name, kind
--
-- v2: short_name is filled for kernels in '(anonymous namespace)' (it was empty: kernels view)
-- One row per kernel name on each rank, with the numbers of cuda_gpu_kern_sum:
--   time_pct   this name's total x 100 / the total of all kernels of its run and rank
--              (percent of kernel time, not of wall time; sums to 100 per rank)
--   med_ns     the mean of the two middle durations when the count is even
--   stddev_ns  sample standard deviation (n - 1); 0 for a single instance, as nsys prints 0.0
-- nsys rounds time %, avg, median and stddev to one decimal when it prints; these are not rounded.
-- iteration_from / iteration_to keep kernels launched in those iterations (inclusive); kernels
-- with no iteration are left out when either is set. window (`4s420ms/35s390ms`, relative to
-- each source's start: nsys stats --filter-time) and start_ns / end_ns (UTC) keep kernels that
-- overlap the window, bounds included: the kernels gpu_trace lists for the same window. top > 0
-- keeps the N names with the most time on each rank (time_pct still counts every kernel kept).
-- Shell: SET VARIABLE rank = 0; .read sql/metrics/gpu_kernel_summary.sql
WITH picked AS (
    SELECT k.run_id, k.rank, k.dur_ns,
           k.name,        -- demangled name, as nsys stats shows it by default
           k.short_name,  -- base name (nsys stats :base)
           k.kind         -- compute | comm | sync | other (a function of name)
    FROM summary_rows(kernels, getvariable('run'), getvariable('rank'), getvariable('window'),
                      getvariable('start_ns'), getvariable('end_ns')) k
    WHERE iteration_in(k.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
)
SELECT * FROM summary_stats(picked)
QUALIFY within_top(row_number() OVER (PARTITION BY run_id, rank ORDER BY total_ns DESC, name),
                   getvariable('top'))
ORDER BY run_id, rank, total_ns DESC, name;
