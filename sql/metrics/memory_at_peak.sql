-- metric: memory_at_peak
-- version: 1
-- summary: What held the memory at each iteration's peak: the live allocations grouped by the CPU op that made them, largest first
-- unit: bytes
-- grain: run_id, rank, device_type, device_id, iteration, op
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), top (int, default 0)
-- uses: cpu_ops, memory_events, scope
-- see: memory_peaks; torch.cuda.memory._snapshot
--
-- At the peak event of each (rank, device, iteration) (memory_peaks' peak_ns: the first event
-- after which the total allocated was highest), an allocation is live when it happened at or
-- before that event and its address was not freed by then. Live allocations are grouped by the
-- innermost CPU op running on their thread when they were made (NULL: none). The bytes live at
-- the peak that no allocation in the trace explains (made before the trace began, or the source's
-- total counts what its events do not) are one row with op '(before the trace)', so that the
-- rows of an iteration sum to its peak. Needs addresses (PyTorch 1.10+): traces without them
-- give no rows. top > 0 keeps the N largest ops per iteration (the remainder row is kept).
--   bytes, allocations   live bytes and allocation count of the op; share = bytes / peak
-- Shell: SET VARIABLE rank = 0; .read sql/metrics/memory_at_peak.sql
WITH picked AS (
    SELECT * FROM memory_events
    WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
      AND address IS NOT NULL
),
peaks AS (
    SELECT run_id, rank, device_type, device_id, iteration,
           max(allocated) AS peak,
           arg_max({'file_id': file_id, 'event_no': event_no},
                   (allocated, -start_ns, -event_no)) AS peak_at
    FROM picked
    WHERE iteration IS NOT NULL
      AND iteration_in(iteration, getvariable('iteration_from'), getvariable('iteration_to'))
    GROUP BY ALL
),
-- made at or before the peak event of its file and device, and not freed by then
live AS (
    SELECT p.run_id, p.rank, p.device_type, p.device_id, p.iteration, p.peak,
           a.tid, a.start_ns, a.bytes
    FROM peaks p
    JOIN picked a ON a.file_id = p.peak_at.file_id AND a.bytes > 0
     AND a.device_type = p.device_type AND a.device_id = p.device_id
     AND a.event_no <= p.peak_at.event_no
     AND coalesce(a.freed_no, 9223372036854775807) > p.peak_at.event_no
),
-- the innermost CPU op on the allocation's thread: the latest-starting op that started at or
-- before it, when that op still runs (ops nest); else, rarely, the latest-starting one holding it
latest AS (
    SELECT l.*, c.name AS latest_op, c.end_ns >= l.start_ns AS holds
    FROM live l
    ASOF LEFT JOIN (SELECT run_id, rank, tid, start_ns, end_ns, name FROM cpu_ops) c
      ON c.run_id = l.run_id AND c.rank = l.rank AND c.tid = l.tid AND c.start_ns <= l.start_ns
),
made_by AS (
    SELECT * EXCLUDE (latest_op, holds), latest_op AS op FROM latest WHERE holds
    UNION ALL
    SELECT l.* EXCLUDE (latest_op, holds),
           (SELECT arg_max(c.name, c.start_ns) FROM cpu_ops c
            WHERE c.run_id = l.run_id AND c.rank = l.rank AND c.tid = l.tid
              AND c.start_ns <= l.start_ns AND c.end_ns >= l.start_ns) AS op
    FROM latest l WHERE holds IS NOT TRUE
),
by_op AS (
    SELECT run_id, rank, device_type, device_id, iteration, any_value(peak) AS peak, op,
           sum(bytes)::BIGINT AS bytes, count(*) AS allocations
    FROM made_by GROUP BY run_id, rank, device_type, device_id, iteration, op
    UNION ALL
    SELECT p.run_id, p.rank, p.device_type, p.device_id, p.iteration, p.peak,
           '(before the trace)', p.peak - coalesce(sum(l.bytes), 0)::BIGINT, 0
    FROM peaks p
    LEFT JOIN live l USING (run_id, rank, device_type, device_id, iteration)
    GROUP BY p.run_id, p.rank, p.device_type, p.device_id, p.iteration, p.peak
    HAVING p.peak <> coalesce(sum(l.bytes), 0)
),
ranked AS (
    SELECT *, row_number() OVER (PARTITION BY run_id, rank, device_type, device_id, iteration
                                 ORDER BY bytes DESC, op) AS place
    FROM by_op
)
SELECT run_id, rank, device_type, device_id, iteration, op, bytes, allocations,
       bytes / peak AS share
FROM ranked
WHERE coalesce(CAST(getvariable('top') AS INTEGER), 0) <= 0
   OR place <= CAST(getvariable('top') AS INTEGER) OR op = '(before the trace)'
ORDER BY run_id, rank, device_type, device_id, iteration, bytes DESC, op;
