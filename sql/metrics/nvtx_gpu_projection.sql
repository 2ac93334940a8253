-- metric: nvtx_gpu_projection
-- version: 3
-- summary: NVTX ranges and user annotations projected onto the GPU, summed per range name
-- unit: ns
-- grain: run_id, rank, domain, name
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional)
-- uses: gpu_op_calls, intervals, nvtx_ranges, scope
-- see: nsys recipe nvtx_gpu_proj_sum, nsys stats -r nvtx_gpu_proj_trace
--
-- nsys' definition (nvtx_gpu_proj_trace): a GPU op (kernel, memcpy, memset) belongs to an NVTX
-- range when the CUDA API call that launched it lies inside the range on the same thread
-- (range start <= call start and call end <= range end); a range still open at the end of the
-- capture ends at the last NVTX timestamp of its file. A range's projection starts at the
-- first start of its GPU ops and ends at the last end; ranges that launched nothing have none.
-- Every enclosing range counts the op (nested ranges project each). Here the launching call is
-- the first API call with the op's correlation id (nsys: the runtime call; a kernel launched by
-- a driver call alone counts here, not in nsys), and the ranges are push/pop, start/end
-- (nsys keeps only those that end on the thread they started on: the export does not say) and
-- Kineto user annotations. Per (rank, domain, name):
--   ranges          ranges of that name that launched GPU work
--   gpu_ops         GPU ops inside them (an op in two ranges of one name counts twice)
--   proj_total_ns, proj_avg_ns, proj_min_ns, proj_max_ns, proj_med_ns: projected durations
--   gpu_busy_ns     per range, the time at least one of its ops ran (|U ops|), summed
--   range_total_ns  the ranges' own (CPU) durations, summed
-- iteration_from / iteration_to keep ops launched in those iterations (inclusive).
WITH ops AS (
    SELECT g.file_id, g.pid, g.launch_tid AS tid, g.launch_ns AS call_start_ns,
           g.launch_end_ns AS call_end_ns, g.correlation_id,
           g.start_ns, g.end_ns
    FROM gpu_op_calls g
    WHERE scope_match(g.run_id, g.rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(g.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
), ranges AS (
    SELECT run_id, rank, file_id, pid, tid, range_id, domain, name, start_ns,
           coalesce(end_ns, max(greatest(start_ns, coalesce(end_ns, start_ns)))
                            OVER (PARTITION BY file_id)) AS end_ns
    FROM nvtx_ranges
    WHERE kind IN ('push_pop', 'start_end', 'annotation')
      AND scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
), inside AS (
    -- one integer group per range for the interval macros
    SELECT dense_rank() OVER (ORDER BY r.file_id, r.range_id) AS grp,
           r.run_id, r.rank, r.file_id, r.range_id, r.domain, r.name,
           r.end_ns - r.start_ns AS range_ns, o.correlation_id, o.start_ns, o.end_ns
    FROM ranges r
    JOIN ops o ON o.file_id = r.file_id AND o.pid = r.pid AND o.tid = r.tid
              AND r.start_ns <= o.call_start_ns AND o.call_end_ns <= r.end_ns
), busy AS (
    SELECT grp, sum(end_ns - start_ns) AS busy_ns FROM intervals_union(inside) GROUP BY grp
), projected AS (
    SELECT grp, any_value(run_id) AS run_id, any_value(rank) AS rank,
           any_value(domain) AS domain, any_value(name) AS name, any_value(range_ns) AS range_ns,
           count(DISTINCT correlation_id) AS gpu_ops,
           max(end_ns) - min(start_ns) AS proj_ns
    FROM inside
    GROUP BY grp
)
SELECT
    run_id,
    rank,
    domain,                        -- NULL = default domain (Kineto annotations: 'torch')
    name,
    count(*) AS ranges,
    CAST(sum(gpu_ops) AS BIGINT) AS gpu_ops,
    CAST(sum(proj_ns) AS BIGINT) AS proj_total_ns,      -- ns
    avg(proj_ns) AS proj_avg_ns,                        -- ns
    median(proj_ns) AS proj_med_ns,                     -- ns
    min(proj_ns) AS proj_min_ns,                        -- ns
    max(proj_ns) AS proj_max_ns,                        -- ns
    CAST(sum(busy_ns) AS BIGINT) AS gpu_busy_ns,        -- ns
    CAST(sum(range_ns) AS BIGINT) AS range_total_ns     -- ns
FROM projected JOIN busy USING (grp)
GROUP BY run_id, rank, domain, name
ORDER BY run_id, rank, proj_total_ns DESC, name;
