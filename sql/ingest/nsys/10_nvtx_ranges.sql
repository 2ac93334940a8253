-- NVTX ranges and marks of the staged nsys exports -> store.nvtx_ranges, and the iterations
-- they mark. Every script of this folder maps a batch of exports at once: staged rows carry their
-- export's file_key, and _nsys_ranks (file_key, pid -> rank, run_id, file_id, origin_ns) says
-- where each process's rows go (written by tracewh.ingest.nsys).
-- Out: temp tables _nvtx (the ranges) and _iterations (file_key, pid, iteration, start_ns, end_ns).

CREATE OR REPLACE TEMP TABLE _nvtx AS
WITH domains AS (
    -- NvtxDomainCreate (eventType 75) names a domain; domain ids are per process.
    SELECT e.file_key, (e.globalTid >> 24) & 16777215 AS pid, e.domainId,
           any_value(coalesce(e.text, s.value)) AS domain
    FROM _nsys_nvtx e LEFT JOIN _nsys_strings s ON s.file_key = e.file_key AND s.id = e.textId
    WHERE e.eventType = 75
    GROUP BY ALL
), events AS (
    SELECT e.file_key, e.rowid AS range_id,
           (e.globalTid >> 24) & 16777215 AS pid,
           e.globalTid & 16777215 AS tid,
           e.start, CASE WHEN e.eventType <> 34 THEN e."end" END AS "end",
           coalesce(e.text, s.value) AS name,
           e.domainId,
           CASE e.eventType
               WHEN 59 THEN 'push_pop' WHEN 70 THEN 'push_pop'
               WHEN 60 THEN 'start_end' WHEN 71 THEN 'start_end'
               WHEN 34 THEN 'mark'
           END AS kind,
           e.category, e.color
    FROM _nsys_nvtx e LEFT JOIN _nsys_strings s ON s.file_key = e.file_key AND s.id = e.textId
    WHERE e.eventType IN (34, 59, 60, 70, 71)
)
SELECT ev.file_key, r.run_id, r.file_id, ev.range_id, r.rank, ev.pid, ev.tid,
       ev.start + r.origin_ns AS start_ns, ev."end" + r.origin_ns AS end_ns,
       -- Without its create event (outside a sliced window) NCCL's domain is still known by
       -- its API names; nsys stats then prints no domain, so the guess is marked.
       coalesce(d.domain, CASE WHEN ev.domainId <> 0 AND ev.name LIKE 'nccl%' THEN 'NCCL' END) AS domain,
       d.domain IS NULL AND ev.domainId <> 0 AND ev.name LIKE 'nccl%' AS domain_guessed,
       ev.name, ev.kind, ev.category, ev.color
FROM events ev
JOIN _nsys_ranks r ON r.file_key = ev.file_key AND r.pid = ev.pid
LEFT JOIN domains d
       ON d.file_key = ev.file_key AND d.pid = ev.pid AND d.domainId = ev.domainId AND ev.domainId <> 0;

-- Depth and parent of push/pop ranges and marks on their thread (start/end ranges may cross
-- threads and overlap: they get none). A range and a process are named with their export's key.
CREATE OR REPLACE TEMP VIEW _nvtx_nested AS
SELECT {'file_key': file_key, 'range_id': range_id} AS range_id,
       {'file_key': file_key, 'pid': pid} AS pid, tid, start_ns,
       CASE WHEN kind = 'mark' THEN start_ns ELSE end_ns END AS end_ns  -- a mark is a point
FROM _nvtx WHERE kind IN ('push_pop', 'mark');

INSERT INTO store.nvtx_ranges BY NAME
SELECT n.run_id, n.rank, n.file_id, n.range_id,
       n.pid, n.tid, n.start_ns, n.end_ns, n.domain, n.domain_guessed, n.name, n.kind, nest.depth,
       nest.parent_id.range_id AS parent_id, n.category, n.color
FROM _nvtx n
LEFT JOIN range_nesting('_nvtx_nested') nest
       ON nest.range_id = {'file_key': n.file_key, 'range_id': n.range_id};

CREATE OR REPLACE TEMP TABLE _iterations AS
SELECT file_key, pid, iteration_number(name) AS iteration, start_ns,
       coalesce(end_ns, 9223372036854775807) AS end_ns
FROM _nvtx
WHERE kind IN ('push_pop', 'start_end') AND iteration_number(name) IS NOT NULL;
