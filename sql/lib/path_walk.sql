-- uses: none
-- critical_path_walk: the critical path of each graph of a table: from its last node (largest
-- aligned_ns; a node whose aligned_ns is NULL is never the last), each node's blocking predecessor, back to a node without one. The blocking
-- predecessor is the input that arrives last: largest src_ts + weight_ns (a weighted edge
-- arrives at its node's time, a weight-0 dependency or sync edge when its source happened),
-- then the latest source. In a graph scheduled as soon as possible (every node at the latest
-- arrival of its inputs) that chain is a longest path to the last node (the critical path
-- method); tests/test_critical_path.py checks it against a brute-force longest path.
-- How, without a walk of one node per round: the nodes of a lane (rank, lane: a thread or a
-- stream) in time order fall into segments, each starting at a node whose blocking predecessor
-- is not the lane's node before it; inside a segment the path follows the lane. The segments'
-- pointers (head -> the segment of its predecessor) are chased by pointer doubling (each
-- segment's 2^k-th predecessor: log2(depth) rounds of hash joins), then the path's segments
-- are the last node's and, for k = K..0, the 2^k-th predecessors of those found so far; each
-- holds the path from where the path enters it back to its head. O(n log n) in nodes (the
-- sorts per lane), O(s log s) in segments.
-- @arg graph  a table or CTE with edge_id (unique), grp, dst, src, src_ts, dst_ts, weight_ns,
--             aligned_ns (the destination's time comparable across the graph's ranks), rank
--             and lane (the destination's lane); other columns are not read (a caller joins
--             what it shows to the path's edge_id: the walk holds only these)
-- @column edge_id, grp, dst, src, src_ts, dst_ts, weight_ns, aligned_ns, rank, lane of each
--         edge on the path, and seq (1 = first edge)
CREATE OR REPLACE MACRO critical_path_walk(graph) AS TABLE
WITH RECURSIVE
edges AS MATERIALIZED (
    SELECT edge_id, grp, dst, src, src_ts, dst_ts, weight_ns, aligned_ns, rank, lane
    FROM query_table(graph)
),
blocking AS MATERIALIZED (
    SELECT grp, dst, input.src, input.edge_id, rank, lane, dst_ts
    FROM (SELECT grp, dst,
                 arg_max({'src': src, 'edge_id': edge_id}, (src_ts + weight_ns, src_ts, src)) AS input,
                 any_value(rank) AS rank, any_value(lane) AS lane, any_value(dst_ts) AS dst_ts
          FROM edges GROUP BY grp, dst)
),
-- a node starts a segment when its predecessor is not the lane's node before it; a segment
-- is numbered lane * 2^32 + its number in the lane
lanes AS (
    SELECT grp, rank, lane, row_number() OVER () AS lane_id
    FROM (SELECT DISTINCT grp, rank, lane FROM blocking)
),
laned AS (
    SELECT b.*, l.lane_id, row_number() OVER lane AS pos,
           b.src IS DISTINCT FROM lag(b.dst) OVER lane AS head
    FROM blocking b JOIN lanes l USING (grp, rank, lane)
    WINDOW lane AS (PARTITION BY l.lane_id ORDER BY b.dst_ts, b.dst)
),
-- the heads up to a node, counted without a running sum (DuckDB's is several times slower
-- than a row number): a head's number among the lane's heads, else its position less its
-- number among the lane's other nodes
nodes AS MATERIALIZED (
    SELECT grp, dst, src, edge_id, pos, head,
           lane_id * 4294967296 + CASE WHEN head THEN nth ELSE pos - nth END AS seg
    FROM (SELECT *, row_number() OVER (PARTITION BY lane_id, head ORDER BY pos) AS nth FROM laned)
),
-- each segment: its head's predecessor (where the path goes on) and that node's segment
segments AS MATERIALIZED (
    SELECT h.seg, h.src AS exit_node, n.seg AS next_seg
    FROM nodes h LEFT JOIN nodes n ON n.dst = h.src
    WHERE h.head
),
last_node AS (
    SELECT e.grp, arg_max(e.dst, (e.aligned_ns, e.dst)) FILTER (WHERE e.aligned_ns IS NOT NULL) AS node
    FROM edges e GROUP BY e.grp
),
levels(seg, k, anc) USING KEY (seg, k) AS (
    SELECT seg, 0, next_seg FROM segments WHERE next_seg IS NOT NULL
    UNION ALL
    SELECT l.seg, l.k + 1, r.anc
    FROM levels l JOIN recurring.levels r ON r.seg = l.anc AND r.k = l.k
),
ancestors AS MATERIALIZED (
    SELECT seg, list(anc ORDER BY k) AS anc FROM levels GROUP BY seg
),
top AS (SELECT coalesce(max(k), 0) + 1 AS k FROM levels),
path_segments(seg, k) USING KEY (seg) AS (
    SELECT n.seg, (SELECT k FROM top) FROM last_node l JOIN nodes n ON n.dst = l.node
    UNION ALL
    SELECT unnest(CASE WHEN a.anc[p.k] IS NULL THEN [p.seg] ELSE [p.seg, a.anc[p.k]] END),
           p.k - 1
    FROM path_segments p LEFT JOIN ancestors a ON a.seg = p.seg
    WHERE p.k > 0
),
-- where the path enters each of its segments: the last node, or the exit of the path's
-- segment after it
entries AS (
    SELECT n.seg, n.pos
    FROM last_node l JOIN nodes n ON n.dst = l.node
    UNION ALL
    SELECT n.seg, n.pos
    FROM path_segments p JOIN segments s ON s.seg = p.seg
    JOIN nodes n ON n.dst = s.exit_node
)
SELECT e.*, row_number() OVER (PARTITION BY e.grp ORDER BY e.dst_ts, e.src_ts, e.dst) AS seq
FROM entries en JOIN nodes n ON n.seg = en.seg AND n.pos <= en.pos
JOIN edges e ON e.edge_id = n.edge_id;
