-- NCCL kernels -> _nsys_store_nccl_ops, one row per collective or p2p operation.
-- The collective comes from the NCCL NVTX range that launched the kernel (verified on real
-- 2-rank data): the launch call lies inside the collective's own range when it is not grouped,
-- or inside ncclGroupEnd, whose operations are the NCCL ranges issued on the same thread since
-- ncclGroupStart. A kernel without such a range is named from its kernel name.
-- Limitation: nested groups are attributed to the innermost ncclGroupStart.

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
       r.start_ns AS launcher_start, r.collective AS launcher_collective, r.group_id
FROM kernels k
ASOF LEFT JOIN launchers r
    ON r.file_key = k.file_key AND r.pid = k.pid AND r.tid = k.launch_tid AND k.launch_ns >= r.start_ns;

CREATE OR REPLACE TEMP TABLE _nccl_named AS
-- grouped: every operation issued inside the group
SELECT l.kernel_no, c.collective, c.name AS api_name, c.start_ns AS api_start_ns, 'nvtx' AS source
FROM _nccl_launched l
JOIN _nccl_ranges c
  ON l.launcher = 'ncclGroupEnd' AND c.file_key = l.file_key AND c.pid = l.pid AND c.tid = l.launch_tid
 AND c.group_id = l.group_id AND c.collective IS NOT NULL
 AND c.last_group_marker = 'ncclGroupStart'
UNION ALL
-- ungrouped: the collective's own range
SELECT kernel_no, launcher_collective, launcher, launcher_start, 'nvtx'
FROM _nccl_launched
WHERE launcher IS NOT NULL AND launcher <> 'ncclGroupEnd';

-- dtype, reduce op, sizes, group size and communicator live in NVTX payload blobs, which
-- nsys export leaves out by default: they stay NULL.
CREATE OR REPLACE TEMP TABLE _nsys_store_nccl_ops AS
SELECT k.file_key, k.pid,
       k.device_id, k.stream_id, k.start_ns, k.end_ns, k.correlation_id,
       coalesce(n.collective, nccl_collective_from_kernel(k.name), 'Unknown') AS collective,
       nccl_algorithm_from_kernel(k.name) AS algorithm,
       nccl_protocol_from_kernel(k.name) AS protocol,
       -- Without communicator ids the cross-rank key is the per-rank ordinal of the collective
       -- (a rank is a process of a file).
       collective || ':' || row_number() OVER (PARTITION BY k.file_key, k.pid, collective
                                               ORDER BY k.start_ns, n.api_start_ns) AS op_key,
       count(*) OVER (PARTITION BY k.kernel_no) AS kernel_ops,  -- a grouped kernel's operations
       k.name AS kernel_name, n.api_name,
       coalesce(n.source, 'kernel_name') AS collective_source, k.iteration
FROM _nccl_launched k
LEFT JOIN _nccl_named n USING (kernel_no);
