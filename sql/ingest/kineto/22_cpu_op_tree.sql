-- The CPU ops' tree (cpu_ops.depth, parent_id, self_ns), made once per file here: swept on every
-- read of cpu_ops, it cost about 1.5 CPU s per million ops (74 CPU s for op_summary on 16.8 M).
-- The rule is range_nesting's (sql/lib/range_nesting.sql, documented in sql/views/cpu_ops.sql);
-- a file's ops share one host pid, so its threads are its tids. migrations/0017 made the same
-- tree for ops stored before it.
-- Out: temp table _kineto_cpu_op_tree (op_no, depth, parent_no, self_ns), read by store.sql.
CREATE OR REPLACE TEMP TABLE _cpu_op_spans_file AS
SELECT event_no AS range_id, 0 AS pid, tid, start_ns, start_ns + dur_ns AS end_ns
FROM _ev WHERE kind = 'cpu_op';

CREATE OR REPLACE TEMP TABLE _kineto_cpu_op_tree AS
WITH nested AS (
    SELECT s.range_id AS op_no, s.start_ns, s.end_ns, CAST(n.depth AS INTEGER) AS depth,
           n.parent_id AS parent_no
    FROM _cpu_op_spans_file s JOIN range_nesting('_cpu_op_spans_file') n USING (range_id)
), children AS (
    -- the time of each op's children inside it (children that overlap each other count twice)
    SELECT c.parent_no AS op_no, sum(greatest(least(c.end_ns, p.end_ns) - c.start_ns, 0)) AS child_ns
    FROM nested c JOIN nested p ON p.op_no = c.parent_no
    GROUP BY c.parent_no
)
SELECT op_no, depth, parent_no,
       CAST(greatest(end_ns - start_ns - coalesce(child_ns, 0), 0) AS BIGINT) AS self_ns
FROM nested LEFT JOIN children USING (op_no);
DROP TABLE _cpu_op_spans_file;
