-- metric: memory_at_peak
-- version: 2
-- summary: What held the memory at each iteration's peak: the live allocations grouped by the op (and nn.Module) that made them, largest first
-- unit: bytes
-- grain: run_id, rank, device_type, device_id, iteration, op, module
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), top (int, default 0)
-- uses: cpu_ops, memory_events, nvtx_ranges, python_frames, scope
-- see: memory_peaks; torch.cuda.memory._snapshot
--
-- At the peak event of each (rank, device, iteration) (memory_peaks' peak_ns: the first event
-- after which the total allocated was highest), an allocation is live when it happened at or
-- before that event and its address was not freed by then. Live allocations are grouped by
--   op       the innermost CPU op running on their thread when they were made (Kineto cpu_op;
--            a rank without CPU ops, as an nsys export: the innermost NVTX push/pop range)
--   module   the innermost nn.Module frame running on the thread then ('Linear_0' of
--            python_function 'nn.Module: Linear_0', with_stack=True), NULL without frames
-- (NULL: none). The bytes live at the peak that no allocation in the trace explains (made
-- before the trace began, or the source's total counts what its events do not) are one row
-- with op '(before the trace)', so that the rows of an iteration sum to its peak. Needs
-- addresses (PyTorch 1.10+, nsys): traces without them give no rows. top > 0 keeps the N
-- largest (op, module) rows per iteration (the remainder row is kept).
--   bytes, allocations   live bytes and allocation count of the op; share = bytes / peak
-- Shell: SET VARIABLE rank = 0; .read sql/metrics/memory_at_peak.sql
WITH picked AS (
    SELECT run_id, rank, file_id, device_type, device_id, event_no, tid, start_ns, bytes,
           allocated, freed_no, iteration
    FROM memory_events
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
           a.file_id AS made_file_id, a.event_no AS made_no, a.tid, a.start_ns, a.bytes
    FROM peaks p
    JOIN picked a ON a.file_id = p.peak_at.file_id AND a.bytes > 0
     AND a.device_type = p.device_type AND a.device_id = p.device_id
     AND a.event_no <= p.peak_at.event_no
     AND coalesce(a.freed_no, 9223372036854775807) > p.peak_at.event_no
),
-- what ran on the threads that made live allocations: ops (on ranks without CPU ops, as an
-- nsys export, NVTX ranges) and nn.Module frames. cpu_ops is read once (its tree is costly).
threads AS (
    SELECT DISTINCT run_id, rank, tid FROM live
),
ops AS MATERIALIZED (
    SELECT c.run_id, c.rank, c.tid, c.start_ns, c.end_ns, c.name FROM cpu_ops c
    SEMI JOIN (SELECT DISTINCT run_id, rank FROM live) r ON r.run_id = c.run_id AND r.rank = c.rank
),
spans AS MATERIALIZED (
    SELECT 'op' AS kind, o.* FROM ops o SEMI JOIN threads USING (run_id, rank, tid)
    UNION ALL
    SELECT 'op', n.run_id, n.rank, n.tid, n.start_ns, n.end_ns, n.name
    FROM nvtx_ranges n SEMI JOIN threads USING (run_id, rank, tid)
    WHERE n.kind = 'push_pop' AND n.end_ns IS NOT NULL
      AND (n.run_id, n.rank) NOT IN (SELECT DISTINCT run_id, rank FROM ops)
    UNION ALL
    SELECT 'module', f.run_id, f.rank, f.tid, f.start_ns, f.end_ns, substr(f.name, 12)
    FROM python_frames f SEMI JOIN threads USING (run_id, rank, tid)
    WHERE f.name LIKE 'nn.Module: %'
),
asked AS (
    SELECT l.*, k.kind FROM live l CROSS JOIN (VALUES ('op'), ('module')) k(kind)
),
-- the innermost span holding the allocation: the latest-starting one that started at or before
-- it, when it still runs (spans nest); else, rarely, the latest-starting one holding it
latest AS (
    SELECT a.*, s.name AS latest_name, s.end_ns >= a.start_ns AS holds
    FROM asked a
    ASOF LEFT JOIN spans s
      ON s.kind = a.kind AND s.run_id = a.run_id AND s.rank = a.rank AND s.tid = a.tid
     AND s.start_ns <= a.start_ns
),
named AS (
    SELECT * EXCLUDE (latest_name, holds), latest_name AS name FROM latest WHERE holds
    UNION ALL
    SELECT l.* EXCLUDE (latest_name, holds),
           (SELECT arg_max(s.name, s.start_ns) FROM spans s
            WHERE s.kind = l.kind AND s.run_id = l.run_id AND s.rank = l.rank AND s.tid = l.tid
              AND s.start_ns <= l.start_ns AND s.end_ns >= l.start_ns) AS name
    FROM latest l WHERE holds IS NOT TRUE
),
made_by AS (
    SELECT run_id, rank, device_type, device_id, iteration, peak, made_file_id, made_no,
           max(bytes) AS bytes,
           max(CASE WHEN kind = 'op' THEN name END) AS op,
           max(CASE WHEN kind = 'module' THEN name END) AS module
    FROM named
    GROUP BY run_id, rank, device_type, device_id, iteration, peak, made_file_id, made_no
),
by_op AS (
    SELECT run_id, rank, device_type, device_id, iteration, any_value(peak) AS peak, op, module,
           sum(bytes)::BIGINT AS bytes, count(*) AS allocations
    FROM made_by GROUP BY run_id, rank, device_type, device_id, iteration, op, module
    UNION ALL
    SELECT p.run_id, p.rank, p.device_type, p.device_id, p.iteration, p.peak,
           '(before the trace)', NULL, p.peak - coalesce(sum(l.bytes), 0)::BIGINT, 0
    FROM peaks p
    LEFT JOIN live l USING (run_id, rank, device_type, device_id, iteration)
    GROUP BY p.run_id, p.rank, p.device_type, p.device_id, p.iteration, p.peak
    HAVING p.peak <> coalesce(sum(l.bytes), 0)
),
ranked AS (
    SELECT *, row_number() OVER (PARTITION BY run_id, rank, device_type, device_id, iteration
                                 ORDER BY bytes DESC, op, module) AS place
    FROM by_op
)
SELECT run_id, rank, device_type, device_id, iteration, op, module, bytes, allocations,
       bytes / peak AS share
FROM ranked
WHERE coalesce(CAST(getvariable('top') AS INTEGER), 0) <= 0
   OR place <= CAST(getvariable('top') AS INTEGER) OR op = '(before the trace)'
ORDER BY run_id, rank, device_type, device_id, iteration, bytes DESC, op, module;
