-- metric: memory_at_peak
-- version: 3
-- summary: What held the memory at each iteration's peak: the live allocations grouped by the op (and nn.Module) that made them, largest first
-- unit: bytes
-- grain: run_id, rank, device_type, device_id, iteration, op, module
-- columns: run_id VARCHAR, rank INTEGER, device_type VARCHAR, device_id INTEGER, iteration INTEGER, op VARCHAR, module VARCHAR, bytes BIGINT, allocations BIGINT, share DOUBLE
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), top (int, default 0)
-- uses: cpu_op_names, memory_events, nvtx_ranges, python_frames, scope
-- complexity: O(n log n) in memory events (running sums; the module by ASOF join); the nested lookup runs only for the peaks
-- see: memory_peaks; torch.cuda.memory._snapshot
-- show: op, bytes, share, module, rank, iteration, run_id
--
-- At the peak event of each (rank, device, iteration) (memory_peaks' peak_ns: the first event
-- after which the total allocated was highest), an allocation is live when it happened at or
-- before that event and its address was not freed by then. Live allocations are grouped by
--   op       the innermost CPU op running on their thread when they were made (Kineto cpu_op;
--            a rank without CPU ops, as an nsys export: the innermost NVTX push/pop range), as
--            memory_events names it (cpu_op_id, nvtx_range_id)
--   module   the innermost nn.Module frame running on the thread then ('Linear_0' of
--            python_function 'nn.Module: Linear_0', with_stack=True), NULL without frames
-- (NULL: none). The bytes live at the peak that no allocation in the trace explains (made
-- before the trace began, or the source's total counts what its events do not) are one row
-- with op '(before the trace)', so that the rows of an iteration sum to its peak. Needs
-- addresses (PyTorch 1.10+, nsys): traces without them give no rows. top > 0 keeps the N
-- largest (op, module) rows per iteration (the remainder row is kept).
--   bytes, allocations   live bytes and allocation count of the op; share = bytes / peak
-- Version 3: the op is the one memory_events links at ingest, by the cpu_ops tree's rule: an op
-- that ends as the allocation is made no longer holds it (version 2 counted it), and of ops that
-- overlap without nesting the tree's child holds it; 2x faster on 10 M events (no tree).
-- Shell: SET VARIABLE rank = 0; .read sql/metrics/memory_at_peak.sql
-- picked is read twice, not materialized: scanning the stored columns again is cheaper
WITH picked AS NOT MATERIALIZED (
    SELECT run_id, rank, file_id, device_type, device_id, event_no, tid, start_ns, bytes,
           allocated, freed_no, iteration, cpu_op_id, nvtx_range_id
    FROM memory_events
    WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
      AND address IS NOT NULL
),
tops AS (
    SELECT run_id, rank, device_type, device_id, iteration, max(allocated) AS peak
    FROM picked
    WHERE iteration IS NOT NULL
      AND iteration_in(iteration, getvariable('iteration_from'), getvariable('iteration_to'))
    GROUP BY ALL
),
-- the first event reaching the peak (found among the few that reach it: an arg_max over all
-- events keyed by (allocated, -start_ns, -event_no) took twice as long)
peaks AS (
    SELECT t.run_id, t.rank, t.device_type, t.device_id, t.iteration, t.peak,
           arg_min({'file_id': p.file_id, 'event_no': p.event_no}, (p.start_ns, p.event_no))
               AS peak_at
    FROM tops t
    JOIN picked p ON p.run_id = t.run_id AND p.rank = t.rank AND p.device_type = t.device_type
     AND p.device_id IS NOT DISTINCT FROM t.device_id AND p.iteration = t.iteration
     AND p.allocated = t.peak
    GROUP BY ALL
),
-- made at or before the peak event of its file and device, and not freed by then
live AS (
    SELECT p.run_id, p.rank, p.device_type, p.device_id, p.iteration, p.peak,
           a.file_id AS made_file_id, a.event_no AS made_no, a.tid, a.start_ns, a.bytes,
           a.cpu_op_id, a.nvtx_range_id
    FROM peaks p
    JOIN picked a ON a.file_id = p.peak_at.file_id AND a.bytes > 0
     AND a.device_type = p.device_type AND a.device_id = p.device_id
     AND a.event_no <= p.peak_at.event_no
     AND coalesce(a.freed_no, 9223372036854775807) > p.peak_at.event_no
),
-- ranks with CPU ops name the op; the others (nsys exports) the NVTX range
op_ranks AS (
    SELECT DISTINCT run_id, rank FROM cpu_op_names
    WHERE (run_id, rank) IN (SELECT run_id, rank FROM live)
),
-- nn.Module frames on the threads that made live allocations
frames AS MATERIALIZED (
    SELECT f.run_id, f.rank, f.tid, f.start_ns, f.end_ns, substr(f.name, 12) AS name
    FROM python_frames f SEMI JOIN (SELECT DISTINCT run_id, rank, tid FROM live) USING (run_id, rank, tid)
    WHERE f.name LIKE 'nn.Module: %'
),
-- the innermost frame holding the allocation: the latest-starting one that started at or
-- before it, when it still runs (frames nest); else, rarely, the latest-starting one holding it
latest AS (
    SELECT l.*, f.name AS latest_module, f.end_ns >= l.start_ns AS holds
    FROM live l
    ASOF LEFT JOIN frames f
      ON f.run_id = l.run_id AND f.rank = l.rank AND f.tid = l.tid AND f.start_ns <= l.start_ns
),
made_by AS (
    SELECT l.run_id, l.rank, l.device_type, l.device_id, l.iteration, l.peak, l.bytes,
           CASE WHEN r.rank IS NOT NULL THEN o.name ELSE n.name END AS op,
           CASE WHEN l.holds THEN l.latest_module
                WHEN l.holds IS NOT NULL THEN
                    (SELECT arg_max(f.name, f.start_ns) FROM frames f
                     WHERE f.run_id = l.run_id AND f.rank = l.rank AND f.tid = l.tid
                       AND f.start_ns <= l.start_ns AND f.end_ns >= l.start_ns) END AS module
    FROM latest l
    LEFT JOIN op_ranks r ON r.run_id = l.run_id AND r.rank = l.rank
    LEFT JOIN cpu_op_names o ON o.op_id = l.cpu_op_id
    LEFT JOIN nvtx_ranges n ON n.file_id = l.made_file_id AND n.range_id = l.nvtx_range_id
     AND n.kind = 'push_pop'
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
