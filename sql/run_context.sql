-- One row per run with what tells it apart: when it was captured (UTC), how long, on which
-- hosts and GPUs, its iterations, the ranks present against the world size the traces state,
-- the warnings of its sources, and `note`: what looks wrong (ranks missing from the world
-- size, or files whose captures do not overlap in time, so perhaps not one job). Read by
-- `tracewh runs` and after `tracewh ingest`.
WITH spans AS (  -- each file's first GPU op start and last end
    SELECT run_id, file_id, min(start_ns) AS start_ns, max(end_ns) AS end_ns
    FROM gpu_ops GROUP BY run_id, file_id
),
ordered AS (
    SELECT s.*, src.has_utc, src.host,
           max(s.end_ns) OVER (PARTITION BY s.run_id ORDER BY s.start_ns, s.file_id
                               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before_end
    FROM spans s JOIN sources src USING (file_id)
),
apart AS (  -- files in time order; a file starting after all earlier ones ended is apart
    SELECT run_id,
           count(*) AS files,
           count(*) FILTER (WHERE before_end IS NULL OR start_ns > before_end) AS islands,
           count(DISTINCT host) AS hosts,
           count(DISTINCT CAST(to_timestamp(start_ns / 1e9) AS DATE)) AS days,
           min(start_ns) AS start_ns,
           max(end_ns) AS end_ns,
           bool_and(has_utc) AS has_utc
    FROM ordered GROUP BY run_id
),
warned AS (
    SELECT run_id, sum(len(string_split(warnings, '; '))) AS warnings
    FROM sources WHERE warnings IS NOT NULL GROUP BY run_id
)
SELECT
    r.run_id,
    CASE WHEN a.has_utc THEN strftime(to_timestamp(a.start_ns / 1e9), '%Y-%m-%d %H:%M:%S') END
        AS start_utc,
    a.end_ns - a.start_ns AS span_ns,
    (SELECT count(DISTINCT k.host) FROM ranks k WHERE k.run_id = r.run_id) AS hosts,
    (SELECT string_agg(n || ' x ' || name, ', ' ORDER BY name) FROM (
        SELECT d.name, count(*) AS n FROM devices d WHERE d.run_id = r.run_id GROUP BY d.name))
        AS gpus,
    (SELECT count(DISTINCT i.iteration) FROM iterations i WHERE i.run_id = r.run_id)
        AS iterations,
    r.world_size AS ranks,
    (SELECT max(k.world_size) FROM ranks k WHERE k.run_id = r.run_id) AS world_size,
    r.sources,
    CAST(coalesce(w.warnings, 0) AS BIGINT) AS warnings,
    nullif(concat_ws('; ',
        CASE WHEN r.world_size < (SELECT max(k.world_size) FROM ranks k WHERE k.run_id = r.run_id)
             THEN format('{} of {} ranks present', r.world_size,
                         (SELECT max(k.world_size) FROM ranks k WHERE k.run_id = r.run_id)) END,
        CASE WHEN a.files > 1 AND a.islands = a.files AND a.has_utc
             THEN format('{} files whose captures do not overlap in time ({} host(s), {} day(s))',
                         a.files, a.hosts, a.days) END), '') AS note
FROM runs r
LEFT JOIN apart a USING (run_id)
LEFT JOIN warned w USING (run_id)
ORDER BY r.run_id
