-- uses: none
-- critical_path_walk: the critical path of each graph of a table: from its last node (largest
-- aligned_ns), each node's blocking predecessor, back to a node without one. The blocking
-- predecessor is the input that arrives last: largest src_ts + weight_ns (a weighted edge
-- arrives at its node's time, a weight-0 dependency or sync edge when its source happened),
-- then the latest source. In a graph scheduled as soon as possible (every node at the latest
-- arrival of its inputs) that chain is a longest path to the last node (the critical path
-- method); tests/test_critical_path.py checks it against a brute-force longest path.
-- Pointer doubling: level k holds each node's 2^k-th predecessor (log2(depth) rounds of hash
-- joins), then the path's nodes are the last node and, for k = K..0, the 2^k-th predecessors of
-- the nodes found so far: O(n log n) in nodes, never a walk of one node per round.
-- @arg graph  a table or CTE with grp, dst, src, src_ts, dst_ts, weight_ns, aligned_ns (the
--             destination's time comparable across the graph's ranks) and any other columns
-- @column the graph's columns of each edge on the path, and seq (1 = first edge)
CREATE OR REPLACE MACRO critical_path_walk(graph) AS TABLE
WITH RECURSIVE
edges AS MATERIALIZED (SELECT * FROM query_table(graph)),
blocking AS MATERIALIZED (
    SELECT dst, arg_max(edges, (src_ts + weight_ns, src_ts, src)) AS e FROM edges GROUP BY dst
),
last_node AS (
    SELECT grp, arg_max(dst, (aligned_ns, dst)) AS node FROM edges GROUP BY grp
),
levels(node, k, anc) USING KEY (node, k) AS (
    SELECT dst, 0, e.src FROM blocking
    UNION
    SELECT l.node, l.k + 1, r.anc
    FROM levels l JOIN recurring.levels r ON r.node = l.anc AND r.k = l.k
),
top AS (SELECT coalesce(max(k), 0) + 1 AS k FROM levels),
path(node, k) USING KEY (node) AS (
    SELECT node, (SELECT k FROM top) FROM last_node
    UNION
    SELECT unnest(CASE WHEN l.anc IS NULL THEN [p.node] ELSE [p.node, l.anc] END), p.k - 1
    FROM path p LEFT JOIN levels l ON l.node = p.node AND l.k = p.k - 1
    WHERE p.k > 0
)
SELECT x.*, row_number() OVER (PARTITION BY x.grp ORDER BY x.dst_ts, x.src_ts, x.dst) AS seq
FROM (SELECT unnest(b.e) FROM path p JOIN blocking b ON b.dst = p.node) x;
