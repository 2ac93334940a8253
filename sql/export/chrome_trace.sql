-- Every event of one run (variable run) as Chrome trace / Perfetto JSON events, one JSON object
-- per row, ordered by time. Each rank is a process; its host threads, GPU streams and an
-- "NCCL ops" lane are its threads. Times are µs since the run's first event, after subtracting
-- each rank's clock offset (clock_offsets), so the ranks line up. Runs of a series written into
-- one file side by side set pid_base (added to the rank: each run its own processes) and label
-- (before 'rank N', e.g. 'tp=2'); both may be unset.
WITH offsets AS (
    SELECT rank, offset_ns FROM clock_offsets WHERE run_id = getvariable('run')
), events AS (
    SELECT g.rank, 1000000 + g.stream_id AS tid, 'stream ' || g.stream_id AS lane, g.name,
           g.kind AS cat, g.start_ns, g.dur_ns,
           json_object('device', g.device_id, 'stream', g.stream_id, 'correlation', g.correlation_id,
                       'bytes', g.bytes, 'iteration', g.iteration, 'grid', [g.grid_x, g.grid_y, g.grid_z],
                       'block', [g.block_x, g.block_y, g.block_z]) AS args
    FROM gpu_ops g WHERE g.run_id = getvariable('run')
    UNION ALL
    SELECT rank, 2000000, 'NCCL ops', collective || coalesce(' ' || pg_desc, ''), 'nccl', start_ns, dur_ns,
           json_object('collective', collective, 'collective_name', collective_name, 'dtype', dtype,
                       'in_bytes', in_bytes, 'out_bytes', out_bytes, 'full_bytes', full_bytes,
                       'group_size', group_size, 'pg_name', pg_name, 'pg_desc', pg_desc,
                       'pg_ranks', pg_ranks, 'seq', seq, 'comm_id', comm_id, 'peer', peer,
                       'op_key', op_key, 'algorithm', algorithm, 'protocol', protocol,
                       'kernel', kernel_name, 'iteration', iteration)
    FROM nccl_ops WHERE run_id = getvariable('run')
    UNION ALL
    SELECT rank, tid, 'thread ' || tid, name, 'cuda_api', start_ns, dur_ns,
           json_object('correlation', correlation_id, 'kind', api_kind, 'iteration', iteration)
    FROM cuda_api WHERE run_id = getvariable('run')
    UNION ALL
    SELECT rank, tid, 'thread ' || tid, name, 'cpu_op', start_ns, dur_ns,
           json_object('external_id', external_id, 'iteration', iteration)
    FROM cpu_ops WHERE run_id = getvariable('run')
    UNION ALL
    SELECT rank, CASE WHEN kind = 'gpu_annotation' THEN 1000000 + tid ELSE tid END,
           CASE WHEN kind = 'gpu_annotation' THEN 'stream ' || tid ELSE 'thread ' || tid END,
           coalesce(domain || ':', '') || name, coalesce(domain, 'nvtx'), start_ns,
           coalesce(dur_ns, 0), json_object('kind', kind, 'depth', depth)
    FROM nvtx_ranges WHERE run_id = getvariable('run')
), aligned AS (
    SELECT e.*, e.start_ns - coalesce(o.offset_ns, 0) AS t FROM events e LEFT JOIN offsets o USING (rank)
), origin AS (
    SELECT min(t) AS t0 FROM aligned
), hosts AS (
    SELECT rank, any_value(host) AS host FROM ranks WHERE run_id = getvariable('run') GROUP BY rank
), base AS (
    SELECT coalesce(CAST(getvariable('pid_base') AS BIGINT), 0) AS pid_base
)
-- process and thread names first, so viewers label the lanes
SELECT json_object('ph', 'M', 'name', 'process_name', 'pid', rank + b.pid_base, 'tid', 0,
                   'args', json_object('name', coalesce(getvariable('label') || ': ', '') || 'rank '
                                               || rank || coalesce(' (' || host || ')', ''))) AS event,
       0 AS sort_group, rank AS sort_pid, 0 AS sort_ts
FROM hosts CROSS JOIN base b
UNION ALL
SELECT json_object('ph', 'M', 'name', 'process_sort_index', 'pid', rank + b.pid_base, 'tid', 0,
                   'args', json_object('sort_index', rank + b.pid_base)), 0, rank, 0
FROM hosts CROSS JOIN base b
UNION ALL
SELECT json_object('ph', 'M', 'name', 'thread_name', 'pid', rank + b.pid_base, 'tid', tid,
                   'args', json_object('name', any_value(lane))), 0, rank, 0
FROM aligned CROSS JOIN base b GROUP BY rank, b.pid_base, tid
UNION ALL
SELECT json_object('ph', 'X', 'cat', a.cat, 'name', a.name, 'pid', a.rank + b.pid_base, 'tid', a.tid,
                   'ts', round((a.t - o.t0) / 1000.0, 3), 'dur', round(a.dur_ns / 1000.0, 3),
                   'args', a.args), 1, a.rank, a.t
FROM aligned a CROSS JOIN origin o CROSS JOIN base b
ORDER BY sort_group, sort_pid, sort_ts;
