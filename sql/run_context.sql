-- One row per run with what tells it apart: when it was captured (UTC), how long, on which
-- hosts and GPUs, its iterations, the ranks present against the world size the traces state,
-- the warnings of its sources, and `note`: what looks wrong (ranks missing from the world
-- size, or files whose captures do not overlap in time, so perhaps not one job). Read by
-- `tracewh runs` and after `tracewh ingest`. Aggregates joined, not correlated subqueries:
-- `tracewh runs` should answer at once. The runs and their counts are those of the `runs` view,
-- read from store.* because that view's configuration columns (parallel_groups) cost more than
-- the rest of this query.
WITH counted AS (
    SELECT r.run_id, coalesce(k.n, 0) AS world_size, coalesce(s.n, 0) AS sources
    FROM store.runs r
    LEFT JOIN (SELECT run_id, count(*) AS n FROM store.ranks GROUP BY run_id) k USING (run_id)
    LEFT JOIN (SELECT run_id, count(*) AS n FROM store.sources GROUP BY run_id) s USING (run_id)
),
spans AS (  -- each file's first GPU op start and last end
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
),
per_rank AS (
    SELECT run_id, count(DISTINCT host) AS hosts, max(world_size) AS world_size
    FROM ranks GROUP BY run_id
),
gpus AS (
    SELECT run_id, string_agg(n || ' x ' || name, ', ' ORDER BY name) AS gpus
    FROM (SELECT run_id, name, count(*) AS n FROM devices GROUP BY run_id, name)
    GROUP BY run_id
),
steps AS (
    SELECT run_id, count(DISTINCT iteration) AS iterations FROM iterations GROUP BY run_id
)
SELECT
    r.run_id,
    CASE WHEN a.has_utc THEN strftime(to_timestamp(a.start_ns / 1e9), '%Y-%m-%d %H:%M:%S') END
        AS start_utc,
    a.end_ns - a.start_ns AS span_ns,
    coalesce(k.hosts, 0) AS hosts,
    g.gpus,
    coalesce(i.iterations, 0) AS iterations,
    r.world_size AS ranks,
    k.world_size,
    r.sources,
    CAST(coalesce(w.warnings, 0) AS BIGINT) AS warnings,
    nullif(concat_ws('; ',
        CASE WHEN r.world_size < k.world_size
             THEN format('{} of {} ranks present', r.world_size, k.world_size) END,
        CASE WHEN a.files > 1 AND a.islands = a.files AND a.has_utc
             THEN format('{} files whose captures do not overlap in time ({} host(s), {} day(s))',
                         a.files, a.hosts, a.days) END), '') AS note
FROM counted r
LEFT JOIN apart a USING (run_id)
LEFT JOIN warned w USING (run_id)
LEFT JOIN per_rank k USING (run_id)
LEFT JOIN gpus g USING (run_id)
LEFT JOIN steps i USING (run_id)
ORDER BY r.run_id
