-- NVTX ranges and marks of one nsys export -> store.nvtx_ranges, and the iterations they mark.
-- In: _nsys_nvtx, _nsys_strings, _nsys_ranks(pid, rank); variables run_id, file_id, origin_ns.
-- Out: temp tables _nvtx (this file's ranges) and _iterations (pid, iteration, start_ns, end_ns).

CREATE OR REPLACE TEMP TABLE _nvtx AS
WITH domains AS (
    -- NvtxDomainCreate (eventType 75) names a domain; domain ids are per process.
    SELECT (e.globalTid >> 24) & 16777215 AS pid, e.domainId,
           any_value(coalesce(e.text, s.value)) AS domain
    FROM _nsys_nvtx e LEFT JOIN _nsys_strings s ON s.id = e.textId
    WHERE e.eventType = 75
    GROUP BY ALL
), events AS (
    SELECT e.rowid AS range_id,
           (e.globalTid >> 24) & 16777215 AS pid,
           e.globalTid & 16777215 AS tid,
           e.start + getvariable('origin_ns') AS start_ns,
           CASE WHEN e.eventType <> 34 THEN e."end" + getvariable('origin_ns') END AS end_ns,
           coalesce(e.text, s.value) AS name,
           e.domainId,
           CASE e.eventType
               WHEN 59 THEN 'push_pop' WHEN 70 THEN 'push_pop'
               WHEN 60 THEN 'start_end' WHEN 71 THEN 'start_end'
               WHEN 34 THEN 'mark'
           END AS kind,
           e.category, e.color
    FROM _nsys_nvtx e LEFT JOIN _nsys_strings s ON s.id = e.textId
    WHERE e.eventType IN (34, 59, 60, 70, 71)
)
SELECT ev.range_id, r.rank, ev.pid, ev.tid, ev.start_ns, ev.end_ns,
       -- Without its create event (outside a sliced window) NCCL's domain is still known by
       -- its API names.
       coalesce(d.domain, CASE WHEN ev.domainId <> 0 AND ev.name LIKE 'nccl%' THEN 'NCCL' END) AS domain,
       ev.name, ev.kind, ev.category, ev.color
FROM events ev
JOIN _nsys_ranks r ON r.pid = ev.pid
LEFT JOIN domains d ON d.pid = ev.pid AND d.domainId = ev.domainId AND ev.domainId <> 0;

-- Nesting of push/pop ranges and marks per thread, by one sorted sweep: each start opens a
-- range, each end closes one; a range's depth is the number of ranges open just before it
-- starts. Ends sort before starts at the same instant (back-to-back ranges are siblings), and
-- starts at one instant sort longest first (the outer range). Zero-length ranges and marks
-- never enclose anything. Unterminated ranges stay open to the end.
CREATE OR REPLACE TEMP TABLE _nvtx_depth AS
WITH spans AS (
    SELECT range_id, pid, tid, start_ns,
           coalesce(end_ns, 9223372036854775807) AS stop_ns,
           coalesce(end_ns, 9223372036854775807) > start_ns AS encloses
    FROM _nvtx WHERE kind IN ('push_pop', 'mark')
), sweep AS (
    SELECT range_id, pid, tid, start_ns AS ts, 1 AS phase, stop_ns AS len_key,
           CASE WHEN encloses THEN 1 ELSE 0 END AS delta, encloses
    FROM spans
    UNION ALL
    SELECT range_id, pid, tid, stop_ns, 0, 0, -1, encloses
    FROM spans WHERE encloses AND stop_ns < 9223372036854775807
), ordered AS (
    SELECT *,
           coalesce(sum(delta) OVER w_before, 0) AS depth,
           row_number() OVER w_all AS seq
    FROM sweep
    WINDOW w_all AS (PARTITION BY pid, tid ORDER BY ts, phase, len_key DESC, range_id),
           w_before AS (w_all ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
)
SELECT range_id, pid, tid, depth, seq, encloses FROM ordered WHERE phase = 1;

INSERT INTO store.nvtx_ranges
SELECT getvariable('run_id'), n.rank, getvariable('file_id'), n.range_id, n.pid, n.tid,
       n.start_ns, n.end_ns, n.domain, n.name, n.kind, child.depth, parent.range_id,
       n.category, n.color, NULL
FROM _nvtx n
LEFT JOIN _nvtx_depth child ON child.range_id = n.range_id
-- The parent is the last enclosing-capable range one level up that started before the child.
ASOF LEFT JOIN (SELECT * FROM _nvtx_depth WHERE encloses) parent
    ON parent.pid = child.pid AND parent.tid = child.tid
   AND parent.depth = child.depth - 1 AND child.seq >= parent.seq;

CREATE OR REPLACE TEMP TABLE _iterations AS
SELECT pid, iteration_number(name) AS iteration, start_ns,
       coalesce(end_ns, 9223372036854775807) AS end_ns
FROM _nvtx
WHERE kind IN ('push_pop', 'start_end') AND iteration_number(name) IS NOT NULL;
