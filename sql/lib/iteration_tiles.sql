-- uses: intervals, scope
-- iteration_tiles: the iterations of each group as tiles of its timeline, as the busy, idle and
-- breakdown metrics cut time by iteration. An iteration's span is the first start and the last
-- end of the GPU ops launched in it; intervals_tile then stretches each span to the next one's
-- start (the last keeps its own end), so the time between steps is charged to the step before.
-- Ops with no iteration count in no span.
-- @arg ops         name  a table or CTE of ops: grp, iteration, start_ns, end_ns (already cut to
--                        the metric's UTC window, so spans are too)
-- @arg want_tiles  BOOLEAN  false: no tiles at all (the metric works on whole ranks); spares the
--                           sort when the caller asked for no iterations
-- @arg want_from   any   iteration_from: the first tile kept (NULL: from the first)
-- @arg want_to     any   iteration_to: the last tile kept (NULL: to the last)
-- @column grp        the op's group
-- @column window_id  INTEGER  the iteration
-- @column start_ns   BIGINT   the tile's start
-- @column end_ns     BIGINT   the tile's end
CREATE OR REPLACE MACRO iteration_tiles(ops, want_tiles, want_from, want_to) AS TABLE
WITH __tile_spans AS (
    SELECT grp, iteration AS window_id, min(start_ns) AS start_ns, max(end_ns) AS end_ns
    FROM query_table(ops)
    WHERE iteration IS NOT NULL AND want_tiles
    GROUP BY grp, iteration
)
SELECT grp, window_id, start_ns, end_ns
FROM intervals_tile(__tile_spans)
WHERE iteration_in(window_id, want_from, want_to);
