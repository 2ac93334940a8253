-- NVTX ranges and marks of the staged nsys exports -> _nsys_store_nvtx_ranges (store.sql writes
-- it), and the iterations they mark. Every script of this folder maps a batch of exports
-- (05_processes.sql) into temp tables _nsys_store_<stored table>: the stored table's columns,
-- run_id, rank and file_id left for store.sql, which gives them by file_key and pid.
-- Out: temp tables _nsys_store_nvtx_ranges and _iterations (file_key, pid, iteration, start_ns,
-- end_ns).

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
SELECT ev.file_key, ev.range_id, ev.pid, ev.tid,
       ev.start + f.origin_ns AS start_ns, ev."end" + f.origin_ns AS end_ns,
       -- Without its create event (outside a sliced window) NCCL's domain is still known by
       -- its API names; nsys stats then prints no domain, so the guess is marked.
       coalesce(d.domain, CASE WHEN ev.domainId <> 0 AND ev.name LIKE 'nccl%' THEN 'NCCL' END) AS domain,
       d.domain IS NULL AND ev.domainId <> 0 AND ev.name LIKE 'nccl%' AS domain_guessed,
       ev.name, ev.kind, ev.category, ev.color
FROM events ev
JOIN _nsys_processes p ON p.file_key = ev.file_key AND p.pid = ev.pid
JOIN _nsys_files f ON f.file_key = ev.file_key
LEFT JOIN domains d
       ON d.file_key = ev.file_key AND d.pid = ev.pid AND d.domainId = ev.domainId AND ev.domainId <> 0;
-- the export's rows are read: freed now, not at the end (a decoding thread holds the mapped rows
-- until the writer takes them, and the NVTX events are most of an autograd-NVTX export)
DROP TABLE _nsys_nvtx;

-- Depth and parent of push/pop ranges and marks on their thread (start/end ranges may cross
-- threads and overlap: they get none). A range and a process are named with their export's key
-- in one BIGINT each (range ids are export row ids, pids 24 bits): the sweep sorts and joins on
-- them, which costs a third more with (file_key, id) structs.
CREATE OR REPLACE TEMP VIEW _nvtx_nested AS
SELECT file_key * 4294967296 + range_id AS range_id, file_key * 16777216 + pid AS pid, tid,
       start_ns, CASE WHEN kind = 'mark' THEN start_ns ELSE end_ns END AS end_ns  -- a mark is a point
FROM _nvtx WHERE kind IN ('push_pop', 'mark');

CREATE OR REPLACE TEMP TABLE _nsys_store_nvtx_ranges AS
SELECT n.file_key, n.range_id, n.pid, n.tid, n.start_ns, n.end_ns, n.domain, n.domain_guessed,
       n.name, n.kind, nest.depth, nest.parent_id - n.file_key * 4294967296 AS parent_id,
       n.category, n.color
FROM _nvtx n
LEFT JOIN range_nesting('_nvtx_nested') nest ON nest.range_id = n.file_key * 4294967296 + n.range_id;
DROP VIEW _nvtx_nested;
DROP TABLE _nvtx;

CREATE OR REPLACE TEMP TABLE _iterations AS
SELECT file_key, pid, iteration_number(name) AS iteration, start_ns,
       coalesce(end_ns, 9223372036854775807) AS end_ns
FROM _nsys_store_nvtx_ranges
WHERE kind IN ('push_pop', 'start_end') AND iteration_number(name) IS NOT NULL;
