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
-- How (the answers of the plain range join, without its cost: 21 s on 8 M ops, as every op met
-- every range of its thread): each thread's timeline is cut at every range start and end into
-- segments through which the same ranges are open. Each op finds the segment holding its
-- call's start by a hash join on a time bucket (no sort of the ops); the ranges open there are
-- the ones that can hold the call, and do when they end no earlier than it. When all of them
-- do (nearly always), the op is summed into its segment's totals, which each open range then
-- adds up; the few other ops are paired with their ranges one by one. Busy time: an op alone on
-- its rank's timeline (gpu_ops.alone) adds its duration to any union, so only the others go
-- through intervals_union.
WITH ops AS (
    SELECT g.file_id, g.pid, g.launch_tid AS tid, g.launch_ns AS call_start_ns,
           g.launch_end_ns AS call_end_ns, g.correlation_id,
           g.start_ns, g.end_ns, g.alone
    FROM gpu_op_calls g
    WHERE scope_match(g.run_id, g.rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(g.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
), ranges AS (
    -- one integer group per range for the interval macros
    SELECT dense_rank() OVER (ORDER BY file_id, range_id) AS grp, *
    FROM (SELECT run_id, rank, file_id, pid, tid, range_id, domain, name, start_ns,
                 coalesce(end_ns, max(greatest(start_ns, coalesce(end_ns, start_ns)))
                                  OVER (PARTITION BY file_id)) AS end_ns
          FROM nvtx_ranges
          WHERE kind IN ('push_pop', 'start_end', 'annotation')
            AND scope_match(run_id, rank, getvariable('run'), getvariable('rank')))
), segments AS (
    -- each thread's timeline cut at every range start and every range end + 1: the ranges open
    -- (start <= t <= end) are the same all through a segment [segment_ns, segment_end_ns)
    SELECT file_id, pid, tid, ts AS segment_ns,
           lead(ts) OVER (PARTITION BY file_id, pid, tid ORDER BY ts) AS segment_end_ns
    FROM (SELECT file_id, pid, tid, start_ns AS ts FROM ranges
          UNION
          SELECT file_id, pid, tid, end_ns + 1 FROM ranges)
), open_ranges AS (
    SELECT s.file_id, s.pid, s.tid, s.segment_ns, s.segment_end_ns, r.grp, r.end_ns
    FROM segments s
    JOIN ranges r ON r.file_id = s.file_id AND r.pid = s.pid AND r.tid = s.tid
                 AND r.start_ns <= s.segment_ns AND s.segment_ns <= r.end_ns
    WHERE s.segment_end_ns IS NOT NULL
), open_segments AS (
    -- min_end: an op whose call ends by then is inside every range open in the segment
    SELECT file_id, pid, tid, segment_ns, segment_end_ns, min(end_ns) AS min_end_ns
    FROM open_ranges GROUP BY ALL
), bucket AS (
    -- a bucket width holding about one segment
    SELECT CAST(greatest(1, sum(segment_end_ns - segment_ns) // count(*)) AS BIGINT) AS width_ns
    FROM open_segments
), bucketed AS (
    SELECT s.*, unnest(range(s.segment_ns // b.width_ns, (s.segment_end_ns - 1) // b.width_ns + 1))
               AS bucket
    FROM open_segments s, bucket b
), placed AS (
    SELECT o.*, s.segment_ns, o.call_end_ns <= s.min_end_ns AS in_all
    FROM (SELECT o.*, o.call_start_ns // b.width_ns AS bucket FROM ops o, bucket b) o
    JOIN bucketed s ON s.file_id = o.file_id AND s.pid = o.pid AND s.tid = o.tid
                   AND s.bucket = o.bucket
                   AND s.segment_ns <= o.call_start_ns AND o.call_start_ns < s.segment_end_ns
), per_segment AS (
    -- the ops inside every range open in their segment, summed per segment
    SELECT file_id, pid, tid, segment_ns,
           count(DISTINCT correlation_id) AS gpu_ops, min(start_ns) AS first_ns,
           max(end_ns) AS last_ns, sum(end_ns - start_ns) FILTER (WHERE alone) AS alone_ns
    FROM placed WHERE in_all
    GROUP BY ALL
), held AS (
    -- the ops summed below one by one (not inside every open range, or overlapping other ops),
    -- each with the ranges open in its segment that hold its call
    SELECT r.grp, o.correlation_id, o.start_ns, o.end_ns, o.alone, o.in_all
    FROM placed o
    JOIN open_ranges r ON r.file_id = o.file_id AND r.pid = o.pid AND r.tid = o.tid
                      AND r.segment_ns = o.segment_ns AND o.call_end_ns <= r.end_ns
    WHERE NOT (o.in_all AND o.alone)
), per_range AS (
    SELECT r.grp, a.gpu_ops, a.first_ns, a.last_ns, a.alone_ns
    FROM per_segment a
    JOIN open_ranges r USING (file_id, pid, tid, segment_ns)
    UNION ALL
    SELECT grp, count(DISTINCT correlation_id), min(start_ns), max(end_ns),
           sum(end_ns - start_ns) FILTER (WHERE alone)
    FROM held WHERE NOT in_all GROUP BY grp
), overlapping AS (
    SELECT grp, start_ns, end_ns FROM held WHERE NOT alone
), busy AS (
    SELECT grp, sum(end_ns - start_ns) AS busy_ns FROM intervals_union(overlapping) GROUP BY grp
), projected AS (
    SELECT p.grp, any_value(r.run_id) AS run_id, any_value(r.rank) AS rank,
           any_value(r.domain) AS domain, any_value(r.name) AS name,
           any_value(r.end_ns - r.start_ns) AS range_ns,
           sum(p.gpu_ops) AS gpu_ops,
           max(p.last_ns) - min(p.first_ns) AS proj_ns,
           coalesce(sum(p.alone_ns), 0) + coalesce(any_value(b.busy_ns), 0) AS busy_ns
    FROM per_range p
    JOIN ranges r USING (grp)
    LEFT JOIN busy b USING (grp)
    GROUP BY p.grp
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
FROM projected
GROUP BY run_id, rank, domain, name
ORDER BY run_id, rank, proj_total_ns DESC, name;
