-- uses: scope, sources
-- What the `nsys stats` reports (cuda_gpu_kern_sum, cuda_api_sum, nvtx_sum, ...) filter and
-- print, written once for the metrics that reproduce them.

-- summary_rows: the rows of `rows` (a relation with run_id, rank, file_id, start_ns and end_ns)
-- that the summaries' filters keep: the run and rank asked for, and rows overlapping the window
-- relative to each source's start (nsys --filter-time, `4s420ms/35s390ms`) and the UTC window,
-- bounds included. (Iterations, where a summary takes them, are the caller's: not every
-- relation has them.)
-- @arg rows           relation  the view to read (kernels, cuda_api, nvtx_ranges, ...)
-- @arg want_run       any       run (NULL: every run)
-- @arg want_rank      any       rank (NULL: every rank)
-- @arg want_window    any       window, relative to each source's start (NULL: none)
-- @arg want_start_ns  any       start_ns, UTC (NULL: open)
-- @arg want_end_ns    any       end_ns, UTC (NULL: open)
CREATE OR REPLACE MACRO summary_rows(rows, want_run, want_rank, want_window, want_start_ns,
                                     want_end_ns) AS TABLE
SELECT r.*
FROM query_table(rows) r
LEFT JOIN sources s ON s.file_id = r.file_id
CROSS JOIN relative_window(want_window) w
WHERE scope_match(r.run_id, r.rank, want_run, want_rank)
  AND relative_window_overlaps(r.start_ns, r.end_ns, s.origin_ns, w.from_ns, w.to_ns)
  AND window_overlaps(r.start_ns, r.end_ns, want_start_ns, want_end_ns);

-- stddev_exact(x): the sample standard deviation (n - 1) of the integers x in a group, 0 for one
-- value (nsys prints 0) or none. Computed from exact integer sums, so it does not depend on the
-- order rows reach the aggregate (stddev_samp's running update does, in the last digit).
-- @arg x  BIGINT  an aggregate's argument (durations, bytes)
-- @ret DOUBLE
CREATE OR REPLACE MACRO stddev_exact(x) AS
    CASE WHEN count(x) > 1
         THEN sqrt(CAST(count(x) * sum(CAST(x AS HUGEINT) * CAST(x AS HUGEINT))
                        - sum(CAST(x AS HUGEINT)) * sum(CAST(x AS HUGEINT)) AS DOUBLE)
                   / (count(x) * (count(x) - 1)))
         ELSE 0.0 END;

-- summary_stats(picked): one row per run, rank and group of `picked`, a relation of run_id,
-- rank, dur_ns and the columns that name a group (any number of them: each distinct
-- combination is a group).
-- @column run_id     VARCHAR
-- @column rank       INTEGER
-- @column time_pct   DOUBLE   Time (%): the group's total x 100 / the total of every group on
--                             the rank (NULL when that is 0)
-- @column total_ns   BIGINT   Total Time
-- @column instances  BIGINT   Instances (Num Calls)
-- @column avg_ns     DOUBLE
-- @column med_ns     DOUBLE   interpolated: the mean of the middle two when the count is even
-- @column min_ns     BIGINT
-- @column max_ns     BIGINT
-- @column stddev_ns  DOUBLE   sample (n - 1); 0 for one instance, as nsys prints it
-- then the group's columns, in the order `picked` gives them.
CREATE OR REPLACE MACRO summary_stats(picked) AS TABLE
WITH __stats AS (
    SELECT run_id, rank,
           CAST(sum(dur_ns) AS BIGINT) AS total_ns,
           count(*) AS instances,
           avg(dur_ns) AS avg_ns,
           median(dur_ns) AS med_ns,
           min(dur_ns) AS min_ns,
           max(dur_ns) AS max_ns,
           stddev_exact(dur_ns) AS stddev_ns,
           * EXCLUDE (run_id, rank, dur_ns)
    FROM query_table(picked)
    GROUP BY ALL
)
SELECT run_id, rank,
       CAST(total_ns AS DOUBLE) * 100 / nullif(sum(total_ns) OVER (PARTITION BY run_id, rank), 0)
           AS time_pct,
       * EXCLUDE (run_id, rank)
FROM __stats;

-- within_top: is a row among the first `top` of its rank (its row number given), or was no
-- top asked for (NULL or 0)?
-- @arg row_no      BIGINT  the row's number in its rank's order, from 1
-- @arg want_top    any     the `top` parameter, cast to BIGINT
-- @ret BOOLEAN
CREATE OR REPLACE MACRO within_top(row_no, want_top) AS
    coalesce(CAST(want_top AS BIGINT), 0) <= 0 OR row_no <= CAST(want_top AS BIGINT);
