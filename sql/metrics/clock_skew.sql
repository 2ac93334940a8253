-- metric: clock_skew
-- version: 2
-- summary: Per rank clock offset estimated from matched collective ends, and its spread
-- unit: ns
-- grain: run_id, rank
-- columns: run_id VARCHAR, rank INTEGER, host VARCHAR, reference_rank INTEGER, offset_ns BIGINT, matched_ops BIGINT, mad_ns BIGINT, method VARCHAR, offset_range_ns BIGINT, hosts BIGINT
-- params: run (text, optional)
-- see: clock_offsets view (DESIGN section 4)
-- uses: clock_offsets, scope
-- complexity: O(n) in NCCL ops (clock_offsets: hash joins on the collective's key), then per rank
-- show: rank, offset_ns, method, matched_ops, mad_ns, host, run_id
--
-- v2: clock_offsets counts a grouped kernel (several collectives in one NCCL group) as one observation: nsys runs with grouped collectives get Kineto's offsets (issue 34).
-- The clock_offsets view, with spreads: per rank the offset to subtract from its raw times
-- to compare it with the reference rank (0 for ranks on the reference's host), how many
-- collectives it was matched on, and mad_ns, the median absolute deviation of the per-collective
-- differences from the offset (the estimate's own noise). Per run, repeated on each row:
-- offset_range_ns (largest minus smallest offset of the ranks with an estimate) and hosts.
-- method: reference host | collective ends | none (no collective matched: offset 0).
SELECT
    run_id,
    rank,
    host,
    reference_rank,
    offset_ns,                 -- ns to subtract from this rank's raw times
    matched_ops,               -- collectives matched with the reference rank
    mad_ns,                    -- ns, median |difference - offset| over its host's matches
    method,
    max(offset_ns) FILTER (WHERE method <> 'none') OVER r
        - min(offset_ns) FILTER (WHERE method <> 'none') OVER r AS offset_range_ns,
    count(DISTINCT host) OVER r AS hosts
FROM clock_offsets
WHERE run_match(run_id, getvariable('run'))
WINDOW r AS (PARTITION BY run_id)
ORDER BY run_id, rank;
