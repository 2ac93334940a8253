-- metric: alltoall_pairs
-- version: 1
-- summary: Bytes each rank sent each peer in all_to_allv collectives (MoE token dispatch), per collective or summed per rank pair, and how uneven they are
-- unit: bytes
-- grain: run_id, op_key, src_rank, dst_rank
-- columns: run_id VARCHAR, op_key VARCHAR, iteration INTEGER, src_rank INTEGER, dst_rank INTEGER, collectives BIGINT, bytes BIGINT, received_bytes BIGINT, avg_bytes DOUBLE, src_sent_bytes BIGINT, dst_received_bytes BIGINT, pair_vs_mean DOUBLE, send_imbalance DOUBLE, recv_imbalance DOUBLE, note VARCHAR
-- params: run (text, optional), iteration_from (int, optional), iteration_to (int, optional), start_ns (int, optional), end_ns (int, optional), per (text, default collective), split_unit (text, default row)
-- see: TraceLens multi-rank collective report (nccl_all2allv: size_imbalance; nccl_all2allv_heatmap: total_sent_MB, avg_sent_MB, count per src_rank, dst_rank)
-- uses: nccl_splits, scope
-- complexity: O(n log n) in all_to_allv operations x group size (hash joins and aggregates; the output itself holds a row per rank pair of each collective)
-- show: op_key, src_rank, dst_rank, bytes, pair_vs_mean, send_imbalance, recv_imbalance, run_id
--
-- From nccl_splits: the split sizes PyTorch >= 2.2 records on an all_to_allv (equal all_to_all
-- and traces without splits have no rows). One row per (collective, src rank, dst rank) with
-- per = 'collective', or per (src rank, dst rank) summed over the run's all_to_allv with
-- per = 'pair' (op_key NULL: TraceLens' heatmap). dst_rank is the peer's global rank from the
-- process group's ranks (its position in the group when the trace lists none). The self pair is
-- a local copy, kept as PyTorch and TraceLens count it. Per row:
--   bytes                what src_rank's splits say it sent dst_rank (NULL: PyTorch listed only
--                        30 of the group's splits, or the dtype is unknown: note says which)
--   received_bytes       what dst_rank's own splits say it received from src_rank (NULL when
--                        dst_rank's trace is not in the run); equal to bytes on a sound trace
--   collectives          all_to_allv summed (1 per collective); avg_bytes = bytes / collectives
--   src_sent_bytes       everything src_rank sent in the collective (pair: in the run)
--   dst_received_bytes   everything the ranks sent dst_rank there
--   pair_vs_mean         bytes / the mean over the collective's (run's) pairs: > 1 a hot pair
--   send_imbalance       max / mean of src_sent_bytes over the senders (TraceLens' size_imbalance:
--                        its rank In msg size is everything the rank sent)
--   recv_imbalance       max / mean of dst_received_bytes over the receivers: a hot expert
-- split_unit: what a split size counts.
--   row (default)  dim-0 rows of the input tensor, as PyTorch passes them to NCCL: a row is
--                  in_nelems / sum(splits) elements (a MoE token's hidden state)
--   element        one element each, as TraceLens' heatmap reads them: equal to row for 1-D
--                  tensors, the row length times too small for a [tokens, hidden] tensor
-- iteration_from / iteration_to keep operations launched in those iterations; start_ns /
-- end_ns (UTC) keep operations that overlap the window, on each rank's own clock.
WITH rules AS (
    SELECT CASE WHEN p IN ('collective', 'pair') THEN p
                ELSE error('per must be collective or pair, not ' || p) END AS per,
           CASE WHEN u IN ('row', 'element') THEN u
                ELSE error('split_unit must be row or element, not ' || u) END AS unit
    FROM (SELECT coalesce(CAST(getvariable('per') AS VARCHAR), 'collective') AS p,
                 coalesce(CAST(getvariable('split_unit') AS VARCHAR), 'row') AS u)
),
splits AS (
    SELECT s.run_id, s.op_key, s.rank AS src_rank, coalesce(s.peer_rank, s.peer_index) AS dst_rank,
           s.iteration, s.start_ns, s.complete, s.dtype, s.elem_bytes, s.peer_rank IS NULL AS by_index,
           CASE WHEN r.unit = 'row' THEN s.sent_bytes ELSE s.sent_rows * s.elem_bytes END AS bytes,
           CASE WHEN r.per = 'collective' THEN s.op_key ELSE '' END AS unit_key  -- '': the run
    FROM nccl_splits s, rules r
    WHERE run_match(s.run_id, getvariable('run'))
      AND iteration_in(s.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
      AND window_overlaps(s.start_ns, s.end_ns, getvariable('start_ns'), getvariable('end_ns'))
),
received AS (  -- the receiver's own account of the same pair
    SELECT s.run_id, s.op_key, coalesce(s.peer_rank, s.peer_index) AS src_rank,
           s.rank AS dst_rank,
           CASE WHEN r.unit = 'row' THEN s.received_bytes ELSE s.received_rows * s.elem_bytes END AS bytes
    FROM nccl_splits s, rules r
    WHERE run_match(s.run_id, getvariable('run'))
),
pairs AS (
    SELECT s.run_id, s.unit_key, s.src_rank, s.dst_rank,
           min(s.iteration) AS iteration,
           min(s.start_ns) AS start_ns,
           count(*) AS collectives,
           CAST(sum(s.bytes) AS BIGINT) AS bytes,
           CAST(sum(v.bytes) AS BIGINT) AS received_bytes,
           bool_and(s.complete) AS complete,
           bool_or(s.by_index) AS by_index,
           bool_or(s.elem_bytes IS NULL) AS unknown_dtype,
           min(s.dtype) AS dtype
    FROM splits s
    LEFT JOIN received v ON v.run_id = s.run_id AND v.op_key = s.op_key
                        AND v.src_rank = s.src_rank AND v.dst_rank = s.dst_rank
    GROUP BY s.run_id, s.unit_key, s.src_rank, s.dst_rank
),
senders AS (
    SELECT run_id, unit_key, src_rank, CAST(sum(bytes) AS BIGINT) AS sent
    FROM pairs GROUP BY run_id, unit_key, src_rank
),
receivers AS (
    SELECT run_id, unit_key, dst_rank, CAST(sum(bytes) AS BIGINT) AS got
    FROM pairs GROUP BY run_id, unit_key, dst_rank
),
units AS (
    SELECT p.run_id, p.unit_key, avg(p.bytes) AS pair_mean, min(p.start_ns) AS first_ns,
           min(s.send_imbalance) AS send_imbalance, min(d.recv_imbalance) AS recv_imbalance
    FROM pairs p
    JOIN (SELECT run_id, unit_key, max(sent) / avg(sent) AS send_imbalance
          FROM senders GROUP BY run_id, unit_key) s USING (run_id, unit_key)
    JOIN (SELECT run_id, unit_key, max(got) / avg(got) AS recv_imbalance
          FROM receivers GROUP BY run_id, unit_key) d USING (run_id, unit_key)
    GROUP BY p.run_id, p.unit_key
)
SELECT
    p.run_id,
    nullif(p.unit_key, '') AS op_key,  -- the collective (NULL with per = 'pair')
    p.iteration,                    -- per = 'pair': the first
    p.src_rank,
    p.dst_rank,
    p.collectives,
    p.bytes,                        -- bytes
    p.received_bytes,               -- bytes
    p.bytes / p.collectives AS avg_bytes,
    s.sent AS src_sent_bytes,       -- bytes
    d.got AS dst_received_bytes,    -- bytes
    p.bytes / nullif(u.pair_mean, 0) AS pair_vs_mean,
    u.send_imbalance,
    u.recv_imbalance,
    CASE WHEN NOT p.complete
             THEN 'PyTorch recorded only the first 30 split sizes of this group: bytes unknown'
         WHEN p.unknown_dtype THEN 'dtype ' || coalesce(p.dtype, 'NULL') || ' has no known size: bytes unknown'
         WHEN p.by_index THEN 'the trace lists no process group ranks: dst_rank is the peer''s position in the group'
    END AS note
FROM pairs p
JOIN units u ON u.run_id = p.run_id AND u.unit_key = p.unit_key
JOIN senders s ON s.run_id = p.run_id AND s.unit_key = p.unit_key AND s.src_rank = p.src_rank
JOIN receivers d ON d.run_id = p.run_id AND d.unit_key = p.unit_key AND d.dst_rank = p.dst_rank
ORDER BY p.run_id, u.first_ns, p.unit_key, p.src_rank, p.dst_rank;
