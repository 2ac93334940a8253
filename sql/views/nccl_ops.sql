-- uses: scope
-- One row per collective or point-to-point operation on a rank, with the GPU kernel's times.
-- A kernel may run several operations (nsys: a grouped SendRecv kernel is each Send and Recv of
-- its NCCL group), and each of them has the kernel's full times: sum(dur_ns) then counts that
-- kernel once per operation. kernel_ops says how many rows share the kernel, and
-- dur_share_ns = dur_ns / kernel_ops is a sum that counts every kernel's time once.
CREATE OR REPLACE VIEW nccl_ops AS
SELECT
    run_id,
    rank,
    rank_key(file_id, rank) AS rank_key,  -- one BIGINT per (run_id, rank), as in ranks
    file_id,
    pid,
    device_id,
    stream_id,
    start_ns,            -- the NCCL kernel's start, UTC epoch ns
    end_ns,
    end_ns - start_ns AS dur_ns,
    kernel_ops,          -- the operations this row's kernel runs (rows sharing its times)
    (end_ns - start_ns) / kernel_ops AS dur_share_ns, -- DOUBLE: this operation's share of dur_ns
    collective,          -- AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll, Send, Recv, SendRecv
    collective_name,     -- as the profiler wrote it (Kineto "Collective name": allreduce, _allgather_base)
    algorithm,           -- RING, TREE, ...
    protocol,            -- LL, LL128, SIMPLE
    dtype,
    reduce_op,
    in_nelems,           -- elements sent (Kineto "In msg nelems")
    out_nelems,          -- elements received
    in_bytes,            -- nsys: from the NCCL payload's message size (no element counts, no dtype)
    out_bytes,
    full_bytes,          -- nccl-tests size (AllGather: output size)
    group_size,
    pg_name,             -- process group (nsys: the NCCL communicator, as comm_id)
    pg_desc,
    pg_ranks,
    seq,                 -- n-th on its process group (nsys: collectives on the communicator; a send or receive: to/from that peer)
    comm_id,             -- Kineto "Comms Id"; nsys: NCCL's commHash (0x + 16 hex digits)
    peer,                -- p2p peer (nsys: its rank in the communicator; Broadcast, Reduce: the root)
    in_splits,           -- all_to_allv: dim-0 rows sent to each member of pg_ranks, in order (Kineto "In split size"; PyTorch writes 30 at most); NULL: none recorded
    out_splits,          -- all_to_allv: dim-0 rows received from each member (Kineto "Out split size")
    op_key,              -- equal across ranks for the same collective
    kernel_name,
    api_name,            -- NCCL API range that launched it (nsys)
    collective_source,   -- nvtx | args | kernel_name
    correlation_id,
    iteration
FROM store.nccl_ops;
