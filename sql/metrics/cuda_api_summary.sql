-- metric: cuda_api_summary
-- version: 2
-- summary: Time per CUDA API function on the host, as nsys stats -r cuda_api_sum prints it
-- unit: ns
-- grain: run_id, rank, name
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), window (text, optional), start_ns (int, optional), end_ns (int, optional), top (int, default 0)
-- see: nsys stats -r cuda_api_sum
-- uses: cuda_api, scope, sources
-- complexity: O(n log n) in API calls (hash aggregate; quantiles sort each name's durations)
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
    SELECT a.run_id, a.rank, a.name, a.api_kind, a.dur_ns
    FROM cuda_api a
    LEFT JOIN sources s ON s.file_id = a.file_id
    CROSS JOIN relative_window(getvariable('window')) w
    WHERE scope_match(a.run_id, a.rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(a.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
      AND relative_window_overlaps(a.start_ns, a.end_ns, s.origin_ns, w.from_ns, w.to_ns)
      AND window_overlaps(a.start_ns, a.end_ns, getvariable('start_ns'), getvariable('end_ns'))
),
per_name AS (
    SELECT
        run_id,
        rank,
        name,
        min(api_kind) AS api_kind,
        CAST(sum(dur_ns) AS BIGINT) AS total_ns,
        count(*) AS num_calls,
        avg(dur_ns) AS avg_ns,
        median(dur_ns) AS med_ns,
        min(dur_ns) AS min_ns,
        max(dur_ns) AS max_ns,
        coalesce(stddev_samp(dur_ns), 0.0) AS stddev_ns
    FROM picked
    GROUP BY run_id, rank, name
)
SELECT
    run_id,
    rank,
    CAST(total_ns AS DOUBLE) * 100 / nullif(sum(total_ns) OVER per_rank, 0) AS time_pct,
    total_ns,             -- ns
    num_calls,
    avg_ns,               -- ns
    med_ns,               -- ns
    min_ns,               -- ns
    max_ns,               -- ns
    stddev_ns,            -- ns
    name,                 -- cudaLaunchKernel, cuLaunchKernelEx, ... (no _vNNNN suffix)
    api_kind              -- runtime | driver
FROM per_name
WINDOW per_rank AS (PARTITION BY run_id, rank)
QUALIFY coalesce(CAST(getvariable('top') AS BIGINT), 0) <= 0
     OR row_number() OVER (PARTITION BY run_id, rank ORDER BY total_ns DESC, name)
        <= CAST(getvariable('top') AS BIGINT)
ORDER BY run_id, rank, total_ns DESC, name;
