-- metric: gpu_kernel_summary
-- version: 2
-- summary: Time per kernel name, as nsys stats -r cuda_gpu_kern_sum prints it
-- unit: ns
-- grain: run_id, rank, name
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), window (text, optional), start_ns (int, optional), end_ns (int, optional), top (int, default 0)
-- see: nsys stats -r cuda_gpu_kern_sum --filter-time
-- uses: kernels, scope, sources
-- complexity: O(n log n) in kernels (hash aggregate; quantiles sort each name's durations)
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
    SELECT k.run_id, k.rank, k.name, k.short_name, k.kind, k.dur_ns
    FROM kernels k
    LEFT JOIN sources s ON s.file_id = k.file_id
    CROSS JOIN relative_window(getvariable('window')) w
    WHERE scope_match(k.run_id, k.rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(k.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
      AND relative_window_overlaps(k.start_ns, k.end_ns, s.origin_ns, w.from_ns, w.to_ns)
      AND window_overlaps(k.start_ns, k.end_ns, getvariable('start_ns'), getvariable('end_ns'))
),
per_name AS (
    SELECT
        run_id,
        rank,
        name,
        min(short_name) AS short_name,
        min(kind) AS kind,                                -- a function of name: one value
        CAST(sum(dur_ns) AS BIGINT) AS total_ns,
        count(*) AS instances,
        avg(dur_ns) AS avg_ns,
        median(dur_ns) AS med_ns,                         -- interpolated: mean of the middle two
        min(dur_ns) AS min_ns,
        max(dur_ns) AS max_ns,
        coalesce(stddev_samp(dur_ns), 0.0) AS stddev_ns   -- NULL for one instance; nsys says 0
    FROM picked
    GROUP BY run_id, rank, name
)
SELECT
    run_id,
    rank,
    CAST(total_ns AS DOUBLE) * 100 / sum(total_ns) OVER per_rank AS time_pct,  -- % of kernel time
    total_ns,             -- ns
    instances,
    avg_ns,               -- ns
    med_ns,               -- ns
    min_ns,               -- ns
    max_ns,               -- ns
    stddev_ns,            -- ns
    name,                 -- demangled name, as nsys stats shows it by default
    short_name,           -- base name (nsys stats :base)
    kind                  -- compute | comm | sync | other
FROM per_name
WINDOW per_rank AS (PARTITION BY run_id, rank)
QUALIFY coalesce(CAST(getvariable('top') AS BIGINT), 0) <= 0
     OR row_number() OVER (PARTITION BY run_id, rank ORDER BY total_ns DESC, name)
        <= CAST(getvariable('top') AS BIGINT)
ORDER BY run_id, rank, total_ns DESC, name;
