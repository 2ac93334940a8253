-- uses: clock_offsets, nccl_ops
-- One row per rank of each collective matched across ranks (the same nccl_ops.op_key on two or
-- more ranks; sends and receives excluded: their peers differ from rank to rank), with how long
-- the rank waited for the last one to arrive (HTA's straggler analysis). Times are compared
-- aligned across hosts (raw - clock_offsets.offset_ns); start_ns / end_ns stay as recorded.
-- A rank that lists one op_key twice counts once, from its first start to its last end.
CREATE OR REPLACE VIEW collective_waits AS
WITH per_rank_op AS (
    SELECT n.run_id, n.op_key, n.rank,
           min(n.collective) AS collective,
           min(n.iteration) AS iteration,
           min(n.start_ns) AS start_ns,
           max(n.end_ns) AS end_ns,
           min(n.start_ns) - coalesce(min(c.offset_ns), 0) AS aligned_start_ns,
           max(n.end_ns) - coalesce(min(c.offset_ns), 0) AS aligned_end_ns
    FROM nccl_ops n
    LEFT JOIN clock_offsets c ON c.run_id = n.run_id AND c.rank = n.rank
    WHERE n.op_key IS NOT NULL AND n.collective NOT IN ('Send', 'Recv', 'SendRecv')
    GROUP BY n.run_id, n.op_key, n.rank
),
framed AS (
    SELECT *,
           max(aligned_start_ns) OVER c AS last_start_ns,
           min(aligned_start_ns) OVER c AS first_start_ns,
           max(aligned_end_ns) OVER c AS last_end_ns,
           min(aligned_end_ns) OVER c AS first_end_ns,
           count(*) OVER c AS ranks
    FROM per_rank_op
    WINDOW c AS (PARTITION BY run_id, op_key)
)
SELECT
    run_id,
    op_key,                                   -- the collective, equal on every rank
    collective,                               -- AllReduce, AllGather, ...
    rank,
    iteration,                                -- iteration that launched it on this rank
    start_ns,                                 -- UTC ns as recorded on this rank
    end_ns,
    aligned_start_ns,                         -- start_ns - the rank's clock offset
    aligned_end_ns,
    ranks,                                    -- ranks the collective was matched on
    last_start_ns,                            -- aligned start of the last rank to arrive
    last_start_ns - aligned_start_ns AS wait_ns,  -- time waiting for the last rank
    aligned_start_ns = last_start_ns AS arrived_last,  -- ties: every tied rank
    last_start_ns - first_start_ns AS start_skew_ns,
    last_end_ns - first_end_ns AS end_skew_ns
FROM framed
WHERE ranks >= 2;
