-- The CPU ops' tree (cpu_ops.depth, parent_id, self_ns), made once per file here: swept on every
-- read of cpu_ops, it cost about 1.5 CPU s per million ops (74 CPU s for op_summary on 16.8 M).
-- The rule is range_nesting's (sql/lib/range_nesting.sql, documented in sql/views/cpu_ops.sql;
-- migrations/0017 made the same tree for ops stored before it, and tests/test_link_layer.py
-- checks the two agree), swept here for one file: its ops share one host pid, so its threads
-- are its tids, and each op's as-of match carries its parent's end, which self_ns needs (the
-- macro and the joins back to the ops, then the writer's join of the tree to the ops, cost
-- 0.38 + 0.16 CPU s per 100 MB file of the Kineto bench; this 0.22).
-- Out: temp table _ev_op_tree, one row per event in event order (NULLs for other events), the
-- side table that the staged view _kineto_cpu_ops reads beside _ev_rows; that view.

-- The sweep: each op's start, and the end of each op that can enclose another (longer than
-- 0 ns), in one sort; an op's depth is the number of ops open just before it starts.
CREATE OR REPLACE TEMP TABLE _op_starts AS
WITH spans AS (
    SELECT event_no AS op_no, tid, start_ns, start_ns + dur_ns AS stop_ns, dur_ns > 0 AS encloses
    FROM _ev WHERE kind = 'cpu_op'
), sweep AS (
    SELECT op_no, tid, start_ns AS ts, 1 AS phase, stop_ns AS len_key, start_ns, stop_ns,
           CASE WHEN encloses THEN 1 ELSE 0 END AS delta, encloses
    FROM spans
    UNION ALL
    SELECT op_no, tid, stop_ns, 0, 0, start_ns, stop_ns, -1, encloses FROM spans WHERE encloses
)
SELECT op_no, tid, start_ns, stop_ns, encloses, depth, seq
FROM (
    -- one sort, then running sums in its order (a frame ending at the current row streams)
    SELECT *, sum(delta) OVER (ROWS UNBOUNDED PRECEDING) - delta AS depth,
           row_number() OVER () AS seq
    FROM (SELECT * FROM sweep ORDER BY tid, ts, phase, len_key DESC, op_no)
)
WHERE phase = 1;

-- The parent: the last op one level up that started before the op and can enclose it; it is on
-- the op's thread without asking (each thread's sweep starts at depth 0, so an op at depth d > 0
-- has an op at depth d - 1 before it on its own thread). An op's self time: its time less the
-- part of each child inside it. The rows are laid out in event order with the other events'
-- (a union, then one sort: a join to the events cost a third more).
CREATE OR REPLACE TEMP TABLE _ev_op_tree AS
WITH linked AS (
    SELECT c.op_no, c.depth, p.op_no AS parent_no, c.start_ns, c.stop_ns AS end_ns,
           greatest(least(c.stop_ns, p.stop_ns) - c.start_ns, 0) AS inside_parent_ns
    FROM _op_starts c
    ASOF LEFT JOIN (SELECT op_no, depth + 1 AS child_depth, seq, stop_ns
                    FROM _op_starts WHERE encloses) p
        ON p.child_depth = c.depth AND c.seq >= p.seq
), children AS (
    SELECT parent_no AS op_no, sum(inside_parent_ns) AS child_ns
    FROM linked WHERE parent_no IS NOT NULL GROUP BY parent_no
), ops AS (
    SELECT op_no, CAST(depth AS INTEGER) AS depth, parent_no,
           CAST(greatest(end_ns - start_ns - coalesce(child_ns, 0), 0) AS BIGINT) AS self_ns
    FROM linked LEFT JOIN children USING (op_no)
)
SELECT depth, parent_no, self_ns
FROM (SELECT * FROM ops
      UNION ALL
      SELECT rowid + 1, NULL, NULL, NULL FROM _ev_rows WHERE kind <> 'cpu_op')
ORDER BY op_no;
DROP TABLE _op_starts;

-- A view, not a table: the ops are most of the events, and copying their names and args once
-- more cost more than the writer reading them from _ev_rows (measured: 0.10 s CPU per 100 MB
-- file here against 0.07 s more in store.sql). So _ev and its tables stay until the writer is
-- done. The side tables line up with _ev_rows row for row (10_events.sql).
CREATE OR REPLACE TEMP VIEW _kineto_cpu_ops AS
SELECT e.rowid + 1 AS op_no, getvariable('host_pid') AS pid,
       e.tid, e.start_ns, e.start_ns + e.dur_ns AS end_ns, e.name,
       e.cat AS category,
       -- coalesce looks for the old spelling only where the new one is missing (a path list
       -- looks for both in every op: 20% slower)
       TRY_CAST(coalesce(json_extract_string(e.args, '$."External id"'),
                         json_extract_string(e.args, '$."external id"')) AS BIGINT) AS external_id,
       e.args, i.iteration, t.depth, t.parent_no, t.self_ns
FROM _ev_rows e POSITIONAL JOIN _ev_iteration i POSITIONAL JOIN _ev_op_tree t
WHERE e.kind = 'cpu_op';
