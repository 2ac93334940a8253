-- Every event of the runs in variable runs (a list of run ids) as Chrome trace / Perfetto JSON
-- events, one JSON object per row, ordered by time. Each rank is a process (pid = rank for the
-- first run, 100000 x n + rank for the n-th after it, named "<label>: rank R" when there are
-- several runs, so that each run is a group of processes side by side; variable labels, a list
-- beside runs, names them, e.g. 'tp=2' for a series; else the run id); its host threads, GPU
-- streams and an "NCCL ops" lane are its threads. Times are µs since the run's own first event,
-- after subtracting each rank's clock offset (clock_offsets), so the ranks line up and the runs
-- start together.
WITH chosen AS (
    SELECT run_id, CAST(run_index - 1 AS BIGINT) * 100000 AS pid_base,
           CASE WHEN len(getvariable('runs')) > 1
                THEN coalesce(getvariable('labels')[run_index], run_id) || ': ' ELSE '' END AS label
    FROM (SELECT unnest(getvariable('runs')) AS run_id,
                 generate_subscripts(getvariable('runs'), 1) AS run_index)
), offsets AS (
    SELECT run_id, rank, offset_ns FROM clock_offsets WHERE run_id IN (SELECT run_id FROM chosen)
), events AS (
    SELECT g.run_id, g.rank, 1000000 + g.stream_id AS tid, 'stream ' || g.stream_id AS lane, g.name,
           g.kind AS cat, g.start_ns, g.dur_ns,
           json_object('device', g.device_id, 'stream', g.stream_id, 'correlation', g.correlation_id,
                       'bytes', g.bytes, 'iteration', g.iteration, 'grid', [g.grid_x, g.grid_y, g.grid_z],
                       'block', [g.block_x, g.block_y, g.block_z]) AS args
    FROM gpu_ops g WHERE g.run_id IN (SELECT run_id FROM chosen)
    UNION ALL
    SELECT run_id, rank, 2000000, 'NCCL ops', collective || coalesce(' ' || pg_desc, ''), 'nccl', start_ns, dur_ns,
           json_object('collective', collective, 'collective_name', collective_name, 'dtype', dtype,
                       'in_bytes', in_bytes, 'out_bytes', out_bytes, 'full_bytes', full_bytes,
                       'group_size', group_size, 'pg_name', pg_name, 'pg_desc', pg_desc,
                       'pg_ranks', pg_ranks, 'seq', seq, 'comm_id', comm_id, 'peer', peer,
                       'op_key', op_key, 'algorithm', algorithm, 'protocol', protocol,
                       'kernel', kernel_name, 'iteration', iteration)
    FROM nccl_ops WHERE run_id IN (SELECT run_id FROM chosen)
    UNION ALL
    SELECT run_id, rank, tid, 'thread ' || tid, name, 'cuda_api', start_ns, dur_ns,
           json_object('correlation', correlation_id, 'kind', api_kind, 'iteration', iteration)
    FROM cuda_api WHERE run_id IN (SELECT run_id FROM chosen)
    UNION ALL
    SELECT run_id, rank, tid, 'thread ' || tid, name, 'cpu_op', start_ns, dur_ns,
           json_object('external_id', external_id, 'iteration', iteration)
    FROM cpu_ops WHERE run_id IN (SELECT run_id FROM chosen)
    UNION ALL
    SELECT run_id, rank, CASE WHEN kind = 'gpu_annotation' THEN 1000000 + tid ELSE tid END,
           CASE WHEN kind = 'gpu_annotation' THEN 'stream ' || tid ELSE 'thread ' || tid END,
           coalesce(domain || ':', '') || name, coalesce(domain, 'nvtx'), start_ns,
           coalesce(dur_ns, 0), json_object('kind', kind, 'depth', depth)
    FROM nvtx_ranges WHERE run_id IN (SELECT run_id FROM chosen)
), aligned AS (
    SELECT e.* EXCLUDE (rank), c.pid_base + e.rank AS pid, e.start_ns - coalesce(o.offset_ns, 0) AS t
    FROM events e
    JOIN chosen c USING (run_id)
    LEFT JOIN offsets o USING (run_id, rank)
), origin AS (
    SELECT run_id, min(t) AS t0 FROM aligned GROUP BY run_id
), path AS (
    -- with variable critical_path (tracewh export --critical-path): each step's critical path
    -- across ranks (critical_path ranks=all); each edge's source lies on the lane of the edge
    -- before it. Without it the run asked for is '' and the walk has no step to take.
    SELECT p.*, lag(p.rank) OVER w AS src_rank, lag(p.lane) OVER w AS src_lane
    FROM critical_path_edges(CASE WHEN coalesce(getvariable('critical_path'), false)
                                  THEN CASE WHEN len(getvariable('runs')) = 1
                                            THEN getvariable('runs')[1] END
                                  ELSE '' END, NULL, 'all', NULL, NULL, NULL, NULL, NULL) p
    WHERE p.run_id IN (SELECT run_id FROM chosen)
    WINDOW w AS (PARTITION BY p.run_id, p.grp ORDER BY p.seq)
), flows AS (
    -- an arrow where the path changes lane (launch, sync, a rank waiting for another); a sync
    -- edge joins two ends, drawn 1 ns before them so that each falls inside its slice
    SELECT row_number() OVER () AS id, p.run_id, p.edge_type, p.bound_by, p.name, p.instance,
           c.pid_base + p.src_rank AS src_pid, c.pid_base + p.rank AS dst_pid,
           CASE WHEN p.src_lane LIKE 'stream %' THEN 1000000 ELSE 0 END
               + CAST(split_part(p.src_lane, ' ', 2) AS BIGINT) AS src_tid,
           CASE WHEN p.lane LIKE 'stream %' THEN 1000000 ELSE 0 END
               + CAST(split_part(p.lane, ' ', 2) AS BIGINT) AS dst_tid,
           p.src_ts - coalesce(so.offset_ns, 0) - CAST(p.edge_type = 'sync' AS INTEGER) AS src_t,
           p.dst_ts - coalesce(o.offset_ns, 0)
               - CAST(p.edge_type = 'sync' AND p.lane LIKE 'thread %' AS INTEGER) AS dst_t
    FROM path p
    JOIN chosen c USING (run_id)
    LEFT JOIN offsets so ON so.run_id = p.run_id AND so.rank = p.src_rank
    LEFT JOIN offsets o ON o.run_id = p.run_id AND o.rank = p.rank
    WHERE p.src_lane IS NOT NULL AND (p.src_rank <> p.rank OR p.src_lane <> p.lane)
), hosts AS (
    SELECT c.pid_base + r.rank AS pid, any_value(c.label) AS label, any_value(r.rank) AS rank,
           any_value(r.host) AS host
    FROM ranks r JOIN chosen c USING (run_id) GROUP BY c.pid_base + r.rank
)
-- process and thread names first, so viewers label the lanes
SELECT json_object('ph', 'M', 'name', 'process_name', 'pid', pid, 'tid', 0,
                   'args', json_object('name', label || 'rank ' || rank || coalesce(' (' || host || ')', ''))) AS event,
       0 AS sort_group, pid AS sort_pid, 0 AS sort_ts
