-- uses: none
-- Interval building blocks, written once and called by every busy / idle / overlap metric:
--   intervals_union(t)            merged busy islands (+ the gap before each)
--   intervals_flatten(t)          the timeline by top priority layer (compute > comm > ...)
--   intervals_breakdown(t)        per group: time of each of layers 0-2 and the rest, and busy time
--   intervals_window_breakdown(t, windows)  the same per window (iterations), skipping lone intervals
--   intervals_intersect(a, b)     U a n U b as pieces
--   intervals_difference(a, b)    U a \ U b as pieces
--   intervals_overlap_sum(t)      intervals (and a value) in flight, as a step function
--   intervals_overlap_count(t)    intervals in flight, as a step function
--   intervals_tile(spans)         spans stretched to tile a timeline (iterations)
--   intervals_clip(t, windows)    intervals cut to windows (tiles, bins)
--   _intervals_islands(t)         (internal) each interval's place among its group's islands
--
-- Every macro takes the NAME of a table, view or CTE (DuckDB's query_table), so a metric writes
--     WITH ops AS (SELECT grp, start_ns, end_ns FROM ...)  SELECT * FROM intervals_union(ops)
-- and the same call works in the plain DuckDB shell. The input is a set of intervals with:
--     grp        the group to work in: intervals of different groups never interact. An
--                integer (BIGINT range), never NULL: callers map (run_id, rank, ...) to an integer key
--                first. Per-iteration work groups by rank and cuts the timeline with
--                intervals_clip (flatten keeps each piece's window_id)
--     start_ns   interval start (BIGINT, ns)
--     end_ns     interval end (BIGINT, ns); intervals are closed [start_ns, end_ns]
-- Conventions shared by every macro:
--   * Rows with a NULL start or end, or end_ns < start_ns, are ignored.
--   * Touching intervals ([a, b] and [b, c]) form one busy stretch: no gap between them.
--   * Zero-length intervals ([t, t]) have no length. They join any interval they touch; alone
--     they form a zero-length island in intervals_union and add no time anywhere.
--   * Identical intervals count once in lengths (union semantics), each in overlap counts.
--   * Macros that pass other input columns through (union, flatten, clip) keep their names;
--     inputs must not use the names the macros add (intervals_merged, prev_end_ns, window_id
--     where noted) or start with __iv_.
-- Algorithms are sort-based, never self-joins: each pass sorts its rows once (ORDER BY group,
-- time) and computes running maxima and cumulative +1/-1 sums in one streaming scan over the
-- sorted rows. The scan uses window functions with an empty OVER (), which keep the order of
-- their input (DuckDB's documented order preservation), instead of PARTITION BY grp ORDER BY:
-- DuckDB evaluates partitioned running aggregates with segment trees, 3-4x the cost of the sort
-- on millions of rows. Groups stay apart by folding the group into the value (_iv_key) so that a
-- running max never carries one group's value into the next; a running sum needs no such care,
-- since every group's +1/-1 deltas cancel before the next group starts.
-- Those scans are single-threaded, so each public macro splits its groups into two lanes
-- (_iv_lane) and runs the same pass on each, UNION ALL: DuckDB executes the halves in parallel.
-- All start with the same pass (_intervals_islands), which finds the intervals that are alone in
-- their island: on GPU timelines nearly all of them, since kernels of one stream run back to
-- back with small gaps. Those are answered directly; only the intervals of islands with several
-- members go through the costlier second pass.
-- References: Perfetto's intervals/overlap.sql and intervals/intersect.sql; HolisticTraceAnalysis'
-- merge_kernel_intervals and temporal breakdown (per-kind merged intervals, bitmask sweep).


-- _iv_key(g, v): group g (an integer) and value v (BIGINT) as one HUGEINT ordered by g, then v;
-- the keys of group g lie in [g * 2^64, (g + 1) * 2^64). A running max of keys over rows sorted by
-- group therefore is, within each group, the running max of its own values.
CREATE OR REPLACE MACRO _iv_key(g, v) AS
    CAST(g AS HUGEINT) * 18446744073709551616 + CAST(v AS HUGEINT) + 9223372036854775808;

-- _iv_value(key, g): the value of a key made by _iv_key, when the key is of group g (NULL when
-- it is NULL or of an earlier group: nothing of g was seen yet).
CREATE OR REPLACE MACRO _iv_value(key, g) AS
    CASE WHEN key >= CAST(g AS HUGEINT) * 18446744073709551616
         THEN CAST(key - CAST(g AS HUGEINT) * 18446744073709551616 - 9223372036854775808 AS BIGINT)
    END;


-- _intervals_islands(intervals): every valid input row with its place among its group's islands,
-- in (grp, start_ns, end_ns) order.
-- Output: the input's columns plus
--     __iv_reach   latest end_ns of the group's earlier rows (NULL for the first row); when the
--                  row starts an island, the end of the previous island
--     __iv_pos     the row's position in (grp, start_ns, end_ns) order: consecutive within a group
--     __iv_first   the row starts an island (it starts after __iv_reach)
--     __iv_last    the row ends an island (the next row starts after everything so far ends)
-- A row with __iv_first AND __iv_last is alone in its island: nothing else overlaps or touches it.
CREATE OR REPLACE MACRO _intervals_islands(intervals) AS TABLE
-- keys (_iv_key) compare across groups too: a row of an earlier group is always below, so
-- "starts after the reach of the rows before it" needs no group test
SELECT * EXCLUDE (__iv_key, __iv_start_key, __iv_prev_key, __iv_next_start_key),
       _iv_value(__iv_prev_key, grp) AS __iv_reach,
       coalesce(__iv_prev_key < __iv_start_key, true) AS __iv_first,
       coalesce(__iv_next_start_key > __iv_key, true) AS __iv_last
FROM (
    SELECT *, lag(__iv_key) OVER () AS __iv_prev_key
    FROM (
        SELECT *,
               _iv_key(grp, start_ns) AS __iv_start_key,
               max(_iv_key(grp, end_ns)) OVER (ROWS UNBOUNDED PRECEDING) AS __iv_key,
               lead(_iv_key(grp, start_ns)) OVER () AS __iv_next_start_key,
               row_number() OVER () AS __iv_pos
        FROM (
            SELECT * FROM query_table(intervals)
            WHERE start_ns IS NOT NULL AND end_ns >= start_ns
            ORDER BY grp, start_ns, end_ns
        )
    )
);


-- _iv_lane(g): which of two lanes group g goes to. Groups never interact, so a pass can run as
-- two independent halves (UNION ALL of the lanes), which DuckDB executes in parallel: the
-- streaming scans themselves are single-threaded.
CREATE OR REPLACE MACRO _iv_lane(g) AS coalesce(abs(g % 2), 0);


-- _intervals_coverage(rows): rows (grp, start_ns, end_ns, __iv_bit 0-62) cut, per group and
-- bit, into the disjoint pieces each adds: from the reach of the earlier rows of its bit
-- (running max of end_ns) to its own end. Output grp, __iv_bit, start_ns, end_ns; a row covered
-- by earlier ones gives a piece with end_ns <= start_ns.
CREATE OR REPLACE MACRO _intervals_coverage(intervals) AS TABLE
SELECT grp, __iv_bit, end_ns,
       greatest(start_ns, coalesce(_iv_value(lag(__iv_key) OVER (), __iv_lane), start_ns)) AS start_ns
FROM (
    SELECT *, max(_iv_key(__iv_lane, end_ns)) OVER (ROWS UNBOUNDED PRECEDING) AS __iv_key
    FROM (
        SELECT grp, start_ns, end_ns, __iv_bit, CAST(grp AS HUGEINT) * 64 + __iv_bit AS __iv_lane
        FROM query_table(intervals)
        ORDER BY grp, __iv_bit, start_ns, end_ns
    )
);


-- _intervals_masks(rows): which bits are in flight, as a step function (HTA's bitmask sweep).
-- Input as _intervals_coverage. Output grp, start_ns, end_ns, mask (sum of 2^bit over the bits
-- in flight): consecutive stretches of positive length where at least one bit is, in no
-- particular order. Each bit's pieces are disjoint, so between two distinct instants the running
-- sum of +2^bit / -2^bit is exact; ends sort before starts at one instant.
CREATE OR REPLACE MACRO _intervals_masks(intervals) AS TABLE
WITH __iv_pieces AS (
    SELECT * FROM _intervals_coverage(intervals) WHERE end_ns > start_ns
)
SELECT grp, ts AS start_ns, next_ts AS end_ns, CAST(mask AS BIGINT) AS mask
FROM (
    SELECT grp, ts,
           sum(delta) OVER (ROWS UNBOUNDED PRECEDING) AS mask,
           CASE WHEN lead(grp) OVER () = grp THEN lead(ts) OVER () END AS next_ts
    FROM (
        SELECT grp, start_ns AS ts, CAST(1 AS BIGINT) << __iv_bit AS delta FROM __iv_pieces
        UNION ALL
        SELECT grp, end_ns, -(CAST(1 AS BIGINT) << __iv_bit) FROM __iv_pieces
        ORDER BY grp, ts, delta
    )
)
WHERE next_ts > ts AND mask > 0;


-- intervals_union(intervals): the merged busy islands of each group.
-- Input: grp, start_ns, end_ns, and any other columns.
-- Output: one row per island: the input's columns, taken from the island's first interval (in
-- start_ns, end_ns order), with start_ns and end_ns replaced by the island's bounds, plus
--     intervals_merged   BIGINT, how many input intervals make up the island
--     prev_end_ns        end of the group's previous island (NULL for the first): the gap
--                        before this island is [prev_end_ns, start_ns]
-- Islands of a group are disjoint, never touch, and have gaps of positive length between them.
-- Algorithm: _intervals_islands marks the first and last row of every island. Kept in order,
-- those rows alternate first, last, first, ...: an island is a row that is both, or a first row
-- and the next one, whose reach (running max of end_ns, itself included) is the island's end.
CREATE OR REPLACE MACRO _intervals_union_lane(intervals) AS TABLE
SELECT * EXCLUDE (__iv_pos, __iv_first, __iv_last, __iv_reach, __iv_end, __iv_next_end,
                  __iv_next_pos)
         REPLACE (CASE WHEN __iv_last THEN __iv_end ELSE __iv_next_end END AS end_ns),
       CASE WHEN __iv_last THEN 1 ELSE __iv_next_pos - __iv_pos + 1 END AS intervals_merged,
       __iv_reach AS prev_end_ns
FROM (
    SELECT *, lead(__iv_end) OVER () AS __iv_next_end, lead(__iv_pos) OVER () AS __iv_next_pos
    FROM (
        SELECT *, greatest(end_ns, coalesce(__iv_reach, end_ns)) AS __iv_end
        FROM _intervals_islands(intervals)
        WHERE __iv_first OR __iv_last
    )
)
WHERE __iv_first;

-- intervals_union: the two lanes of _intervals_union_lane, run in parallel (_iv_lane)
CREATE OR REPLACE MACRO intervals_union(intervals) AS TABLE
WITH __iv_lane0 AS (SELECT * FROM query_table(intervals) WHERE _iv_lane(grp) = 0),
     __iv_lane1 AS (SELECT * FROM query_table(intervals) WHERE _iv_lane(grp) = 1)
SELECT * FROM _intervals_union_lane(__iv_lane0)
UNION ALL
SELECT * FROM _intervals_union_lane(__iv_lane1);



-- intervals_flatten(intervals): the timeline of each group by its top priority layer.
-- Input: grp, start_ns, end_ns, layer (INTEGER 0-61; lower numbers win; NULL = lowest priority),
-- and any other columns.
-- Output: grp, start_ns, end_ns, layer: pieces of positive length, disjoint, in no particular
-- order, covering exactly the time at least one interval is in flight; each piece is labelled
-- with the lowest-numbered layer in flight during it (NULL when only NULL-layer intervals are).
-- Neighbouring pieces may touch and carry the same layer. Summing lengths per layer gives, for
-- layer k, |U layer k \ U layers < k|. A piece is cut at every start and end of an input
-- interval it meets. The input's other columns come through on pieces that are a whole input
-- interval alone in its island (most of them on GPU timelines) and are NULL on the others.
-- Example: compute = 0, comm = 1, memory = 2: the pieces of layer 1 are exposed communication.
-- Algorithm: a lone interval is a piece of its own layer. The rows of longer islands are cut,
-- per layer, into disjoint new-coverage pieces (_intervals_coverage); a sorted sweep over their
-- ends adding and removing 2^layer (_intervals_masks, HTA's bitmask) then gives, between
-- consecutive instants, the set of layers in flight, whose lowest bit is the top layer.
CREATE OR REPLACE MACRO _intervals_flatten_lane(intervals) AS TABLE
WITH __iv_rows AS (
    SELECT * EXCLUDE (__iv_reach, __iv_pos, __iv_first, __iv_last),
           __iv_first AND __iv_last AS __iv_alone
    FROM _intervals_islands(intervals)
), __iv_layered AS (
    SELECT grp, start_ns, end_ns,
           CAST(CASE WHEN layer BETWEEN 0 AND 61 THEN layer ELSE 62 END AS BIGINT) AS __iv_bit
    FROM __iv_rows WHERE NOT __iv_alone
)
SELECT * EXCLUDE (__iv_alone) FROM __iv_rows
WHERE __iv_alone AND end_ns > start_ns
UNION ALL BY NAME
-- the lowest bit of the mask is the top layer in flight (bit 62: only unranked layers)
SELECT grp, start_ns, end_ns,
       CASE WHEN __iv_bit < 62 THEN __iv_bit END AS layer
FROM (SELECT grp, start_ns, end_ns,
             CAST(round(log2(CAST(mask & -mask AS DOUBLE))) AS INTEGER) AS __iv_bit
      FROM _intervals_masks(__iv_layered));

-- intervals_flatten: the two lanes of _intervals_flatten_lane, run in parallel (_iv_lane)
CREATE OR REPLACE MACRO intervals_flatten(intervals) AS TABLE
WITH __iv_intervals_0 AS (SELECT * FROM query_table(intervals) WHERE _iv_lane(grp) = 0),
     __iv_intervals_1 AS (SELECT * FROM query_table(intervals) WHERE _iv_lane(grp) = 1)
SELECT * FROM _intervals_flatten_lane(__iv_intervals_0)
UNION ALL
SELECT * FROM _intervals_flatten_lane(__iv_intervals_1);


-- intervals_intersect(a_intervals, b_intervals): U a n U b, per group, as disjoint pieces.
-- Input: two tables with grp, start_ns, end_ns (same grp type).
-- Output: grp, start_ns, end_ns: pieces of positive length whose union is (U a) n (U b). The
-- pieces never overlap but may touch and come in no particular order: sum their lengths, or pass
-- them to intervals_union for maximal stretches.
-- Algorithm: over both inputs together, a lone interval meets nothing. Over the rows of longer
-- islands, one sorted pass keeps a running max of end_ns per input. A row's new coverage of its
-- own input, [max(start, own reach), end], meets the other input's earlier rows exactly on
-- [start, other reach] (they all started no later); every point of the intersection is counted
-- once, at whichever of its two covering rows comes later.
CREATE OR REPLACE MACRO _intervals_intersect_lane(a_intervals, b_intervals) AS TABLE
WITH __iv_both AS (
    SELECT grp, start_ns, end_ns, 1 AS __iv_side FROM query_table(a_intervals)
    UNION ALL
    SELECT grp, start_ns, end_ns, 2 FROM query_table(b_intervals)
), __iv_sweep AS (
    -- reach of each input over the earlier rows (in grp, start_ns, end_ns, side order)
    SELECT grp, start_ns, end_ns, __iv_side,
           _iv_value(lag(__iv_ka) OVER (), grp) AS __iv_ra,
           _iv_value(lag(__iv_kb) OVER (), grp) AS __iv_rb
    FROM (
        SELECT *,
               max(CASE WHEN __iv_side = 1 THEN _iv_key(grp, end_ns) END)
                   OVER (ROWS UNBOUNDED PRECEDING) AS __iv_ka,
               max(CASE WHEN __iv_side = 2 THEN _iv_key(grp, end_ns) END)
                   OVER (ROWS UNBOUNDED PRECEDING) AS __iv_kb
        FROM (
            SELECT grp, start_ns, end_ns, __iv_side FROM _intervals_islands(__iv_both)
            WHERE NOT (__iv_first AND __iv_last)
            ORDER BY grp, start_ns, end_ns, __iv_side
        )
    )
), __iv_pieces AS (
    SELECT grp,
           greatest(start_ns, coalesce(CASE __iv_side WHEN 1 THEN __iv_ra ELSE __iv_rb END,
                                       start_ns)) AS start_ns,
           least(end_ns, CASE __iv_side WHEN 1 THEN __iv_rb ELSE __iv_ra END) AS end_ns,
           CASE __iv_side WHEN 1 THEN __iv_rb ELSE __iv_ra END IS NOT NULL AS __iv_met
    FROM __iv_sweep
)
SELECT grp, start_ns, end_ns FROM __iv_pieces WHERE __iv_met AND end_ns > start_ns;

-- intervals_intersect: the two lanes of _intervals_intersect_lane, run in parallel (_iv_lane)
CREATE OR REPLACE MACRO intervals_intersect(a_intervals, b_intervals) AS TABLE
WITH __iv_a_intervals_0 AS (SELECT * FROM query_table(a_intervals) WHERE _iv_lane(grp) = 0),
     __iv_b_intervals_0 AS (SELECT * FROM query_table(b_intervals) WHERE _iv_lane(grp) = 0),
     __iv_a_intervals_1 AS (SELECT * FROM query_table(a_intervals) WHERE _iv_lane(grp) = 1),
     __iv_b_intervals_1 AS (SELECT * FROM query_table(b_intervals) WHERE _iv_lane(grp) = 1)
SELECT * FROM _intervals_intersect_lane(__iv_a_intervals_0, __iv_b_intervals_0)
UNION ALL
SELECT * FROM _intervals_intersect_lane(__iv_a_intervals_1, __iv_b_intervals_1);


-- intervals_difference(a_intervals, b_intervals): U a \ U b, per group, as disjoint pieces.
-- Input: two tables with grp, start_ns, end_ns (same grp type).
-- Output: grp, start_ns, end_ns: pieces of positive length whose union is (U a) \ (U b);
-- disjoint, possibly touching, in no particular order.
-- Algorithm: over both inputs together, a lone interval of a is all difference and a lone one of
-- b contributes nothing. The rows of longer islands are cut, per input, into disjoint
-- new-coverage pieces (as in intervals_flatten); the bitmask sweep (_intervals_masks, bit 0 for
-- a, bit 1 for b) then tells, between consecutive instants, which inputs are in flight.
CREATE OR REPLACE MACRO _intervals_difference_lane(a_intervals, b_intervals) AS TABLE
WITH __iv_both AS (
    SELECT grp, start_ns, end_ns, 0 AS __iv_bit FROM query_table(a_intervals)
    UNION ALL
    SELECT grp, start_ns, end_ns, 1 FROM query_table(b_intervals)
), __iv_rows AS (
    SELECT grp, start_ns, end_ns, __iv_bit, __iv_first AND __iv_last AS __iv_alone
    FROM _intervals_islands(__iv_both)
), __iv_shared AS (
    SELECT grp, start_ns, end_ns, __iv_bit FROM __iv_rows WHERE NOT __iv_alone
)
SELECT grp, start_ns, end_ns FROM __iv_rows
WHERE __iv_alone AND __iv_bit = 0 AND end_ns > start_ns
UNION ALL
-- stretches where only a is in flight
SELECT grp, start_ns, end_ns FROM _intervals_masks(__iv_shared) WHERE mask = 1;

-- intervals_difference: the two lanes of _intervals_difference_lane, run in parallel (_iv_lane)
CREATE OR REPLACE MACRO intervals_difference(a_intervals, b_intervals) AS TABLE
WITH __iv_a_intervals_0 AS (SELECT * FROM query_table(a_intervals) WHERE _iv_lane(grp) = 0),
     __iv_b_intervals_0 AS (SELECT * FROM query_table(b_intervals) WHERE _iv_lane(grp) = 0),
     __iv_a_intervals_1 AS (SELECT * FROM query_table(a_intervals) WHERE _iv_lane(grp) = 1),
     __iv_b_intervals_1 AS (SELECT * FROM query_table(b_intervals) WHERE _iv_lane(grp) = 1)
SELECT * FROM _intervals_difference_lane(__iv_a_intervals_0, __iv_b_intervals_0)
UNION ALL
SELECT * FROM _intervals_difference_lane(__iv_a_intervals_1, __iv_b_intervals_1);


-- intervals_overlap_sum(intervals): how many intervals, and how much of a value, are in flight.
-- Input: grp, start_ns, end_ns, value (a number carried by each interval: 1 to count a subset,
-- bytes, ...; NULL counts as 0).
-- Output: grp, start_ns, end_ns, depth (BIGINT, intervals in flight), value_sum (sum of `value`
-- over the intervals in flight): consecutive stretches of positive length from the group's first
-- start to its last end (depth 0 stretches included), in no particular order. Time-weighted
-- distribution: sum(end_ns - start_ns) GROUP BY depth. Stretches are cut at every start or end,
-- so neighbours may share a depth. Zero-length intervals are never in flight; touching intervals
-- do not overlap ([a, b] and [b, c] give depth 1 on both sides of b). Like Perfetto's
-- intervals_overlap_count, with a sum.
-- Example: value = 1 for NCCL kernels and 0 otherwise gives, at every instant, the kernels in
-- flight (depth) and how many of them are NCCL (value_sum).
-- Algorithm: gaps between islands are depth 0 and a lone interval is depth 1 for its length
-- (from _intervals_islands). The rows of longer islands go through a cumulative sweep over
-- their starts (+1, +value) and ends (-1, -value) in time order (ends first at equal times); the
-- sums after the last event at an instant hold until the next instant.
CREATE OR REPLACE MACRO _intervals_overlap_sum_lane(intervals) AS TABLE
WITH __iv_rows AS (
    SELECT grp, start_ns, end_ns, coalesce(value, 0) AS __iv_value, __iv_reach,
           __iv_first, __iv_first AND __iv_last AS __iv_alone
    FROM _intervals_islands(intervals)
), __iv_steps AS (
    SELECT grp, ts,
           sum(delta) OVER (ROWS UNBOUNDED PRECEDING) AS depth,
           sum(value_delta) OVER (ROWS UNBOUNDED PRECEDING) AS value_sum,
           CASE WHEN lead(grp) OVER () = grp THEN lead(ts) OVER () END AS next_ts
    FROM (
        SELECT grp, start_ns AS ts, 1 AS delta, __iv_value AS value_delta FROM __iv_rows
        WHERE NOT __iv_alone
        UNION ALL
        SELECT grp, end_ns, -1, -__iv_value FROM __iv_rows
        WHERE NOT __iv_alone
        ORDER BY grp, ts, delta
    )
)
-- gaps between islands
SELECT grp, __iv_reach AS start_ns, start_ns AS end_ns, CAST(0 AS BIGINT) AS depth,
       0 * __iv_value AS value_sum
FROM __iv_rows
WHERE __iv_first AND start_ns > __iv_reach
UNION ALL
-- lone intervals
SELECT grp, start_ns, end_ns, 1, __iv_value FROM __iv_rows
WHERE __iv_alone AND end_ns > start_ns
UNION ALL
-- inside longer islands (their depth never drops to 0 for a positive length)
SELECT grp, ts, next_ts, CAST(depth AS BIGINT), value_sum FROM __iv_steps
WHERE next_ts > ts AND depth > 0;

-- intervals_overlap_sum: the two lanes of _intervals_overlap_sum_lane, run in parallel (_iv_lane)
CREATE OR REPLACE MACRO intervals_overlap_sum(intervals) AS TABLE
WITH __iv_intervals_0 AS (SELECT * FROM query_table(intervals) WHERE _iv_lane(grp) = 0),
     __iv_intervals_1 AS (SELECT * FROM query_table(intervals) WHERE _iv_lane(grp) = 1)
SELECT * FROM _intervals_overlap_sum_lane(__iv_intervals_0)
UNION ALL
SELECT * FROM _intervals_overlap_sum_lane(__iv_intervals_1);


-- intervals_overlap_count(intervals): how many intervals are in flight, as a step function.
-- Input: grp, start_ns, end_ns.
-- Output: grp, start_ns, end_ns, depth (BIGINT): as intervals_overlap_sum without the sum.
CREATE OR REPLACE MACRO intervals_overlap_count(intervals) AS TABLE
WITH __iv_ones AS (
    SELECT grp, start_ns, end_ns, 1 AS value FROM query_table(intervals)
)
SELECT grp, start_ns, end_ns, depth FROM intervals_overlap_sum(__iv_ones);


-- intervals_tile(spans): stretch spans so that they tile their group's timeline.
-- Input: grp, window_id (any type), start_ns, end_ns: for example the GPU span of each iteration.
-- Output: grp, window_id, start_ns, end_ns: each span, in (start_ns, window_id) order, extended
-- (or cut) to the start of the next one; the last keeps its own end. Time between two spans is
-- charged to the earlier one, so the tiles cover first start to last end without gaps and can be
-- handed to intervals_clip. A span that starts with the next one gets a zero-length tile, which
-- intervals_clip ignores.
CREATE OR REPLACE MACRO intervals_tile(spans) AS TABLE
SELECT grp, window_id, start_ns,
       coalesce(lead(start_ns) OVER (PARTITION BY grp ORDER BY start_ns, window_id),
                greatest(end_ns, start_ns)) AS end_ns
FROM query_table(spans)
WHERE start_ns IS NOT NULL;


-- intervals_clip(intervals, windows): cut intervals to the windows of their group.
-- Input: intervals with grp, start_ns, end_ns, window_id and any other columns; windows with grp,
-- window_id (any type, unique within a group), start_ns, end_ns. The windows of one group must
-- not overlap (they may touch, as iterations that tile a timeline do); windows with
-- end_ns <= start_ns are ignored. An interval's window_id is a guess of the window it lies in
-- (NULL when there is none): intervals that lie inside their guessed window skip the search, so
-- a good guess (the iteration that launched a GPU op, for iteration tiles) makes clipping cheap;
-- a wrong or NULL guess only costs time.
-- Output: one row per (interval, window) they share time in: the interval's columns with
-- start_ns and end_ns clipped to the window and window_id (moved to the last column) set to it. Pieces of zero length are
-- dropped, except zero-length intervals, which belong to the window with start_ns <= t < end_ns.
-- Algorithm: intervals outside the span of their group's windows are dropped; a hash join checks
-- each guess; an ASOF join finds the window each remaining interval starts in, and those that
-- run past its end (or start before any) are joined to the later windows they reach.
CREATE OR REPLACE MACRO intervals_clip(intervals, windows) AS TABLE
WITH __iv_win AS (
    SELECT grp AS __iv_wgrp, window_id AS __iv_wid, start_ns AS __iv_ws, end_ns AS __iv_we
    FROM query_table(windows)
    WHERE start_ns IS NOT NULL AND end_ns > start_ns
), __iv_span AS (
    SELECT __iv_wgrp, min(__iv_ws) AS __iv_first, max(__iv_we) AS __iv_last FROM __iv_win
    GROUP BY __iv_wgrp
), __iv_guess AS (
    -- intervals that reach no window of their group are left out first
    SELECT i.*, w.__iv_ws, w.__iv_we,
           coalesce(i.start_ns >= w.__iv_ws AND i.end_ns <= w.__iv_we
                    AND (i.end_ns > i.start_ns OR i.start_ns < w.__iv_we), false) AS __iv_inside
    FROM (SELECT * FROM query_table(intervals)
          WHERE start_ns IS NOT NULL AND end_ns >= start_ns) i
    JOIN __iv_span s
      ON s.__iv_wgrp = i.grp AND i.end_ns >= s.__iv_first AND i.start_ns <= s.__iv_last
    LEFT JOIN __iv_win w ON w.__iv_wgrp = i.grp AND w.__iv_wid = i.window_id
), __iv_first AS (
    SELECT i.* EXCLUDE (window_id, __iv_ws, __iv_we, __iv_inside),
           w.__iv_wid AS window_id, w.__iv_ws, w.__iv_we
    FROM (SELECT * FROM __iv_guess WHERE NOT __iv_inside) i
    ASOF LEFT JOIN __iv_win w ON w.__iv_wgrp = i.grp AND i.start_ns >= w.__iv_ws
)
-- window_id goes last in every branch (the later ones add it), whatever its place in the input
SELECT * EXCLUDE (window_id, __iv_ws, __iv_we, __iv_inside), window_id FROM __iv_guess
WHERE __iv_inside
UNION ALL
SELECT * EXCLUDE (__iv_ws, __iv_we) REPLACE (least(end_ns, __iv_we) AS end_ns)
FROM __iv_first
WHERE window_id IS NOT NULL
  AND (least(end_ns, __iv_we) > start_ns OR (end_ns = start_ns AND start_ns < __iv_we))
UNION ALL
SELECT i.* EXCLUDE (window_id, __iv_ws, __iv_we)
           REPLACE (w.__iv_ws AS start_ns, least(i.end_ns, w.__iv_we) AS end_ns),
       w.__iv_wid
FROM (SELECT * FROM __iv_first WHERE end_ns > coalesce(__iv_we, start_ns)) i
JOIN __iv_win w
  ON w.__iv_wgrp = i.grp AND w.__iv_ws > i.start_ns AND w.__iv_ws < i.end_ns;



-- intervals_window_breakdown(intervals, windows): intervals_breakdown per window of a timeline
-- (a rank's span, its iterations), for intervals of which most are known to overlap nothing.
-- Input: intervals with grp, start_ns, end_ns, layer (as intervals_breakdown), window_id (a guess
-- of the window, as intervals_clip takes) and alone (BOOLEAN: TRUE only for an interval that
-- overlaps and touches no other interval of its group, such as gpu_ops.alone; FALSE is always
-- correct, only slower); windows as intervals_clip takes them.
-- Output: grp, window_id, busy_ns, layer0_ns, layer1_ns, layer2_ns, rest_ns (BIGINT) per window,
-- over the intervals cut to it. A window with no busy time may have no row: join the windows to
-- the result and take missing rows as zeros.
-- Algorithm: the pieces of intervals that are alone are summed as they are; only the others are
-- flattened (intervals_flatten). A flattened piece keeps its window when it is a whole interval;
-- the rest find theirs by time (an as-of join on window starts).
CREATE OR REPLACE MACRO intervals_window_breakdown(intervals, windows) AS TABLE
WITH __iv_alone AS (
    SELECT * FROM query_table(intervals) WHERE alone
), __iv_crowded AS (
    SELECT * FROM query_table(intervals) WHERE NOT alone
), __iv_crowded_pieces AS (
    SELECT grp, start_ns, end_ns, CASE WHEN layer IN (0, 1, 2) THEN layer END AS layer, window_id
    FROM intervals_clip(__iv_crowded, windows)
), __iv_flat AS (
    SELECT grp, start_ns, end_ns, layer, window_id FROM intervals_flatten(__iv_crowded_pieces)
), __iv_win AS (
    SELECT grp, window_id, start_ns FROM query_table(windows) WHERE end_ns > start_ns
)
SELECT grp, window_id,
       CAST(sum(end_ns - start_ns) AS BIGINT) AS busy_ns,
       CAST(coalesce(sum(end_ns - start_ns) FILTER (WHERE layer = 0), 0) AS BIGINT) AS layer0_ns,
       CAST(coalesce(sum(end_ns - start_ns) FILTER (WHERE layer = 1), 0) AS BIGINT) AS layer1_ns,
       CAST(coalesce(sum(end_ns - start_ns) FILTER (WHERE layer = 2), 0) AS BIGINT) AS layer2_ns,
       CAST(coalesce(sum(end_ns - start_ns) FILTER (WHERE layer IS NULL), 0) AS BIGINT) AS rest_ns
FROM (
    SELECT grp, start_ns, end_ns, CASE WHEN layer IN (0, 1, 2) THEN layer END AS layer, window_id
    FROM intervals_clip(__iv_alone, windows)
    UNION ALL
    SELECT * FROM __iv_flat WHERE window_id IS NOT NULL
    UNION ALL
    SELECT f.grp, f.start_ns, f.end_ns, f.layer, w.window_id
    FROM (SELECT * FROM __iv_flat WHERE window_id IS NULL) f
    ASOF JOIN __iv_win w ON w.grp = f.grp AND f.start_ns >= w.start_ns
)
GROUP BY grp, window_id;


-- intervals_breakdown(intervals): per group, how long each priority layer is the top one.
-- Input: grp, start_ns, end_ns, layer (INTEGER). Layers 0, 1 and 2 are ranked: at every instant
-- the time goes to the lowest-numbered layer in flight. Rows of any other layer (NULL, 3, ...)
-- form the "rest", which gets the time no ranked layer covers.
-- Output: one row per group:
--     grp
--     start_ns     first start of the group (BIGINT)
--     end_ns       last end of the group (BIGINT)
--     busy_ns      |U all|: time at least one interval is in flight
--     layer0_ns    |U layer 0|
--     layer1_ns    |U layer 1 \ U layer 0|
--     layer2_ns    |U layer 2 \ (U layer 0 u U layer 1)|
--     rest_ns      |U rest \ U layers 0-2|;  layer0 + layer1 + layer2 + rest = busy
-- Example: temporal breakdown with compute = 0, comm = 1, memory = 2 gives compute time,
-- exposed communication and exposed memory time; idle = (end_ns - start_ns) - busy_ns.
-- Algorithm: intervals_window_breakdown with the group's span as its one window.
CREATE OR REPLACE MACRO intervals_breakdown(intervals) AS TABLE
WITH __iv_rows AS (
    -- window 0 for every row; none is known to be alone
    SELECT grp, start_ns, end_ns, layer, 0 AS window_id, false AS alone
    FROM query_table(intervals)
    WHERE start_ns IS NOT NULL AND end_ns >= start_ns
), __iv_span AS (
    SELECT grp, 0 AS window_id, min(start_ns) AS start_ns, max(end_ns) AS end_ns FROM __iv_rows
    GROUP BY grp
)
SELECT s.grp, s.start_ns, s.end_ns,
       coalesce(l.busy_ns, 0) AS busy_ns, coalesce(l.layer0_ns, 0) AS layer0_ns,
       coalesce(l.layer1_ns, 0) AS layer1_ns, coalesce(l.layer2_ns, 0) AS layer2_ns,
       coalesce(l.rest_ns, 0) AS rest_ns
FROM __iv_span s
LEFT JOIN intervals_window_breakdown(__iv_rows, __iv_span) l ON l.grp = s.grp;
