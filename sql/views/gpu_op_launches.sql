-- uses: gpu_op_calls, gpu_ops, launch_cpu_ops, range_nesting
-- The link from each GPU op (kernel, memcpy, memset) to the host work that caused it: the API
-- call that launched it, the innermost CPU op around that call and the innermost NVTX range /
-- user annotation around it. One row per gpu_ops row; the launch columns are NULL when the
-- trace has no launching call (work launched before the capture), the CPU op and range NULL
-- when none encloses the launch.
--   CPU op, Kineto: the cpu_op whose External id the launch call carries (several: the
--     deepest enclosing the call); else the innermost cpu_op open on the launching thread at
--     the call's start. nsys records PyTorch ops as NVTX ranges (--pytorch=autograd-nvtx): there
--     the CPU op is the innermost NVTX range, cpu_op_id is NULL and range_id names it.
--   Range: the innermost push/pop NVTX range (nsys) or user annotation (Kineto) open on the
--     launching thread at the call's start; its ancestors follow nvtx_ranges.parent_id.
-- "Open at" follows range_nesting: a call starting when a range starts is inside it, one
-- starting when it ends is not.

-- gpu_op_launches_of: the rows of the runs want_runs (a VARCHAR list; NULL: every run), each
-- part computed for those runs' sources only: a filter on the view's run_id reaches gpu_ops
-- but not the sweeps below it, whose windows run over every run (from a 40-run warehouse one
-- run took 7x its time alone). tracewh export reads a run's rows through it.
CREATE OR REPLACE MACRO gpu_op_launches_of(want_runs) AS TABLE
WITH files AS MATERIALIZED (
    SELECT file_id FROM store.sources
    WHERE want_runs IS NULL OR list_contains(CAST(want_runs AS VARCHAR[]), run_id)
), calls AS (  -- the launching calls, one row each (a graph launch runs several ops), of
              -- those sources: filtered before the DISTINCT, which a filter does not pass
    SELECT DISTINCT api_id, file_id, pid, correlation_id, launch_tid AS tid,
           launch_ns AS start_ns, launch_end_ns AS end_ns, api_name AS name
    FROM gpu_op_calls
    WHERE file_id IN (SELECT file_id FROM files)
      AND (want_runs IS NULL OR list_contains(CAST(want_runs AS VARCHAR[]), run_id))  -- at the scan
), in_ranges AS (  -- launch calls as points among the NVTX ranges and annotations:
                   -- range_nesting gives each point the innermost range open at it as parent
    SELECT rowid AS range_id, file_id * 4294967296 + coalesce(pid, 0) AS pid, tid, start_ns,
           end_ns
    FROM store.nvtx_ranges
    WHERE kind IN ('push_pop', 'annotation') AND file_id IN (SELECT file_id FROM files)
    UNION ALL
    SELECT -1 - api_id, file_id * 4294967296 + coalesce(pid, 0), tid, start_ns, start_ns
    FROM calls
), by_range AS (
    SELECT -1 - range_id AS api_id, parent_id AS nvtx_row
    FROM range_nesting('in_ranges') WHERE range_id < 0
)
SELECT g.run_id, g.rank, g.rank_key, g.file_id, g.pid, g.device_id, g.stream_id,
       g.op, g.kind, g.name, g.start_ns, g.end_ns, g.dur_ns, g.correlation_id,
       l.api_id,                  -- the launching call (its row in cuda_api, this query)
       l.name AS api_name,        -- cudaLaunchKernel, cudaMemcpyAsync, ...
       l.tid AS launch_tid,
       l.start_ns AS launch_ns,   -- = gpu_ops.launch_ns
       l.end_ns AS launch_end_ns,
       c.cpu_op_id,               -- cpu_ops.op_id (launch_cpu_ops)
       n.range_id,                -- nvtx_ranges.range_id (with file_id)
       n.name AS range_name
FROM gpu_ops g
LEFT JOIN calls l
       ON l.file_id = g.file_id AND l.pid = g.pid AND l.correlation_id = g.correlation_id
      AND l.start_ns = g.launch_ns
LEFT JOIN launch_cpu_ops_of((SELECT min(file_id) FROM files), (SELECT max(file_id) FROM files),
                            false) c ON c.api_id = l.api_id
LEFT JOIN by_range r ON r.api_id = l.api_id
LEFT JOIN (SELECT rowid AS nvtx_row, file_id, range_id, name FROM store.nvtx_ranges) n
       ON n.nvtx_row = r.nvtx_row
WHERE g.file_id IN (SELECT file_id FROM files);

CREATE OR REPLACE VIEW gpu_op_launches AS
SELECT * FROM gpu_op_launches_of(NULL);
