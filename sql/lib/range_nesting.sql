-- uses: none
-- Nesting of ranges per thread: depth (0 = outermost) and the tightest enclosing range.
-- Argument: the name of a table or view with columns range_id, pid, tid, start_ns, end_ns
-- (NULL = still open at the end of the capture; a mark is end_ns = start_ns). Returns range_id,
-- depth, parent_id for every row.
-- Algorithm, one sorted sweep per thread: each start opens a range, each end closes one; a
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
