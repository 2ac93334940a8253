-- uses: nccl_ops, ranks
-- Per-(run, rank) clock offset, estimated from the end times of collectives seen on several ranks
-- (DESIGN section 4). Raw times stay untouched; a metric comparing ranks uses the aligned time
-- `start_ns - offset_ns`.
-- A collective (AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, Reduce, Barrier ...)
-- ends at nearly the same instant on every rank that takes part, since none can finish before the
-- last one arrives; point-to-point operations (Send, Recv, SendRecv) do not, and are not used.
-- Operations are matched across ranks by nccl_ops.op_key. The reference is rank 0 of the run, or
-- its lowest rank that took part in a collective. Ranks share the clock of their host, so the
-- estimate is made per host: offset = median over (matched collective, rank on the host) of
-- (end on the rank - end on the reference). Ranks on the reference's host get exactly 0; when the
-- host is unknown each rank is its own host. A rank whose host matched nothing gets 0 and
-- matched_ops = 0.
CREATE OR REPLACE VIEW clock_offsets AS
WITH colls AS (
    SELECT n.run_id, n.rank, n.op_key, n.end_ns,
           coalesce(k.host, '#rank ' || n.rank) AS clock   -- ranks of one host share a clock
    FROM nccl_ops n
    LEFT JOIN ranks k ON k.run_id = n.run_id AND k.rank = n.rank
    WHERE n.op_key IS NOT NULL AND n.collective NOT IN ('Send', 'Recv', 'SendRecv')
),
reference AS (
    SELECT run_id, min(rank) AS reference_rank FROM colls GROUP BY run_id
),
reference_clock AS (
    SELECT DISTINCT c.run_id, c.clock
    FROM colls c JOIN reference r ON r.run_id = c.run_id AND r.reference_rank = c.rank
),
diffs AS (
    -- DISTINCT: a grouped kernel (AllGather + ReduceScatter in one NCCL group) is one end seen
    -- on both clocks, however many operations it ran: one observation, as Kineto sees it
    SELECT DISTINCT c.run_id, c.clock, c.rank, c.end_ns, ref.end_ns AS ref_end_ns,
           c.end_ns - ref.end_ns AS diff_ns
    FROM colls c
    JOIN reference r ON r.run_id = c.run_id
    JOIN (SELECT run_id, rank, op_key, min(end_ns) AS end_ns FROM colls GROUP BY ALL) ref
      ON ref.run_id = c.run_id AND ref.rank = r.reference_rank AND ref.op_key = c.op_key
),
per_clock AS (
    SELECT run_id, clock,
           CAST(round(median(diff_ns)) AS BIGINT) AS offset_ns,
           count(*) AS matched
    FROM diffs GROUP BY run_id, clock
),
spread AS (
    SELECT d.run_id, d.clock,
           CAST(round(median(abs(d.diff_ns - p.offset_ns))) AS BIGINT) AS mad_ns
    FROM diffs d JOIN per_clock p USING (run_id, clock)
    GROUP BY d.run_id, d.clock
),
per_rank AS (
    SELECT run_id, rank, count(*) AS matched_ops FROM diffs GROUP BY run_id, rank
)
SELECT
    k.run_id,
    k.rank,
    k.host,
    r.reference_rank,                               -- the rank whose clock is the reference
    CASE WHEN rc.clock IS NOT NULL THEN 0
         ELSE coalesce(p.offset_ns, 0) END AS offset_ns,  -- ns to subtract from this rank's times
    coalesce(pr.matched_ops, 0) AS matched_ops,     -- collective kernels matched with the reference
    coalesce(p.matched, 0) AS host_matched,         -- (collective kernel, rank) pairs behind the host's estimate
    CASE WHEN rc.clock IS NOT NULL THEN 0 ELSE s.mad_ns END AS mad_ns,  -- median |diff - offset|, ns
    CASE WHEN rc.clock IS NOT NULL THEN 'reference host'
         WHEN p.offset_ns IS NOT NULL THEN 'collective ends'
         ELSE 'none' END AS method                  -- reference host | collective ends | none
FROM ranks k
LEFT JOIN reference r ON r.run_id = k.run_id
LEFT JOIN reference_clock rc
       ON rc.run_id = k.run_id AND rc.clock = coalesce(k.host, '#rank ' || k.rank)
LEFT JOIN per_clock p ON p.run_id = k.run_id AND p.clock = coalesce(k.host, '#rank ' || k.rank)
LEFT JOIN spread s ON s.run_id = k.run_id AND s.clock = coalesce(k.host, '#rank ' || k.rank)
LEFT JOIN per_rank pr ON pr.run_id = k.run_id AND pr.rank = k.rank;
