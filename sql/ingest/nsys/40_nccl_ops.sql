-- NCCL kernels -> _nsys_store_nccl_ops, one row per collective or p2p operation.
-- The collective comes from the NCCL NVTX range that launched the kernel (verified on real
-- 2-rank data): the launch call lies inside the collective's own range when it is not grouped,
-- or inside ncclGroupEnd, whose operations are the NCCL ranges issued on the same thread since
-- ncclGroupStart. A kernel without such a range is named from its kernel name.
-- Limitation: nested groups are attributed to the innermost ncclGroupStart.
-- Each operation's NCCL payload (_nsys_payload, decoded by tracewh.ingest.nvtx_payload from an
-- export made with --include-blobs) gives its communicator, message size, reduction and root or
-- peer; the communicator's size comes from the process's init payload of that communicator.

CREATE OR REPLACE TEMP TABLE _nccl_ranges AS
SELECT file_key, range_id, pid, tid, start_ns, coalesce(end_ns, 9223372036854775807) AS end_ns, name,
       nccl_collective_from_api(name) AS collective,
       count(*) FILTER (WHERE name = 'ncclGroupStart') OVER thread AS group_id,
       last_value(CASE WHEN name IN ('ncclGroupStart', 'ncclGroupEnd') THEN name END IGNORE NULLS)
           OVER (thread ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS last_group_marker
FROM _nsys_store_nvtx_ranges
WHERE domain = 'NCCL' AND kind = 'push_pop'
WINDOW thread AS (PARTITION BY file_key, pid, tid ORDER BY start_ns, range_id);

CREATE OR REPLACE TEMP TABLE _nccl_launched AS
WITH kernels AS (
    SELECT row_number() OVER () AS kernel_no, k.*, l.tid AS launch_tid, l.start_ns AS launch_ns
    FROM _nsys_store_kernels k
    LEFT JOIN _launches l
           ON l.file_key = k.file_key AND l.pid = k.pid AND l.correlation_id = k.correlation_id
    WHERE regexp_matches(k.name, '^(?:void )?(nccl|rccl)')
), launchers AS (
    SELECT * FROM _nccl_ranges
    WHERE collective IS NOT NULL OR (name = 'ncclGroupEnd' AND last_group_marker = 'ncclGroupStart')
)
SELECT k.*,
       CASE WHEN k.launch_ns <= r.end_ns THEN r.name END AS launcher,
       r.start_ns AS launcher_start, r.collective AS launcher_collective, r.group_id,
       r.range_id AS launcher_range_id
FROM kernels k
ASOF LEFT JOIN launchers r
    ON r.file_key = k.file_key AND r.pid = k.pid AND r.tid = k.launch_tid AND k.launch_ns >= r.start_ns;

CREATE OR REPLACE TEMP TABLE _nccl_named AS
-- grouped: every operation issued inside the group
SELECT l.kernel_no, c.collective, c.name AS api_name, c.start_ns AS api_start_ns, c.range_id,
       'nvtx' AS source
FROM _nccl_launched l
JOIN _nccl_ranges c
  ON l.launcher = 'ncclGroupEnd' AND c.file_key = l.file_key AND c.pid = l.pid AND c.tid = l.launch_tid
 AND c.group_id = l.group_id AND c.collective IS NOT NULL
 AND c.last_group_marker = 'ncclGroupStart'
UNION ALL
-- ungrouped: the collective's own range
SELECT kernel_no, launcher_collective, launcher, launcher_start, launcher_range_id, 'nvtx'
FROM _nccl_launched
WHERE launcher IS NOT NULL AND launcher <> 'ncclGroupEnd';

-- The operations with what their payloads say (NULL without blobs); g = the communicator's size.
CREATE OR REPLACE TEMP TABLE _nccl_ops AS
WITH comms AS (
    SELECT file_key, pid, comm, max(nranks) AS nranks
    FROM _nsys_payload WHERE nranks > 0 GROUP BY ALL
)
SELECT k.*, n.api_name, n.api_start_ns, n.source,
       p.comm, p.bytes, p.reduce_op, coalesce(p.peer, p.root) AS peer, c.nranks AS g,
       coalesce(n.collective, nccl_collective_from_kernel(k.name), 'Unknown') AS collective
FROM _nccl_launched k
LEFT JOIN _nccl_named n USING (kernel_no)
LEFT JOIN _nsys_payload p ON p.file_key = k.file_key AND p.range_id = n.range_id
LEFT JOIN comms c ON c.file_key = k.file_key AND c.pid = k.pid AND c.comm = p.comm;

CREATE OR REPLACE TEMP TABLE _nsys_store_nccl_ops AS
WITH sized AS (
    SELECT *,
           -- NCCL's message size is one rank's share (nvtx payload "Message size [bytes]"):
           -- count x type size, of the send buffer for AllGather and Gather, of the receive
           -- buffer for ReduceScatter and Scatter, of each peer's block for AllToAll
           CASE WHEN collective IN ('ReduceScatter', 'Scatter', 'AllToAll') THEN bytes * g
                ELSE bytes END AS in_bytes,
           CASE WHEN collective IN ('AllGather', 'Gather', 'AllToAll') THEN bytes * g
                ELSE bytes END AS out_bytes,
           collective IN ('Send', 'Recv') AS p2p
    FROM _nccl_ops
), sequenced AS (
    SELECT *,
           -- every rank of a communicator issues its collectives in one order; a send or
           -- receive is the n-th of its kind between two ranks
           CASE WHEN comm IS NOT NULL THEN row_number() OVER (
               PARTITION BY file_key, pid, comm, p2p, CASE WHEN p2p THEN collective || peer END
               ORDER BY api_start_ns, kernel_no) END AS seq
    FROM sized
)
SELECT file_key, pid,
       device_id, stream_id, start_ns, end_ns, correlation_id,
       collective,
       nccl_algorithm_from_kernel(name) AS algorithm,
       nccl_protocol_from_kernel(name) AS protocol,
       CASE WHEN reduce_op >= 5 THEN 'PreMulSum'  -- ncclRedOp_t; from 5 on, user-made ops
            ELSE ['Sum', 'Prod', 'Max', 'Min', 'Avg'][reduce_op + 1] END AS reduce_op,
       in_bytes, out_bytes,
       -- nccl-tests sizes: AllGather counts its output, ReduceScatter its input, others either
       -- (unknown when the gathered or scattered side is: a payload without a communicator,
       -- as NCCL's before 2.19 are, or one whose communicator's init is not in the capture)
       CASE WHEN collective IN ('AllGather', 'Gather') THEN out_bytes
            WHEN collective IN ('ReduceScatter', 'Scatter') THEN in_bytes
            ELSE greatest(in_bytes, out_bytes) END AS full_bytes,
       g AS group_size,
       seq,
       printf('0x%016x', comm) AS comm_id,  -- NCCL's commHash, the same on every rank
       -- PyTorch makes one NCCL communicator per process group: the communicator is the group
       printf('0x%016x', comm) AS pg_name,
       peer,                -- p2p: the peer's rank in the communicator; Broadcast, Reduce: the root
       CASE WHEN comm IS NULL
            -- Without communicator ids the cross-rank key is the per-rank ordinal of the
            -- collective (a rank is a process of a file).
            THEN collective || ':' || row_number() OVER (PARTITION BY file_key, pid, collective
                                                         ORDER BY start_ns, api_start_ns)
            WHEN p2p THEN 'comm ' || printf('0x%016x', comm) || ' ' || collective || ' peer '
                          || coalesce(peer, -1) || ' #' || seq
            ELSE 'comm ' || printf('0x%016x', comm) || ' seq ' || seq END AS op_key,
       count(*) OVER (PARTITION BY kernel_no) AS kernel_ops,  -- a grouped kernel's operations
       name AS kernel_name, api_name,
       coalesce(source, 'kernel_name') AS collective_source, iteration
FROM sequenced;
DROP TABLE _nccl_ops;
