-- uses: series
-- run_chosen: is the run among those the `runs` and `series` parameters pick (the metrics that
-- compare runs: scaling, regressions)? Both given: runs in the list and in the series.
-- @arg row_run_id   VARCHAR  the run
-- @arg want_runs    any      comma-separated run_ids, cast to VARCHAR (NULL: every run)
-- @arg want_series  any      a series_id of the series view, cast to VARCHAR (NULL: every run)
-- @ret BOOLEAN
CREATE OR REPLACE MACRO run_chosen(row_run_id, want_runs, want_series) AS
    (want_runs IS NULL
     OR list_contains(regexp_split_to_array(trim(CAST(want_runs AS VARCHAR)), '\s*,\s*'), row_run_id))
    AND (want_series IS NULL
         OR row_run_id IN (SELECT run_id FROM series WHERE series_id = CAST(want_series AS VARCHAR)));
