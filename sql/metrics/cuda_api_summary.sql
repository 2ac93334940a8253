-- metric: cuda_api_summary
-- version: 1
-- summary: Time per CUDA API function on the host, as nsys stats -r cuda_api_sum prints it
-- unit: ns
-- grain: run_id, rank, name
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), window (text, optional), start_ns (int, optional), end_ns (int, optional), top (int, default 0)
-- see: nsys stats -r cuda_api_sum
-- uses: cuda_api, duration_ns, sources
--
-- One row per CUDA runtime or driver function (name without the _vNNNN suffix) on each rank:
--   time_pct   this function's total x 100 / the total of all API calls of its run and rank
--   num_calls, avg_ns, med_ns (mean of the two middle durations when the count is even),
--   min_ns, max_ns, stddev_ns (sample, n - 1; 0 for a single call, as nsys prints 0.0)
-- nsys rounds time %, avg, median and stddev when it prints; these are not rounded.
-- Filters, as gpu_kernel_summary and gpu_trace take them: iteration_from / iteration_to keep
-- calls made in those iterations (calls with no iteration are left out when either is set);
-- window (`4s420ms/35s390ms`, relative to each source's start, either side may be empty) and
-- start_ns / end_ns (UTC) keep calls that overlap the window, bounds included. top > 0 keeps the
-- N functions with the most time on each rank (time_pct still counts every call).
WITH window_rel AS (
    -- duration_ns() raises an error naming text that is not a duration
    SELECT duration_ns(nullif(trim(split_part(w, '/', 1)), '')) AS from_ns,
           duration_ns(nullif(trim(split_part(w, '/', 2)), '')) AS to_ns
    FROM (SELECT CAST(getvariable('window') AS VARCHAR) AS w)
),
picked AS (
    SELECT a.run_id, a.rank, a.name, a.api_kind, a.dur_ns
    FROM cuda_api a
    LEFT JOIN sources s ON s.file_id = a.file_id
    CROSS JOIN window_rel w
    WHERE (getvariable('run') IS NULL OR a.run_id = CAST(getvariable('run') AS VARCHAR))
      AND (getvariable('rank') IS NULL OR a.rank = CAST(getvariable('rank') AS INTEGER))
      AND (getvariable('iteration_from') IS NULL
           OR a.iteration >= CAST(getvariable('iteration_from') AS INTEGER))
      AND (getvariable('iteration_to') IS NULL
           OR a.iteration <= CAST(getvariable('iteration_to') AS INTEGER))
      AND (w.from_ns IS NULL OR a.end_ns >= s.origin_ns + w.from_ns)
      AND (w.to_ns IS NULL OR a.start_ns <= s.origin_ns + w.to_ns)
      AND (getvariable('start_ns') IS NULL OR a.end_ns >= CAST(getvariable('start_ns') AS BIGINT))
      AND (getvariable('end_ns') IS NULL OR a.start_ns <= CAST(getvariable('end_ns') AS BIGINT))
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
