-- 0015: what made each allocation, by ids that outlive `tracewh remove` (issue 20).
-- store.cpu_ops.op_id: file_id * 2^32 + the op's ordinal in its file (ingest: its place among
-- the file's events, as nvtx_ranges.range_id; rows stored before 0015: among the file's ops, in
-- stored order). The cpu_ops view gave the table's rowid, which a removal renumbers.
-- store.memory_events.cpu_op_id, nvtx_range_id: the innermost CPU op (cpu_ops.op_id) and the
-- innermost NVTX push/pop range or user annotation (nvtx_ranges.range_id, of the same file) on
-- the event's thread at its time, by the rule of those views' trees: the event is a mark among
-- the thread's ranges (sql/lib/range_nesting.sql, copied below as it is at 0015: a migration is
-- frozen; ingest sets both through the library macro, sql/ingest/memory_context.sql).
ALTER TABLE store.cpu_ops ADD COLUMN op_id BIGINT;
UPDATE store.cpu_ops SET op_id = n.op_id
FROM (SELECT rowid AS row_id,
             file_id * 4294967296 + row_number() OVER (PARTITION BY file_id ORDER BY rowid) AS op_id
      FROM store.cpu_ops) n
WHERE store.cpu_ops.rowid = n.row_id;

ALTER TABLE store.memory_events ADD COLUMN cpu_op_id BIGINT;
ALTER TABLE store.memory_events ADD COLUMN nvtx_range_id BIGINT;

CREATE TEMP MACRO _nesting_0015(ranges) AS TABLE
WITH spans AS (
    SELECT range_id, pid, tid, start_ns,
           coalesce(end_ns, 9223372036854775807) AS stop_ns,
           end_ns IS NULL OR end_ns > start_ns AS encloses
    FROM query_table(ranges)
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
), starts AS (
    SELECT range_id, pid, tid, depth, seq, encloses FROM ordered WHERE phase = 1
)
SELECT child.range_id, child.depth, parent.range_id AS parent_id
FROM starts child
ASOF LEFT JOIN (SELECT * FROM starts WHERE encloses) parent
    ON parent.pid IS NOT DISTINCT FROM child.pid AND parent.tid IS NOT DISTINCT FROM child.tid
   AND parent.depth = child.depth - 1 AND child.seq >= parent.seq;

-- the events as marks (ids below 0, apart from the ranges'), each thread keyed by file and rank
CREATE TEMP TABLE _points_0015 AS
SELECT -1 - rowid AS range_id, file_id * 4294967296 + rank AS pid, tid, start_ns,
       start_ns AS end_ns
FROM store.memory_events;
CREATE TEMP TABLE _ops_0015 AS
SELECT op_id AS range_id, file_id * 4294967296 + rank AS pid, tid, start_ns, end_ns
FROM store.cpu_ops o
WHERE (file_id * 4294967296 + rank, tid) IN (SELECT DISTINCT pid, tid FROM _points_0015);
-- nvtx range ids are unique within their file: made unique here, taken apart below
CREATE TEMP TABLE _ranges_0015 AS
SELECT file_id * 4294967296 + range_id AS range_id, file_id * 4294967296 + rank AS pid, tid,
       start_ns, end_ns
FROM store.nvtx_ranges
WHERE kind IN ('push_pop', 'annotation')
  AND (file_id * 4294967296 + rank, tid) IN (SELECT DISTINCT pid, tid FROM _points_0015);

UPDATE store.memory_events SET cpu_op_id = n.cpu_op_id, nvtx_range_id = n.nvtx_range_id
FROM (SELECT -1 - p.range_id AS row_id, o.parent_id AS cpu_op_id,
             r.parent_id % 4294967296 AS nvtx_range_id
      FROM _points_0015 p
      LEFT JOIN _nesting_0015(['_ops_0015', '_points_0015']) o USING (range_id)
      LEFT JOIN _nesting_0015(['_ranges_0015', '_points_0015']) r USING (range_id)) n
WHERE store.memory_events.rowid = n.row_id;

DROP TABLE _points_0015;
DROP TABLE _ops_0015;
DROP TABLE _ranges_0015;
DROP MACRO TABLE _nesting_0015;
