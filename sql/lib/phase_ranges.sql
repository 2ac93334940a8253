-- uses: nvtx_ranges, phase_names
-- phase_ranges: the NVTX ranges and user annotations (that ended) named like a phase by `want`
-- (phase_pattern's parameter), with their phase_kind. With the default pattern each range's
-- phase stored at ingest is read (nvtx_ranges.phase, sql/nvtx_range_facts.sql): no regular
-- expression runs over the millions of ranges of an autograd-NVTX capture.
-- @arg want  any  the metric's `phases` parameter (NULL: the default)
-- @column run_id, rank, file_id, range_id, pid, tid, name, start_ns, end_ns  of the range
-- @column phase  VARCHAR  forward | backward | optimizer
CREATE OR REPLACE MACRO phase_ranges(want) AS TABLE
SELECT * FROM (
    SELECT run_id, rank, file_id, range_id, pid, tid, name, start_ns, end_ns,
           CASE WHEN want IS NULL THEN phase
                WHEN regexp_matches(coalesce(name, ''), phase_pattern(want)) THEN phase_kind(name)
           END AS phase
    FROM nvtx_ranges
    WHERE kind IN ('push_pop', 'start_end', 'annotation') AND end_ns IS NOT NULL)
WHERE phase IS NOT NULL;
