-- A run's straggler, from straggler's rows (registered as `waits`): the rank the metric names,
-- and how long the other ranks waited for the last one, summed over them. Read by
-- `tracewh summary`.
SELECT s.rank, s.collectives, s.arrived_last_pct, s.median_start_skew_ns,
       (SELECT coalesce(sum(o.total_wait_ns), 0) FROM waits o
        WHERE o.rank IS DISTINCT FROM s.rank) AS others_wait_ns
FROM waits s
WHERE s.is_straggler
ORDER BY s.rank
LIMIT 1
