-- 0017: the CPU ops' tree stored (issue 18): store.cpu_ops.depth, parent_id and self_ns, by the
-- rule the cpu_ops view swept on every read until now (sql/lib/range_nesting.sql, copied below
-- as it is at 0017: a migration is frozen; ingest makes the tree in
-- sql/ingest/kineto/22_cpu_op_tree.sql). Threads are keyed by file, pid and tid, as the view's
-- _cpu_op_spans keyed them.
ALTER TABLE store.cpu_ops ADD COLUMN depth INTEGER;
ALTER TABLE store.cpu_ops ADD COLUMN parent_id BIGINT;
ALTER TABLE store.cpu_ops ADD COLUMN self_ns BIGINT;

CREATE TEMP MACRO _nesting_0017(ranges) AS TABLE
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

CREATE TEMP TABLE _spans_0017 AS
SELECT op_id AS range_id, file_id * 4294967296 + coalesce(pid, 0) AS pid, tid, start_ns, end_ns
FROM store.cpu_ops;

CREATE TEMP TABLE _tree_0017 AS
WITH nested AS (
    SELECT s.range_id AS op_id, s.start_ns, s.end_ns, n.depth, n.parent_id
    FROM _spans_0017 s JOIN _nesting_0017('_spans_0017') n USING (range_id)
), children AS (
    SELECT c.parent_id AS op_id, sum(greatest(least(c.end_ns, p.end_ns) - c.start_ns, 0)) AS child_ns
    FROM nested c JOIN nested p ON p.op_id = c.parent_id
    GROUP BY c.parent_id
)
SELECT op_id, depth, parent_id,
       CAST(greatest(end_ns - start_ns - coalesce(child_ns, 0), 0) AS BIGINT) AS self_ns
FROM nested LEFT JOIN children USING (op_id);

UPDATE store.cpu_ops SET depth = t.depth, parent_id = t.parent_id, self_ns = t.self_ns
FROM _tree_0017 t WHERE store.cpu_ops.op_id = t.op_id;

DROP TABLE _spans_0017;
DROP TABLE _tree_0017;
DROP MACRO TABLE _nesting_0017;
