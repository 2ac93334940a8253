-- metric: memory_by_phase
-- version: 3
-- summary: GPU memory during each iteration's forward, backward and optimizer phases, from allocator events and sampled series side by side: min, mean, max
-- unit: bytes (source allocator); as sampled (source samples: the measure's name says it, e.g. memory.free [MiB])
-- grain: run_id, rank, iteration, phase, start_ns, source, measure
-- params: run (text, optional), rank (int, optional), measure (text, optional), phases (text, optional)
-- see: memory_events; nvidia-smi --query-gpu=timestamp,index,memory.free --format=csv -lms 100 (tracewh ingest --series)
-- uses: devices, iterations, memory_events, nvtx_ranges, ranks, samples, scope
--
-- Two sources, each where the run has it, both side by side when it has both (column source):
--   allocator  the rank's GPU allocator events (memory_events: Kineto [memory], nsys CUDA memory
--              usage): measures 'allocated [B]' and 'reserved [B]' (the totals after each event;
--              reserved only where the source gives it) and 'free [B]', the device's memory
--              (devices.total_memory) minus what the allocator holds (reserved, else allocated)
--   samples    series sampled beside the job (tracewh ingest --series), joined to ranks by UTC
--              time: a rank's samples are those of its GPU (samples.device_id = ranks.device_id)
--              on its host (when both name one); measure = the sampled column's name
-- `measure` is an ILIKE pattern on the measure's name (default '%free%'). Phases are NVTX ranges
-- (or Kineto annotations) whose name matches `phases`, a regular expression (default: names
-- ending in forward, backward, optimizer, optimizer_step, _take_model_step or step after a
-- start, `.` or `:`, as in nvtx_phases), placed in the iteration whose host range holds their
-- start. Per (rank, iteration, phase instance, source, measure):
--   samples          allocator events or samples while the phase ran (start <= ts <= end;
--                    allocator events: those of the phase's iteration)
--   min/mean/max     of those values (NULL when none: sampling slower than the phase); the
--                    allocator's mean is over its events, not weighted by time
--   value_at_start   the last value at or before the phase began, for such short phases
WITH phases AS (
    SELECT n.run_id, n.rank, n.name AS phase, n.start_ns, n.end_ns, i.iteration
    FROM nvtx_ranges n
    JOIN iterations i ON i.run_id = n.run_id AND i.rank = n.rank
     AND n.start_ns >= i.start_ns AND n.start_ns < coalesce(i.end_ns, 9223372036854775807)
    WHERE n.kind IN ('push_pop', 'start_end', 'annotation') AND n.end_ns IS NOT NULL
      AND regexp_matches(coalesce(n.name, ''),
              coalesce(CAST(getvariable('phases') AS VARCHAR),
                       '(^|[.:]|## )(forward|backward|optimizer|optimizer_step|_take_model_step|step)( ##)?$'))
      AND scope_match(n.run_id, n.rank, getvariable('run'), getvariable('rank'))
),
pattern AS (
    SELECT coalesce(CAST(getvariable('measure') AS VARCHAR), '%free%') AS measure
),
sampled AS (
    -- each rank's samples: its GPU, on its host when both sides say which
    SELECT k.run_id, k.rank, 'samples' AS source, s.metric AS measure, s.ts_ns,
           CAST(s.value AS DOUBLE) AS value, CAST(NULL AS INTEGER) AS iteration
    FROM samples s
    JOIN ranks k ON k.run_id = s.run_id AND k.device_id = s.device_id
     AND (s.host IS NULL OR k.host IS NULL OR s.host = k.host)
    WHERE s.metric ILIKE (SELECT measure FROM pattern) AND s.value IS NOT NULL
),
device_memory AS (
    SELECT run_id, rank, device_id, max(total_memory) AS total_memory
    FROM devices WHERE rank IS NOT NULL GROUP BY ALL
),
allocator_measures AS (
    SELECT name FROM (VALUES ('allocated [B]'), ('reserved [B]'), ('free [B]')) t(name)
    WHERE name ILIKE (SELECT measure FROM pattern)
),
allocator AS (
    -- the rank's GPU: the one its kernels ran on (ranks.device_id), when it names one
    SELECT m.run_id, m.rank, 'allocator' AS source, x.name AS measure, m.start_ns AS ts_ns,
           CAST(CASE x.name WHEN 'allocated [B]' THEN m.allocated
                            WHEN 'reserved [B]' THEN m.reserved
                            ELSE d.total_memory - coalesce(m.reserved, m.allocated) END AS DOUBLE)
               AS value,
           m.iteration
    FROM memory_events m
    JOIN ranks k ON k.run_id = m.run_id AND k.rank = m.rank
     AND (k.device_id IS NULL OR k.device_id = m.device_id)
    LEFT JOIN device_memory d ON d.run_id = m.run_id AND d.rank = m.rank
     AND d.device_id = m.device_id
    CROSS JOIN allocator_measures x
    WHERE m.device_type = 'GPU'
      AND scope_match(m.run_id, m.rank, getvariable('run'), getvariable('rank'))
),
allocator_values AS (
    SELECT * FROM allocator WHERE value IS NOT NULL
),
measures AS (
    SELECT DISTINCT run_id, rank, source, measure FROM sampled
    UNION
    SELECT DISTINCT run_id, rank, source, measure FROM allocator_values
),
during AS (
    SELECT p.run_id, p.rank, p.iteration, p.phase, p.start_ns, p.end_ns, m.source, m.measure,
           count(s.value) AS samples, min(s.value) AS min_value, avg(s.value) AS mean_value,
           max(s.value) AS max_value
    FROM phases p
    JOIN measures m ON m.run_id = p.run_id AND m.rank = p.rank AND m.source = 'samples'
    LEFT JOIN sampled s ON s.run_id = p.run_id AND s.rank = p.rank AND s.measure = m.measure
     AND s.ts_ns >= p.start_ns AND s.ts_ns <= p.end_ns
    GROUP BY ALL
    UNION ALL
    -- allocator events are many: matched within the phase's iteration first
    SELECT p.run_id, p.rank, p.iteration, p.phase, p.start_ns, p.end_ns, m.source, m.measure,
           count(a.value), min(a.value), avg(a.value), max(a.value)
    FROM phases p
    JOIN measures m ON m.run_id = p.run_id AND m.rank = p.rank AND m.source = 'allocator'
    LEFT JOIN allocator_values a ON a.run_id = p.run_id AND a.rank = p.rank
     AND a.iteration = p.iteration AND a.measure = m.measure
     AND a.ts_ns >= p.start_ns AND a.ts_ns <= p.end_ns
    GROUP BY ALL
),
series AS (
    SELECT run_id, rank, source, measure, ts_ns, value FROM sampled
    UNION ALL
    SELECT run_id, rank, source, measure, ts_ns, value FROM allocator_values
)
SELECT d.run_id, d.rank, d.iteration, d.phase, d.start_ns, d.end_ns,
       d.end_ns - d.start_ns AS dur_ns, d.source, d.measure, d.samples, d.min_value,
       d.mean_value, d.max_value, b.value AS value_at_start
FROM during d
ASOF LEFT JOIN series b
    ON b.run_id = d.run_id AND b.rank = d.rank AND b.source = d.source
   AND b.measure = d.measure AND d.start_ns >= b.ts_ns
ORDER BY d.run_id, d.rank, d.iteration, d.start_ns, d.phase, d.source, d.measure;
