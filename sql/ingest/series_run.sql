-- The runs a series given without --run could belong to (file_id: the series, just written
-- under a provisional run). A run fits when its GPU ops' UTC span overlaps the samples' span
-- and, when the series names hosts and GPUs, every GPU of the run on those hosts is sampled
-- (a monitor samples each GPU of its node, the run's and others'). One row per run, in time
-- order: fits, and what the run and the series hold, for a message when none or several fit.
WITH series AS (
    SELECT min(ts_ns) AS start_ns, max(ts_ns) AS end_ns,
           list(DISTINCT host) FILTER (WHERE host IS NOT NULL) AS hosts,
           list(DISTINCT device_id) FILTER (WHERE device_id IS NOT NULL) AS devices,
           list(DISTINCT coalesce(host, '') || ':' || device_id) FILTER (WHERE device_id IS NOT NULL)
               AS gpus
    FROM store.samples WHERE file_id = getvariable('file_id')
),
spans AS (
    SELECT o.run_id, min(o.start_ns) AS start_ns, max(o.end_ns) AS end_ns
    FROM gpu_ops o JOIN store.sources s USING (file_id)
    WHERE s.has_utc AND o.run_id <> getvariable('run_id')
    GROUP BY o.run_id
),
gpus AS (  -- the run's GPUs, on the series' hosts when it names any
    SELECT k.run_id,
           list(DISTINCT k.host) FILTER (WHERE k.host IS NOT NULL) AS hosts,
           bool_and(k.device_id IS NULL
                    OR (len(x.devices) = 0 OR list_contains(x.devices, k.device_id))
                       AND (len(x.hosts) = 0 OR k.host IS NULL
                            OR list_contains(x.gpus, k.host || ':' || k.device_id)
                            OR NOT list_contains(x.hosts, k.host)))
               AS gpus_sampled,
           len(x.hosts) = 0 OR bool_or(k.host IS NULL OR list_contains(x.hosts, k.host)) AS host_shared
    FROM store.ranks k CROSS JOIN series x
    GROUP BY k.run_id, x.hosts
)
SELECT s.run_id,
       s.start_ns < x.end_ns AND x.start_ns < s.end_ns AND coalesce(g.gpus_sampled AND g.host_shared, true)
           AS fits,
       s.start_ns, s.end_ns, g.hosts,
       x.start_ns AS series_start_ns, x.end_ns AS series_end_ns, x.hosts AS series_hosts
FROM spans s CROSS JOIN series x LEFT JOIN gpus g USING (run_id)
ORDER BY s.start_ns, s.run_id;
