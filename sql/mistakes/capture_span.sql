-- The capture a query's window was asked of: per source in the run and rank asked for, its
-- first and last GPU op and CUDA/CPU call, UTC and after the source's start (sources.origin_ns),
-- and whether the window asked for overlaps it (the same tests the metrics filter with:
-- relative_window_overlaps, window_overlaps). Read only when a metric given a window answered
-- no rows, to tell "the window misses the capture" from "nothing there".
-- $run, $rank: the metric's scope (NULL: all); $window: nsys-style relative window text;
-- $start_ns, $end_ns: the UTC window.
WITH timed AS (
    SELECT file_id, run_id, start_ns, end_ns FROM store.kernels
    UNION ALL SELECT file_id, run_id, start_ns, end_ns FROM store.memcpy
    UNION ALL SELECT file_id, run_id, start_ns, end_ns FROM store.memset
    UNION ALL SELECT file_id, run_id, start_ns, end_ns FROM store.cuda_api
    UNION ALL SELECT file_id, run_id, start_ns, end_ns FROM store.cpu_ops
),
scoped AS (
    SELECT DISTINCT file_id FROM store.ranks
    WHERE ($run IS NULL OR run_id = $run) AND ($rank IS NULL OR rank = $rank)
),
spans AS (
    SELECT t.file_id, min(t.start_ns) AS first_ns, max(t.end_ns) AS last_ns
    FROM timed t SEMI JOIN scoped s ON s.file_id = t.file_id
    GROUP BY t.file_id
)
SELECT count(*) FILTER (WHERE relative_window_overlaps(p.first_ns, p.last_ns, s.origin_ns,
                                                       w.from_ns, w.to_ns)
                          AND window_overlaps(p.first_ns, p.last_ns, $start_ns, $end_ns))
           AS overlapping,
       count(*) AS sources,
       min(p.first_ns) AS first_ns,
       max(p.last_ns) AS last_ns,
       min(p.first_ns - s.origin_ns) AS first_after_start_ns,
       max(p.last_ns - s.origin_ns) AS last_after_start_ns
FROM spans p
JOIN store.sources s USING (file_id)
CROSS JOIN relative_window($window) w
