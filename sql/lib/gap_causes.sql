-- uses: host_activity, intervals, ranks
-- What a rank's launching thread did while its GPU was idle: the causes of idle_gaps (per
-- device) and of scaling's idle time (per rank, across its devices).

-- host_in_gaps: for stretches of each rank's timeline (the GPU's idle gaps), the time the
-- rank's launching thread spent, with host_breakdown's precedence (sql/lib/host_activity.sql:
-- at each instant the first in flight names it), waiting for the GPU (a call by sync_stalls'
-- rules), launching (another CUDA launch, memcpy or memset call), loading data (data_pattern)
-- and in OS runtime calls; the rest of a gap is other host time. Host activity is cut to the
-- gaps it overlaps by a binned equi-join (time_bins); a gap the host did none of these in has
-- no row.
-- @arg gaps       a table (gap_id, grp, start_ns, end_ns): grp is the rank's rank_key, gap_id
--                 unique; gaps of one rank do not overlap
-- @arg want_data  data_loader_pattern's parameter (NULL: the default)
-- @column gap_id
-- @column sync_wait_ns, launching_ns, data_loading_ns, os_call_ns  HUGEINT  (NULL: none)
CREATE OR REPLACE MACRO host_in_gaps(gaps, want_data) AS TABLE
WITH __gaps AS MATERIALIZED (
    SELECT gap_id, grp, start_ns, end_ns FROM query_table(gaps)
),
__keys AS MATERIALIZED (
    SELECT * FROM bin_keys(__gaps)
),
__host AS (
    -- the launching thread's calls (0 sync wait, 1 launching), data loading (2), OS calls (3).
    -- Of the calls (millions) only those that can meet a gap in the binned join below: when
    -- the gaps are few (bin_keys), a semi join leaves the others out first, so this CTE (read
    -- twice by time_bins) holds thousands of rows, not millions
    SELECT c.rank_key AS grp, c.start_ns, c.end_ns, c.layer
    FROM host_calls() c
    CROSS JOIN (SELECT any_value(sparse) AS sparse FROM __keys) s
    SEMI JOIN __keys b
           ON b.grp = c.rank_key
          AND b.bin = bin_key(c.start_ns, c.end_ns, s.sparse)
    UNION ALL
    SELECT r.rank_key, a.start_ns, a.end_ns, a.layer
    FROM host_activity(want_data, NULL) a JOIN ranks r USING (run_id, rank)
    WHERE a.layer IN (2, 3)
),
__in_gaps AS (
    -- host activity cut to the gaps it overlaps; a group per gap
    SELECT g.gap_id AS grp, greatest(h.start_ns, g.start_ns) AS start_ns,
           least(h.end_ns, g.end_ns) AS end_ns, h.layer
    FROM time_bins(__host) h
    JOIN time_bins(__gaps) g ON g.grp = h.grp AND g.bin = h.bin
    WHERE h.start_ns < g.end_ns AND h.end_ns > g.start_ns
      AND bin_of(greatest(h.start_ns, g.start_ns)) = h.bin
)
SELECT grp AS gap_id,
       sum(end_ns - start_ns) FILTER (WHERE layer = 0) AS sync_wait_ns,
       sum(end_ns - start_ns) FILTER (WHERE layer = 1) AS launching_ns,
       sum(end_ns - start_ns) FILTER (WHERE layer = 2) AS data_loading_ns,
       sum(end_ns - start_ns) FILTER (WHERE layer = 3) AS os_call_ns
FROM intervals_flatten(__in_gaps)
GROUP BY grp;
