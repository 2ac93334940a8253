-- metric: comm_breakdown
-- version: 3
-- summary: Communication time split into waiting for the last rank, the transfer and the launch, per process group, collective and rank, with the exposed part of each and its share of the step
-- unit: ns
-- grain: run_id, process_group, collective, rank, op_key
-- columns: run_id VARCHAR, process_group VARCHAR, parallelism VARCHAR, collective VARCHAR, rank INTEGER, op_key VARCHAR, iteration INTEGER, collectives BIGINT, duration_ns BIGINT, launch_ns BIGINT, wait_ns BIGINT, transfer_ns BIGINT, launch_exposed_ns BIGINT, wait_exposed_ns BIGINT, transfer_exposed_ns BIGINT, step_ns BIGINT, launch_step_pct DOUBLE, wait_step_pct DOUBLE, transfer_step_pct DOUBLE, exposed_step_pct DOUBLE, blocking BIGINT, ends_early BIGINT
-- params: run (text, optional), rank (int, optional), collective (text, optional), iteration_from (int, optional), iteration_to (int, optional), per_op (bool, default false), per_group (bool, default false), parallelism (bool, default false)
-- see: HTA straggler analysis (wait); vllm-project/vllm#52777 (wait vs transfer per group)
-- uses: collective_parts, cuda_api, gpu_ops, gpu_syncs, iterations, parallel_groups, scope
-- complexity: O(n log n) in collectives; O(n) in GPU ops (binned equi-join of compute kernels to the parts, merge of the overlapping ones only)
-- show: collective, rank, wait_ns, transfer_ns, launch_ns, exposed_step_pct, duration_ns, op_key, process_group, run_id
--
-- v3: clock_offsets counts a grouped kernel (several collectives in one NCCL group) as one observation: nsys runs with grouped collectives get Kineto's offsets (issue 34).
-- Each collective matched across ranks (collective_waits: the same op_key on two or more ranks;
-- sends and receives excluded), on each of its ranks, is cut into three parts by four instants
-- of that rank's clock: the CUDA API call that launched the kernel, the kernel's start (this
-- rank's arrival), the last rank's arrival (aligned across hosts as collective_waits aligns it)
-- and the kernel's end:
--   launch_ns    call -> kernel start: launching and queueing behind earlier work on the
--                stream (NULL: the call is not in the trace)
--   wait_ns      kernel start -> last rank's arrival: exactly collective_waits.wait_ns
--   transfer_ns  last rank's arrival -> kernel end
--   duration_ns  call -> kernel end (kernel start -> end when the call is not in the trace)
-- so wait_ns + transfer_ns + coalesce(launch_ns, 0) = duration_ns, always. transfer_ns is
-- negative when the kernel ended before the last rank arrived on the aligned clock: only a
-- misestimated clock offset does that (ends_early counts those collectives).
-- Each part's *_exposed_ns is its time not overlapped by this rank's compute kernels (gpu_ops of
-- kind compute, any stream); *_step_pct is the part's share of step_ns, the duration of the
-- rank's steps (iterations) that launched the collectives (NULL without steps).
-- blocking: a stream wait (gpu_syncs 'Stream Wait Event' of another stream) waits on an event
-- recorded after the collective was launched on its stream, and before the next collective was
-- launched there: work on another stream, typically compute, waited for it. NULL when the trace
-- does not say which event a stream waited on (nsys exports, Kineto before 2024).
-- parallelism = true adds the parallelism dimension: the pattern parallel_groups gives the group
-- and collective (DDP / ZeRO-1, tensor parallel, ...). Off by default: it reads every NVTX range
-- to place collectives in forward / backward (2.5 s more on 20 M ranges); without it the column
-- is NULL.
-- Default: one row per run, process group, collective and rank, summed over its collectives
-- (collectives; blocking counts the blocking ones; op_key and iteration NULL). per_op = true: one
-- row per collective and rank (collectives 1, blocking TRUE / FALSE). per_group = true (version 2,
-- the report's bars): one row per run and process group, summed over its collectives and ranks
-- (collective and rank NULL; step_ns: each rank's launching steps once).
-- rank / collective / iteration_from / iteration_to keep rows (iterations: of the launching step);
-- waits are always measured against every rank of the collective.
WITH arrivals AS MATERIALIZED (
    SELECT *, row_number() OVER (ORDER BY run_id, op_key, rank) AS row_id
    FROM collective_arrivals()
    WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
      AND (getvariable('collective') IS NULL
           OR collective = CAST(getvariable('collective') AS VARCHAR))
      AND iteration_in(iteration, getvariable('iteration_from'), getvariable('iteration_to'))
),
parts AS (
    -- span_id: 3 x row + 0 launch, 1 wait, 2 transfer
    SELECT row_id * 3 AS span_id, rank_key AS grp, call_ns AS start_ns, start_ns AS end_ns
    FROM arrivals WHERE call_ns IS NOT NULL
    UNION ALL
    SELECT row_id * 3 + 1, rank_key, start_ns, last_arrival_ns FROM arrivals
    UNION ALL
    SELECT row_id * 3 + 2, rank_key, last_arrival_ns, end_ns FROM arrivals
),
compute AS (
    SELECT rank_key AS grp, start_ns, end_ns, alone FROM gpu_ops WHERE kind = 'compute'
),
hidden AS (
    -- per part, the time compute kernels of its rank run during it
    SELECT span_id // 3 AS row_id,
           sum(end_ns - start_ns) FILTER (WHERE span_id % 3 = 0) AS launch_ns,
           sum(end_ns - start_ns) FILTER (WHERE span_id % 3 = 1) AS wait_ns,
           sum(end_ns - start_ns) FILTER (WHERE span_id % 3 = 2) AS transfer_ns
    FROM busy_pieces(parts, compute)
    GROUP BY span_id // 3
),
event_waits AS (
    -- stream waits on an event whose cudaEventRecord call the trace names, with that call's
    -- start: the event holds the work launched on wait_stream_id before it
    SELECT s.run_id, s.rank, s.wait_stream_id AS stream_id, a.start_ns AS record_ns
    FROM gpu_syncs s
    JOIN cuda_api a
      ON a.file_id = s.file_id AND a.pid = s.pid AND a.correlation_id = s.wait_event_correlation_id
    WHERE s.sync_kind = 'Stream Wait Event' AND s.wait_event_correlation_id IS NOT NULL
      AND s.stream_id IS DISTINCT FROM s.wait_stream_id
),
known AS (
    -- ranks whose trace says which event a stream waited on
    SELECT DISTINCT run_id, rank FROM gpu_syncs
    WHERE sync_kind = 'Stream Wait Event' AND wait_event_correlation_id IS NOT NULL
),
launched AS (
    SELECT run_id, rank, stream_id, call_ns, row_id FROM arrivals WHERE call_ns IS NOT NULL
),
blocked AS (
    -- the collective launched last on the event's stream before the event was recorded
    SELECT DISTINCT c.row_id
    FROM event_waits w
    ASOF JOIN launched c
      ON c.run_id = w.run_id AND c.rank = w.rank AND c.stream_id = w.stream_id
     AND w.record_ns >= c.call_ns
),
steps AS (
    SELECT run_id, rank, iteration, max(end_ns - start_ns) AS step_ns
    FROM iterations WHERE end_ns IS NOT NULL
    GROUP BY ALL
),
per_op AS (
    SELECT a.run_id, a.process_group, a.collective, a.rank, a.op_key, a.iteration,
           a.end_ns - coalesce(a.call_ns, a.start_ns) AS duration_ns,
           a.start_ns - a.call_ns AS launch_ns,
           a.wait_ns,
           a.end_ns - a.last_arrival_ns AS transfer_ns,
           a.start_ns - a.call_ns - coalesce(h.launch_ns, 0) AS launch_exposed_ns,
           a.wait_ns - coalesce(h.wait_ns, 0) AS wait_exposed_ns,
           a.end_ns - a.last_arrival_ns - coalesce(h.transfer_ns, 0) AS transfer_exposed_ns,
           a.end_ns < a.last_arrival_ns AS ends_early,
           CASE WHEN b.row_id IS NOT NULL THEN true WHEN k.rank IS NOT NULL THEN false END AS blocking,
           s.step_ns
    FROM arrivals a
    LEFT JOIN hidden h ON h.row_id = a.row_id
    LEFT JOIN blocked b ON b.row_id = a.row_id
    LEFT JOIN known k ON k.run_id = a.run_id AND k.rank = a.rank
    LEFT JOIN steps s ON s.run_id = a.run_id AND s.rank = a.rank AND s.iteration = a.iteration
),
rows AS (
    SELECT run_id, process_group, collective, rank, op_key, iteration,
           1 AS collectives, duration_ns, launch_ns, wait_ns, transfer_ns,
           launch_exposed_ns, wait_exposed_ns, transfer_exposed_ns,
           CAST(ends_early AS INTEGER) AS ends_early, blocking, step_ns
    FROM per_op
    WHERE coalesce(CAST(getvariable('per_op') AS BOOLEAN), false)
    UNION ALL
    -- summed per group, collective and rank; per_group: per group (collective and rank NULL)
    SELECT run_id, process_group, kind, who, NULL, NULL,
           count(*), sum(duration_ns), sum(launch_ns), sum(wait_ns), sum(transfer_ns),
           sum(launch_exposed_ns), sum(wait_exposed_ns), sum(transfer_exposed_ns),
           count(*) FILTER (WHERE ends_early),
           count(*) FILTER (WHERE blocking) + CASE WHEN bool_and(blocking IS NULL) THEN NULL ELSE 0 END,
           sum(step_ns)  -- each step of each rank once: the steps that launched the collectives
               FILTER (WHERE NOT repeated_step)
    FROM (SELECT *, row_number() OVER (PARTITION BY run_id, process_group, kind, rank, iteration
                                       ORDER BY op_key) > 1 AS repeated_step
          FROM (SELECT *,
                       CASE WHEN NOT coalesce(CAST(getvariable('per_group') AS BOOLEAN), false)
                            THEN collective END AS kind,
                       CASE WHEN NOT coalesce(CAST(getvariable('per_group') AS BOOLEAN), false)
                            THEN rank END AS who
                FROM per_op))
    WHERE NOT coalesce(CAST(getvariable('per_op') AS BOOLEAN), false)
    GROUP BY run_id, process_group, kind, who
)
SELECT
    r.run_id,
    r.process_group,                 -- Process Group Name ('' when the trace names none)
    p.pattern AS parallelism,        -- parallel_groups' pattern of the group and collective
    r.collective,
    r.rank,
    r.op_key,                        -- per_op: the collective (NULL: summed)
    r.iteration,                     -- per_op: the step that launched it
    r.collectives,
    CAST(r.duration_ns AS BIGINT) AS duration_ns,     -- call (else kernel start) -> kernel end
    CAST(r.launch_ns AS BIGINT) AS launch_ns,         -- call -> kernel start
    CAST(r.wait_ns AS BIGINT) AS wait_ns,             -- kernel start -> last rank's arrival
    CAST(r.transfer_ns AS BIGINT) AS transfer_ns,     -- last rank's arrival -> kernel end
    CAST(r.launch_exposed_ns AS BIGINT) AS launch_exposed_ns,    -- not under this rank's compute
    CAST(r.wait_exposed_ns AS BIGINT) AS wait_exposed_ns,
    CAST(r.transfer_exposed_ns AS BIGINT) AS transfer_exposed_ns,
    CAST(r.step_ns AS BIGINT) AS step_ns,             -- the launching steps' duration
    r.launch_ns * 100.0 / nullif(r.step_ns, 0) AS launch_step_pct,
    r.wait_ns * 100.0 / nullif(r.step_ns, 0) AS wait_step_pct,
    r.transfer_ns * 100.0 / nullif(r.step_ns, 0) AS transfer_step_pct,
    (coalesce(r.launch_exposed_ns, 0) + r.wait_exposed_ns + r.transfer_exposed_ns) * 100.0
        / nullif(r.step_ns, 0) AS exposed_step_pct,   -- the three exposed parts together
    r.blocking,                      -- per_op: BOOLEAN; summed: how many (NULL: not known)
    r.ends_early                     -- kernel ended before the last arrival (clock offsets off)
FROM rows r
LEFT JOIN (SELECT run_id, process_group, collective, pattern FROM parallel_groups
           WHERE coalesce(CAST(getvariable('parallelism') AS BOOLEAN), false)) p
       ON p.run_id = r.run_id AND p.process_group = r.process_group AND p.collective = r.collective
ORDER BY r.run_id, r.process_group, r.collective, r.rank, r.iteration, r.op_key;
