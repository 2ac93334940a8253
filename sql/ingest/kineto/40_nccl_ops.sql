-- NCCL kernels -> _kineto_nccl_ops (store.nccl_ops), one row per kernel. The collective's
-- arguments come from the kernel's own args (PyTorch >= 2.2 copies them there), else from the
-- record_param_comms op with the same External id, else nothing; the collective's kind from
-- those args, else from the ProcessGroup annotation (nccl:all_reduce, ...) around the launch
-- call, else from the kernel name.

CREATE OR REPLACE TEMP TABLE _comm_args AS
SELECT external_id, any_value(args) AS args
FROM _kineto_cpu_ops
WHERE name = 'record_param_comms' AND external_id IS NOT NULL
  AND json_extract_string(args, '$."Collective name"') IS NOT NULL
GROUP BY external_id;

CREATE OR REPLACE TEMP TABLE _nccl AS
WITH kernels AS (
    SELECT g.*,
           CASE WHEN json_extract_string(g.args, '$."Collective name"') IS NOT NULL THEN g.args
                ELSE c.args END AS comm_args,
           CASE WHEN json_extract_string(g.args, '$."Collective name"') IS NOT NULL THEN 'args'
                WHEN c.args IS NOT NULL THEN 'record_param_comms' END AS args_source
    FROM _gpu g
    LEFT JOIN _comm_args c ON c.external_id = g.external_id
    WHERE g.kind = 'kernel' AND regexp_matches(g.name, '^(?:void )?(nccl|rccl)')
), pg_annotations AS (
    SELECT tid, start_ns, end_ns, name FROM _nvtx
    WHERE kind = 'annotation' AND regexp_matches(name, '^(nccl|rccl|xccl):')
)
SELECT k.*,
       CASE WHEN k.launch_ns <= a.end_ns THEN a.name END AS annotation
FROM kernels k
ASOF LEFT JOIN pg_annotations a ON a.tid = k.launch_tid AND k.launch_ns >= a.start_ns;

CREATE OR REPLACE TEMP TABLE _kineto_nccl_ops AS
WITH ops AS (
    SELECT n.*,
           json_extract_string(comm_args, [
               '$."Collective name"', '$.dtype', '$."In msg nelems"', '$."Out msg nelems"',
               '$."Group size"', '$."Process Group Name"', '$."Process Group Description"',
               '$."Process Group Ranks"', '$.Seq', '$."Comms Id"', '$."Src Rank"', '$."Dst Rank"',
               '$."Process Group ID"', '$."In split size"', '$."Out split size"']) AS a
    FROM _nccl n
), named AS (
    SELECT *,
           coalesce(nccl_collective_from_c10d(a[1]), nccl_collective_from_c10d(annotation),
                    nccl_collective_from_kernel(name), 'Unknown') AS collective,
           CASE WHEN a[1] IS NOT NULL THEN args_source
                WHEN annotation IS NOT NULL THEN 'annotation'
                ELSE 'kernel_name' END AS collective_source,
           a[1] AS collective_name,
           a[2] AS dtype,
           TRY_CAST(a[3] AS BIGINT) AS in_nelems,
           TRY_CAST(a[4] AS BIGINT) AS out_nelems,
           TRY_CAST(a[3] AS BIGINT) * dtype_bytes(a[2]) AS in_bytes,
           TRY_CAST(a[4] AS BIGINT) * dtype_bytes(a[2]) AS out_bytes,
           TRY_CAST(a[5] AS INTEGER) AS group_size,
           coalesce(a[6], a[13]) AS pg_name,
           a[7] AS pg_desc,
           a[8] AS pg_ranks,
           TRY_CAST(a[9] AS BIGINT) AS seq,
           a[10] AS comm_id,
           TRY_CAST(coalesce(a[12], a[11]) AS INTEGER) AS peer,
           -- "[1792, 512, ...]" (PyTorch writes the first 30 and ", ..." beyond): the numbers in
           -- order, NULL for "[]" (equal splits) or none
           nullif(CAST(regexp_extract_all(a[14], '\d+') AS BIGINT[]), []) AS in_splits,
           nullif(CAST(regexp_extract_all(a[15], '\d+') AS BIGINT[]), []) AS out_splits
    FROM ops
)
SELECT getvariable('host_pid') AS pid, device_id, stream_id,
       start_ns, end_ns, correlation_id, collective,
       nccl_algorithm_from_kernel(name) AS algorithm, nccl_protocol_from_kernel(name) AS protocol,
       collective_name, dtype, in_nelems, out_nelems, in_bytes, out_bytes,
       -- nccl-tests sizes: AllGather counts its output, ReduceScatter its input, others either
       greatest(in_bytes, out_bytes) AS full_bytes,
       group_size, pg_name, pg_desc, pg_ranks, seq, comm_id, peer, in_splits, out_splits,
       -- The same collective on every rank: (process group, Seq) when the trace has Seq, else
       -- the n-th collective of that process group on this rank, else the n-th of its kind.
       CASE
           WHEN seq IS NOT NULL THEN 'pg ' || coalesce(pg_name, '?') || ' ' || coalesce(pg_ranks, '') || ' seq ' || seq
           WHEN pg_name IS NOT NULL THEN 'pg ' || pg_name || ' ' || coalesce(pg_ranks, '') || ' #' ||
               row_number() OVER (PARTITION BY pg_name, pg_ranks ORDER BY start_ns, event_no)
           ELSE collective || ':' || row_number() OVER (PARTITION BY collective ORDER BY start_ns, event_no)
       END AS op_key,
       name AS kernel_name, annotation AS api_name, collective_source, iteration
FROM named;
