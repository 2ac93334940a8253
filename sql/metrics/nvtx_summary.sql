-- metric: nvtx_summary
-- version: 2
-- summary: Time per NVTX range name and style, as nsys stats -r nvtx_sum prints it
-- unit: ns
-- grain: run_id, rank, range, style
-- columns: run_id VARCHAR, rank INTEGER, time_pct DOUBLE, total_ns BIGINT, instances BIGINT, avg_ns DOUBLE, med_ns DOUBLE, min_ns BIGINT, max_ns BIGINT, stddev_ns DOUBLE, style VARCHAR, range VARCHAR, domain VARCHAR, name VARCHAR
-- params: run (text, optional), rank (int, optional), nvtx (text, optional), window (text, optional), start_ns (int, optional), end_ns (int, optional), top (int, default 0)
-- see: nsys stats -r nvtx_sum (nvtx_pushpop_sum, nvtx_startend_sum)
-- uses: nvtx_names, nvtx_ranges, summary_stats
-- complexity: O(R): one hash aggregate over the ranges, keyed by the name's integer (name_id);
--   no join of ranges to anything (the sources join is one row per file; names join per name)
-- show: range, time_pct, total_ns, instances, avg_ns, rank, run_id
--
-- One row per (range, style) on each rank, where range is nsys' `domain:name` (default domain:
-- `:name`; so is a domain whose NvtxDomainCreate event is not in the export, such as NCCL's in a
-- sliced capture: `:ncclSend`, while the domain column keeps the guess, NCCL) and style is
-- PushPop, StartEnd, or Annotation (Kineto user annotations). Ranges are grouped by the shown
-- domain and the name (a domain or name holding ':' that joins to another pair's text would print
-- two rows of one range text):
--   time_pct   this range's total x 100 / the total of all ranges of its run and rank (ranges
--              nest, so this is not a share of wall time)
--   instances, total_ns, avg_ns, med_ns, min_ns, max_ns, stddev_ns (sample; 0 for one instance)
-- Marks (no end), ranges still open at the end of the capture and Kineto's GPU-side copies of
-- annotations (kind gpu_annotation) are left out, as nvtx_sum does.
-- nvtx: a regular expression; only ranges whose name matches are kept (regexp_matches).
-- window (`4s420ms/35s390ms`, relative to each source's start) and start_ns / end_ns (UTC) keep
-- ranges that overlap the window, bounds included. top > 0 keeps the N ranges with the most time.
WITH picked AS (
    SELECT r.run_id, r.rank, r.domain, r.name_id, r.kind, r.dur_ns,
           -- nsys names a domain only from its create event: a guessed one prints as none
           CASE WHEN r.domain_guessed THEN '' ELSE coalesce(r.domain, '') END AS shown_domain
    FROM summary_rows(nvtx_ranges, getvariable('run'), getvariable('rank'), getvariable('window'),
                      getvariable('start_ns'), getvariable('end_ns')) r
    WHERE r.kind IN ('push_pop', 'start_end', 'annotation') AND r.end_ns IS NOT NULL
      AND (getvariable('nvtx') IS NULL
           OR r.name_id IN (SELECT name_id FROM nvtx_names
                            WHERE regexp_matches(name, CAST(getvariable('nvtx') AS VARCHAR)))
           OR (r.name_id IS NULL AND regexp_matches('', CAST(getvariable('nvtx') AS VARCHAR))))
),
per_name AS (
    -- grouped by the name's integer and the kind, not by the text and style built for each of
    -- the millions of ranges (the text is read once per name, below)
    SELECT
        run_id,
        rank,
        shown_domain,
        name_id,
        kind,
        min(domain) AS domain,
        CAST(sum(dur_ns) AS BIGINT) AS total_ns,
        count(*) AS instances,
        avg(dur_ns) AS avg_ns,
        median(dur_ns) AS med_ns,
        min(dur_ns) AS min_ns,
        max(dur_ns) AS max_ns,
        stddev_exact(dur_ns) AS stddev_ns
    FROM picked
    GROUP BY run_id, rank, shown_domain, name_id, kind
),
per_range AS (
    SELECT p.* EXCLUDE (shown_domain, name_id, kind), n.name,
           p.shown_domain || ':' || coalesce(n.name, '') AS range,
           CASE p.kind WHEN 'push_pop' THEN 'PushPop' WHEN 'start_end' THEN 'StartEnd'
                ELSE 'Annotation' END AS style
    FROM per_name p LEFT JOIN nvtx_names n USING (run_id, name_id)
)
SELECT
    run_id,
    rank,
    CAST(total_ns AS DOUBLE) * 100 / nullif(sum(total_ns) OVER per_rank, 0) AS time_pct,
    total_ns,             -- ns
    instances,
    avg_ns,               -- ns
    med_ns,               -- ns
    min_ns,               -- ns
    max_ns,               -- ns
    stddev_ns,            -- ns
    style,                -- PushPop | StartEnd | Annotation
    range,                -- domain:name, as nsys prints it
    domain,               -- NULL = default domain; NCCL also when guessed from the names
    name
FROM per_range
WINDOW per_rank AS (PARTITION BY run_id, rank)
QUALIFY coalesce(CAST(getvariable('top') AS BIGINT), 0) <= 0
     OR row_number() OVER (PARTITION BY run_id, rank ORDER BY total_ns DESC, range, style)
        <= CAST(getvariable('top') AS BIGINT)
ORDER BY run_id, rank, total_ns DESC, range, style;
