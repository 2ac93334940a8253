-- metric: nvtx_gpu_projection
-- version: 3
-- summary: NVTX ranges and user annotations projected onto the GPU, summed per range name
-- unit: ns
-- grain: run_id, rank, domain, name
-- columns: run_id VARCHAR, rank INTEGER, domain VARCHAR, name VARCHAR, ranges BIGINT, gpu_ops BIGINT, proj_total_ns BIGINT, proj_avg_ns DOUBLE, proj_med_ns DOUBLE, proj_min_ns BIGINT, proj_max_ns BIGINT, gpu_busy_ns BIGINT, range_total_ns BIGINT
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional)
-- uses: gpu_op_calls, intervals, nvtx_names, nvtx_ranges, scope
-- see: nsys recipe nvtx_gpu_proj_sum, nsys stats -r nvtx_gpu_proj_trace
-- show: name, proj_total_ns, ranges, gpu_ops, rank, run_id
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
-- complexity: O(R + C + P): R ranges, C launching calls, P (call, enclosing range) pairs, plus a
--   range's length over the bucket width (a range that never ends spans its thread's calls);
--   hash joins and aggregates only: no sort of the ranges, no per-thread cross join, and no
--   table of ranges or pairs is stored (the ranges are read again by each join).
-- How: each thread's timeline, from its first launching call to its last, is cut into buckets of
-- width W, the mean gap between its calls (so a bucket holds about one call). A range covers
-- the buckets from the one holding its start to the one holding its end (clipped to the calls'
-- span: ranges outside it launched nothing); each call meets, by a hash join on (thread, bucket
-- of its start), only the ranges covering that bucket, and the containment test keeps the
-- pairs. Autograd ranges (one per aten op) are shorter than W and cover one or two buckets, so
-- pairs cost time linear in ranges and calls, where the plain join is quadratic in ranges per
-- thread (609 k on one thread of a one-minute capture). Range names are read only for the
-- ranges that launched something. Busy time: an op alone on its rank's timeline
-- (gpu_ops.alone) adds its duration to any union; the few others travel with their call and
-- meet their ranges by the same join, restricted to those calls, before intervals_union.
WITH calls AS (
    -- one row per launching call (a graph launch runs several ops): its ops' first start, last
    -- end, the time of those alone on their timeline and the spans of the others
    SELECT g.file_id, g.pid, g.launch_tid AS tid, g.launch_ns AS call_start_ns,
           g.launch_end_ns AS call_end_ns,
           min(g.start_ns) AS first_ns, max(g.end_ns) AS last_ns,
           coalesce(sum(g.end_ns - g.start_ns) FILTER (WHERE g.alone), 0) AS alone_ns,
           list({'s': g.start_ns, 'e': g.end_ns}) FILTER (WHERE NOT g.alone) AS crowded
    FROM gpu_op_calls g
    WHERE scope_match(g.run_id, g.rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(g.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
    GROUP BY g.file_id, g.pid, g.launch_tid, g.launch_ns, g.launch_end_ns, g.correlation_id
), threads AS MATERIALIZED (
    -- each thread's calls span [first_ns, last_ns] in buckets of width_ns (about one call
    -- each); a bucket's key is thread_no * 2^32 + its number from the thread's first call
    -- (numbered in a fixed order, and stored: every join must see the same thread_no)
    SELECT *, row_number() OVER (ORDER BY file_id, pid, tid) AS thread_no
    FROM (SELECT file_id, pid, tid, min(call_start_ns) AS first_ns, max(call_start_ns) AS last_ns,
                 CAST(greatest(1, (max(call_start_ns) - min(call_start_ns)) // count(*)) AS BIGINT)
                     AS width_ns
          FROM calls GROUP BY ALL)
), file_last AS (
    -- a range still open at the end of the capture ends at the file's last NVTX timestamp
    SELECT file_id, max(greatest(start_ns, coalesce(end_ns, start_ns))) AS last_ns
    FROM nvtx_ranges
    WHERE kind IN ('push_pop', 'start_end', 'annotation')
      AND scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
    GROUP BY file_id
), ranges AS NOT MATERIALIZED (
    -- the ranges that reach their thread's calls, with the keys of their first and last bucket
    -- (read again by each branch of range_buckets rather than stored)
    SELECT r.file_id, r.range_id, r.start_ns, r.end_ns,
           t.thread_no * 4294967296 + (greatest(r.start_ns, t.first_ns) - t.first_ns) // t.width_ns
               AS first_key,
           t.thread_no * 4294967296 + (least(r.end_ns, t.last_ns) - t.first_ns) // t.width_ns
               AS last_key
    FROM (SELECT r.file_id, r.range_id, r.pid, r.tid, r.start_ns,
                 coalesce(r.end_ns, f.last_ns) AS end_ns
          FROM nvtx_ranges r JOIN file_last f USING (file_id)
          WHERE r.kind IN ('push_pop', 'start_end', 'annotation')
            AND scope_match(r.run_id, r.rank, getvariable('run'), getvariable('rank'))) r
    JOIN threads t ON t.file_id = r.file_id AND t.pid = r.pid AND t.tid = r.tid
    WHERE r.start_ns <= t.last_ns AND r.end_ns >= t.first_ns
), range_buckets AS (
    -- first and last bucket as they are (most ranges), the ones between unnested
    SELECT file_id, range_id, start_ns, end_ns, first_key AS key FROM ranges
    UNION ALL
    SELECT file_id, range_id, start_ns, end_ns, last_key FROM ranges WHERE last_key > first_key
    UNION ALL
    SELECT file_id, range_id, start_ns, end_ns, unnest(range(first_key + 1, last_key))
    FROM ranges WHERE last_key > first_key + 1
), keyed_calls AS NOT MATERIALIZED (
    SELECT c.*, t.thread_no * 4294967296 + (c.call_start_ns - t.first_ns) // t.width_ns AS key
    FROM calls c JOIN threads t USING (file_id, pid, tid)
), per_range AS (
    -- each launching call with every range that holds it, summed per range
    SELECT b.file_id, b.range_id, count(*) AS gpu_ops,
           max(c.last_ns) - min(c.first_ns) AS proj_ns, sum(c.alone_ns) AS alone_ns
    FROM keyed_calls c
    JOIN range_buckets b ON b.key = c.key
                        AND b.start_ns <= c.call_start_ns AND c.call_end_ns <= b.end_ns
    GROUP BY b.file_id, b.range_id
), crowded AS (
    -- the ops that overlap others with the ranges holding their call, one integer group per
    -- range for intervals_union (the same join, for the few calls that have such ops)
    SELECT dense_rank() OVER (ORDER BY b.file_id, b.range_id) AS grp, b.file_id, b.range_id,
           o.s AS start_ns, o.e AS end_ns
    FROM (SELECT *, unnest(crowded) AS o FROM keyed_calls WHERE crowded IS NOT NULL) c
    JOIN range_buckets b ON b.key = c.key
                        AND b.start_ns <= c.call_start_ns AND c.call_end_ns <= b.end_ns
), busy AS (
    SELECT any_value(file_id) AS file_id, any_value(range_id) AS range_id,
           sum(end_ns - start_ns) AS busy_ns
    FROM intervals_union(crowded) GROUP BY grp
), projected AS (
    SELECT n.run_id, n.rank, n.domain, n.name_id,
           coalesce(n.end_ns, f.last_ns) - n.start_ns AS range_ns, p.gpu_ops, p.proj_ns,
           p.alone_ns + coalesce(b.busy_ns, 0) AS busy_ns
    FROM per_range p
    JOIN nvtx_ranges n USING (file_id, range_id)
    JOIN file_last f USING (file_id)
    LEFT JOIN busy b USING (file_id, range_id)
), per_name AS (
    -- grouped by the name's integer; its text is read once per name, below
    SELECT
        run_id,
        rank,
        domain,
        name_id,
        count(*) AS ranges,
        CAST(sum(gpu_ops) AS BIGINT) AS gpu_ops,
        CAST(sum(proj_ns) AS BIGINT) AS proj_total_ns,
        avg(proj_ns) AS proj_avg_ns,
        median(proj_ns) AS proj_med_ns,
        min(proj_ns) AS proj_min_ns,
        max(proj_ns) AS proj_max_ns,
        CAST(sum(busy_ns) AS BIGINT) AS gpu_busy_ns,
        CAST(sum(range_ns) AS BIGINT) AS range_total_ns
    FROM projected
    GROUP BY run_id, rank, domain, name_id
)
SELECT
    run_id,
    rank,
    domain,                        -- NULL = default domain (Kineto annotations: 'torch')
    n.name,
    ranges,
    gpu_ops,
    proj_total_ns,                 -- ns
    proj_avg_ns,                   -- ns
    proj_med_ns,                   -- ns
    proj_min_ns,                   -- ns
    proj_max_ns,                   -- ns
    gpu_busy_ns,                   -- ns
    range_total_ns                 -- ns
FROM per_name p
LEFT JOIN nvtx_names n USING (run_id, name_id)
ORDER BY run_id, rank, proj_total_ns DESC, n.name;