-- metric: cuda_api_summary
-- version: 2
-- summary: Time per CUDA API function on the host, as nsys stats -r cuda_api_sum prints it
-- unit: ns
-- grain: run_id, rank, name
-- columns: run_id VARCHAR, rank INTEGER, time_pct DOUBLE, total_ns BIGINT, num_calls BIGINT, avg_ns DOUBLE, med_ns DOUBLE, min_ns BIGINT, max_ns BIGINT, stddev_ns DOUBLE, name VARCHAR, api_kind VARCHAR
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), window (text, optional), start_ns (int, optional), end_ns (int, optional), top (int, default 0)
-- see: nsys stats -r cuda_api_sum
-- uses: cuda_api, scope, summary_stats
-- complexity: O(n log n) in API calls (hash aggregate; quantiles sort each name's durations)
-- show: name, time_pct, total_ns, num_calls, avg_ns, rank, med_ns, run_id
--
-- v2: names as nsys stats prints them (only a 4-character _vNNNN suffix is cut, at ingest),
--     so cuGetProcAddress and cuGetProcAddress_v2 are two rows again
-- One row per CUDA runtime or driver function on each rank, named as nsys prints it (without the
-- 4-digit API version suffix such as _v7000; _v2 and _v10000 stay: cuda_api.name):
--   time_pct   this function's total x 100 / the total of all API calls of its run and rank
--   num_calls, avg_ns, med_ns (mean of the two middle durations when the count is even),
--   min_ns, max_ns, stddev_ns (sample, n - 1; 0 for a single call, as nsys prints 0.0)
-- nsys rounds time %, avg, median and stddev when it prints; these are not rounded.
-- Filters, as gpu_kernel_summary and gpu_trace take them: iteration_from / iteration_to keep
-- calls made in those iterations (calls with no iteration are left out when either is set);
-- window (`4s420ms/35s390ms`, relative to each source's start, either side may be empty) and
-- start_ns / end_ns (UTC) keep calls that overlap the window, bounds included. top > 0 keeps the
-- N functions with the most time on each rank (time_pct still counts every call).
WITH picked AS (
    SELECT a.run_id, a.rank, a.dur_ns,
           a.name,      -- cudaLaunchKernel, cuLaunchKernelEx, ... (no _vNNNN suffix)
           a.api_kind   -- runtime | driver (a function of name)
    FROM summary_rows(cuda_api, getvariable('run'), getvariable('rank'), getvariable('window'),
                      getvariable('start_ns'), getvariable('end_ns')) a
    WHERE iteration_in(a.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
)
SELECT * RENAME (instances AS num_calls) FROM summary_stats(picked)
QUALIFY within_top(row_number() OVER (PARTITION BY run_id, rank ORDER BY total_ns DESC, name),
                   getvariable('top'))
ORDER BY run_id, rank, total_ns DESC, name;
