-- uses: nccl_names, nccl_ops
-- One row per all_to_allv operation on a rank and member of its process group, in group order:
-- the dim-0 rows the rank sent to that member and received from it, as PyTorch >= 2.2 records
-- them ("In split size" / "Out split size": nccl_ops.in_splits, out_splits), and their bytes.
-- ProcessGroupNCCL::alltoall_base sends split[j] rows of in_nelems / sum(in_splits) elements
-- each to member j (a token of a MoE dispatch: its hidden state), so bytes = rows x that row
-- length x the dtype's size. The self pair is a local copy, kept as PyTorch lists it.
-- Operations whose trace records no splits (equal all_to_all, nsys, PyTorch < 2.2) have no rows.
-- PyTorch writes the first 30 split sizes of a larger group and "..." (complete = false): those
-- rows keep their counts, and the bytes, which need every split to size a row, are NULL.
CREATE OR REPLACE VIEW nccl_splits AS
WITH ops AS (
    SELECT run_id, rank, file_id, op_key, collective_name, pg_name, group_size, dtype, iteration,
           start_ns, end_ns, in_nelems, out_nelems, in_splits, out_splits,
           CAST(regexp_extract_all(pg_ranks, '\d+') AS INTEGER[]) AS members,
           coalesce(len(in_splits) = group_size AND len(out_splits) = group_size, false) AS complete
    FROM nccl_ops
    WHERE in_splits IS NOT NULL OR out_splits IS NOT NULL
), peers AS (
    SELECT *, unnest(generate_series(1, greatest(coalesce(len(in_splits), 0),
                                                 coalesce(len(out_splits), 0)))) AS j
    FROM ops
)
SELECT
    run_id,
    rank,
    file_id,
    op_key,              -- the collective (nccl_ops.op_key, equal on every member)
    collective_name,     -- as PyTorch wrote it: all_to_allv
    pg_name,
    group_size,
    dtype,
    iteration,
    start_ns,            -- the operation's kernel on this rank, UTC ns
    end_ns,
    CAST(j - 1 AS INTEGER) AS peer_index, -- the member's position in the process group (0-based)
    CAST(CASE WHEN len(members) = group_size THEN members[j] END AS INTEGER) AS peer_rank,  -- its global rank (Process Group Ranks); NULL when the trace lists none or not all
    in_splits[j] AS sent_rows,       -- dim-0 rows sent to the member ("In split size")
    out_splits[j] AS received_rows,  -- dim-0 rows received from it ("Out split size")
    dtype_bytes(dtype) AS elem_bytes,  -- bytes per element; NULL for a dtype tracewh does not know
    CASE WHEN complete AND list_sum(in_splits) > 0
         THEN CAST(in_splits[j] * in_nelems // list_sum(in_splits) * dtype_bytes(dtype) AS BIGINT) END
         AS sent_bytes,
    CASE WHEN complete AND list_sum(out_splits) > 0
         THEN CAST(out_splits[j] * out_nelems // list_sum(out_splits) * dtype_bytes(dtype) AS BIGINT) END
         AS received_bytes,
    complete             -- every member's split recorded (false: PyTorch cut the list at 30)
FROM peers;
