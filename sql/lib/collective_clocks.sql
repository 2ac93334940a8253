-- uses: collective_waits
-- The waits of collective_waits measured on aligned clocks (its own) or on each rank's clock as
-- recorded, as TraceLens' multi-rank collective report and HTA measure them (they align
-- nothing: on one host the clocks agree; across hosts a rank's offset lands in its waits).

-- collective_waits_on(align): collective_waits' rows with wait_ns, arrived_last, arrived_first,
-- last_start_ns, start_skew_ns and end_skew_ns from aligned times (align true or NULL) or from
-- the recorded start_ns / end_ns (false).
-- @arg align  BOOLEAN  the align_clocks parameter
-- @column run_id, op_key, collective, rank, iteration, start_ns, end_ns, ranks  as collective_waits
-- @column last_start_ns  BIGINT   the last rank's start, on the clocks chosen
-- @column wait_ns        BIGINT   last_start_ns - this rank's start
-- @column arrived_last   BOOLEAN  this rank started last (ties: every tied rank)
-- @column arrived_first  BOOLEAN  this rank started first (ties: every tied rank)
-- @column start_skew_ns  BIGINT   latest - earliest start
-- @column end_skew_ns    BIGINT   latest - earliest end
CREATE OR REPLACE MACRO collective_waits_on(align) AS TABLE
SELECT run_id, op_key, collective, rank, iteration, start_ns, end_ns, ranks,
       max(t_start) OVER c AS last_start_ns,
       max(t_start) OVER c - t_start AS wait_ns,
       t_start = max(t_start) OVER c AS arrived_last,
       t_start = min(t_start) OVER c AS arrived_first,
       max(t_start) OVER c - min(t_start) OVER c AS start_skew_ns,
       max(t_end) OVER c - min(t_end) OVER c AS end_skew_ns
FROM (SELECT *,
             CASE WHEN coalesce(align, true) THEN aligned_start_ns ELSE start_ns END AS t_start,
             CASE WHEN coalesce(align, true) THEN aligned_end_ns ELSE end_ns END AS t_end
      FROM collective_waits)
WINDOW c AS (PARTITION BY run_id, op_key);
