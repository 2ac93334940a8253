-- uses: none
-- Nesting of ranges per thread: depth (0 = outermost) and the tightest enclosing range.
-- Argument: the name of a table or view with columns range_id, pid, tid, start_ns, end_ns
-- (NULL = still open at the end of the capture; a mark is end_ns = start_ns). Returns range_id,
-- depth, parent_id for every row.
-- Algorithm, one sorted sweep over all threads: each start opens a range, each end closes one; a
-- range's depth is the number of ranges open just before it starts. Ends sort before starts at
-- the same instant (back-to-back ranges are siblings), and starts at one instant sort longest
-- first (the outer range). Zero-length ranges and marks never enclose anything. The parent is
-- the last enclosing-capable range one level up that started before the child.
CREATE OR REPLACE MACRO range_nesting(ranges) AS TABLE
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
    -- every enclosing range closes (one still open at the end of time), so each thread's count
    -- is back to 0 before the next thread's rows: one running sum serves all threads
    SELECT range_id, pid, tid, stop_ns, 0, 0, -1, encloses
    FROM spans WHERE encloses
), ordered AS (
    -- one sort, then a streaming scan in its order (empty OVER (), as sql/lib/intervals.sql
    -- does: partitioned running sums cost several times the sort)
    SELECT *,
           coalesce(sum(delta) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS depth,
           row_number() OVER () AS seq
    FROM (SELECT * FROM sweep ORDER BY pid, tid, ts, phase, len_key DESC, range_id)
), starts AS (
    SELECT range_id, pid, tid, depth, seq, encloses FROM ordered WHERE phase = 1
)
SELECT child.range_id, child.depth, parent.range_id AS parent_id
FROM starts child
ASOF LEFT JOIN (SELECT * FROM starts WHERE encloses) parent
    ON parent.pid IS NOT DISTINCT FROM child.pid AND parent.tid IS NOT DISTINCT FROM child.tid
   AND parent.depth = child.depth - 1 AND child.seq >= parent.seq;