FROM hosts
UNION ALL
SELECT json_object('ph', 'M', 'name', 'process_sort_index', 'pid', pid, 'tid', 0,
                   'args', json_object('sort_index', pid)), 0, pid, 0
FROM hosts
UNION ALL
SELECT json_object('ph', 'M', 'name', 'thread_name', 'pid', pid, 'tid', tid,
                   'args', json_object('name', any_value(lane))), 0, pid, 0
FROM aligned GROUP BY pid, tid
UNION ALL
SELECT json_object('ph', 'X', 'cat', a.cat, 'name', a.name, 'pid', a.pid, 'tid', a.tid,
                   'ts', round((a.t - o.t0) / 1000.0, 3), 'dur', round(a.dur_ns / 1000.0, 3),
                   'args', a.args), 1, a.pid, a.t
FROM aligned a JOIN origin o USING (run_id)
UNION ALL
SELECT json_object('ph', ph, 'id', f.id, 'pid', CASE ph WHEN 's' THEN f.src_pid ELSE f.dst_pid END,
                   'tid', CASE ph WHEN 's' THEN f.src_tid ELSE f.dst_tid END,
                   'ts', round((CASE ph WHEN 's' THEN f.src_t ELSE f.dst_t END - o.t0) / 1000.0, 3),
                   'cat', 'critical_path', 'name', 'critical path: ' || f.edge_type,
                   'bp', 'e', 'args', json_object('bound_by', f.bound_by, 'name', f.name,
                                                  'step', f.instance)),
       2, f.id, CAST(ph = 'f' AS INTEGER)  -- each arrow's start before its end
FROM flows f JOIN origin o USING (run_id), (VALUES ('s'), ('f')) v(ph)
ORDER BY sort_group, sort_pid, sort_ts;
