-- uses: duration_ns
-- Scope: the run / rank / time / iteration filters that (nearly) every metric takes, written once.
-- A metric passes its own parameters (`scope_match(run_id, rank, getvariable('run'),
-- getvariable('rank'))`), so each file still says which parameters it reads and runs unchanged
-- in the plain DuckDB shell. Parameters named want_* are what the caller asked for; NULL means
-- "not asked": the filter keeps every row. A row's own values come first.

-- run_match: is the row in the run asked for?
-- @arg row_run_id  VARCHAR  the row's run_id
-- @arg want_run    any      the run asked for, cast to VARCHAR (NULL: every run)
-- @ret BOOLEAN
CREATE OR REPLACE MACRO run_match(row_run_id, want_run) AS
    want_run IS NULL OR row_run_id = CAST(want_run AS VARCHAR);

-- scope_match: is the row in the run and rank asked for?
-- @arg row_run_id  VARCHAR  the row's run_id
-- @arg row_rank    INTEGER  the row's rank
-- @arg want_run    any      the run asked for, cast to VARCHAR (NULL: every run)
-- @arg want_rank   any      the rank asked for, cast to INTEGER (NULL: every rank)
-- @ret BOOLEAN
CREATE OR REPLACE MACRO scope_match(row_run_id, row_rank, want_run, want_rank) AS
    (run_match(row_run_id, want_run))
    AND (want_rank IS NULL OR row_rank = CAST(want_rank AS INTEGER));

-- window_overlaps: does [row_start_ns, row_end_ns] overlap the UTC window asked for, bounds
-- included (nsys --filter-time: an op cut by either edge is kept)?
-- @arg row_start_ns   BIGINT  the row's start, UTC ns
-- @arg row_end_ns     BIGINT  the row's end, UTC ns
-- @arg want_start_ns  any     the window's start, cast to BIGINT (NULL: open)
-- @arg want_end_ns    any     the window's end, cast to BIGINT (NULL: open)
-- @ret BOOLEAN
CREATE OR REPLACE MACRO window_overlaps(row_start_ns, row_end_ns, want_start_ns, want_end_ns) AS
    (want_start_ns IS NULL OR row_end_ns >= CAST(want_start_ns AS BIGINT))
    AND (want_end_ns IS NULL OR row_start_ns <= CAST(want_end_ns AS BIGINT));

-- iteration_in: is the row's iteration in [want_from, want_to]? A row with no iteration is
-- not, once either bound is given (NULL in a WHERE drops the row).
-- @arg row_iteration  INTEGER  the row's iteration (or a tile's window_id)
-- @arg want_from      any      the first iteration kept, cast to INTEGER (NULL: from the first)
-- @arg want_to        any      the last iteration kept, cast to INTEGER (NULL: to the last)
-- @ret BOOLEAN
CREATE OR REPLACE MACRO iteration_in(row_iteration, want_from, want_to) AS
    (want_from IS NULL OR row_iteration >= CAST(want_from AS INTEGER))
    AND (want_to IS NULL OR row_iteration <= CAST(want_to AS INTEGER));

-- iteration_range_given: did the caller ask for an iteration range (either bound)? Metrics
-- then work on the time of those iterations instead of the whole rank.
-- @arg want_from  any  iteration_from
-- @arg want_to    any  iteration_to
-- @ret BOOLEAN
CREATE OR REPLACE MACRO iteration_range_given(want_from, want_to) AS
    want_from IS NOT NULL OR want_to IS NOT NULL;

-- relative_window: the nsys --filter-time text `4s420ms/35s390ms` as two durations after a
-- source's start; either side may be empty (`/2s`, `4s/`). Text that is not a duration is an
-- error naming it (duration_ns).
-- @arg want_window  any  the window text (NULL: no window)
-- @column from_ns   BIGINT  ns after the source's origin_ns (NULL: open)
-- @column to_ns     BIGINT  ns after the source's origin_ns (NULL: open)
CREATE OR REPLACE MACRO relative_window(want_window) AS TABLE
SELECT duration_ns(nullif(trim(split_part(w, '/', 1)), '')) AS from_ns,
       duration_ns(nullif(trim(split_part(w, '/', 2)), '')) AS to_ns
FROM (SELECT CAST(want_window AS VARCHAR) AS w);

-- relative_window_overlaps: does the row overlap a relative_window of its source, bounds
-- included? A source without an origin (no session start) has no relative time: its rows drop
-- out of any window given.
-- @arg row_start_ns  BIGINT  the row's start, UTC ns
-- @arg row_end_ns    BIGINT  the row's end, UTC ns
-- @arg origin_ns     BIGINT  the row's source's sources.origin_ns
-- @arg from_ns       BIGINT  relative_window.from_ns
-- @arg to_ns         BIGINT  relative_window.to_ns
-- @ret BOOLEAN
CREATE OR REPLACE MACRO relative_window_overlaps(row_start_ns, row_end_ns, origin_ns, from_ns, to_ns) AS
    (from_ns IS NULL OR row_end_ns >= origin_ns + from_ns)
    AND (to_ns IS NULL OR row_start_ns <= origin_ns + to_ns);

-- rank_key: one BIGINT per (run_id, rank) from the source file and the rank, so per-rank work
-- sorts and joins on one integer (ranks.rank_key, gpu_ops.rank_key, nccl_ops.rank_key).
-- @arg row_file_id  BIGINT   sources.file_id
-- @arg row_rank     INTEGER  the rank
-- @ret BIGINT
CREATE OR REPLACE MACRO rank_key(row_file_id, row_rank) AS row_file_id * 4294967296 + row_rank;

-- tile_key: one BIGINT per (group, window) for interval work per window: the group (a device
-- or rank key of at most 31 bits) in the high half, the window (an iteration, may be negative)
-- in the low half.
-- @arg group_key  BIGINT   the group (keys, grp)
-- @arg window_id  INTEGER  the window
-- @ret BIGINT
CREATE OR REPLACE MACRO tile_key(group_key, window_id) AS
    group_key * 4294967296 + window_id + 2147483648;
