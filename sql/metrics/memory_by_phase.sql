-- metric: memory_by_phase
-- version: 4
-- summary: GPU memory during each iteration's forward, backward and optimizer phases, from allocator events and sampled series side by side: min, mean, max
-- unit: bytes (source allocator); as sampled (source samples: the measure's name says it, e.g. memory.free [MiB])
-- grain: run_id, rank, iteration, phase, start_ns, source, measure
-- columns: run_id VARCHAR, rank INTEGER, iteration INTEGER, phase VARCHAR, start_ns BIGINT, end_ns BIGINT, dur_ns BIGINT, source VARCHAR, measure VARCHAR, samples BIGINT, min_value DOUBLE, mean_value DOUBLE, max_value DOUBLE, value_at_start DOUBLE
-- params: run (text, optional), rank (int, optional), measure (text, optional), phases (text, optional)
-- see: memory_events; nvidia-smi --query-gpu=timestamp,index,memory.free --format=csv -lms 100 (tracewh ingest --series)
-- uses: devices, memory_events, phase_ranges, ranks, samples, scope, training_steps
-- complexity: O(n) scan of NVTX names; phase ranges joined to the iterations of their rank by range (O(p * i): few iterations per rank), memory events to spans by ASOF join
-- show: phase, measure, max_value, mean_value, iteration, rank, run_id
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
-- start, `.` or `:`, as in nvtx_phases), placed in the step whose host range holds their
-- start (training_steps: ProfilerStep#N, or on a rank without such ranges each forward phase
-- starting a step, as DeepSpeed annotates DeepSpeedEngine.forward/backward/_take_model_step). Per (rank, iteration, phase instance, source, measure):
--   samples          allocator events or samples while the phase ran (start <= ts <= end;
--                    allocator events: those of the phase's iteration)
--   min/mean/max     of those values (NULL when none: sampling slower than the phase); the
--                    allocator's mean is over its events, not weighted by time
--   value_at_start   the last value at or before the phase began, for such short phases
WITH steps AS MATERIALIZED (
    SELECT run_id, rank, iteration, start_ns, end_ns FROM training_steps(NULL)
),
phases AS (
    SELECT n.run_id, n.rank, n.name AS phase, n.start_ns, n.end_ns, i.iteration
    FROM phase_ranges(getvariable('phases')) n
    JOIN steps i ON i.run_id = n.run_id AND i.rank = n.rank
     AND n.start_ns >= i.start_ns AND n.start_ns < coalesce(i.end_ns, 9223372036854775807)
    WHERE scope_match(n.run_id, n.rank, getvariable('run'), getvariable('rank'))
),
sampled AS (
    -- each rank's samples: its GPU, on its host when both sides say which
    SELECT k.run_id, k.rank, s.metric AS measure, s.ts_ns, s.value
    FROM samples s
    JOIN ranks k ON k.run_id = s.run_id AND k.device_id = s.device_id
     AND (s.host IS NULL OR k.host IS NULL OR s.host = k.host)
    WHERE s.metric ILIKE coalesce(CAST(getvariable('measure') AS VARCHAR), '%free%')
      AND s.value IS NOT NULL
),
device_memory AS (
    SELECT run_id, rank, device_id, max(total_memory) AS total_memory
    FROM devices WHERE rank IS NOT NULL GROUP BY ALL
),
allocator AS (
    -- the rank's GPU: the one its kernels ran on (ranks.device_id), when it names one; events
    -- outside every step are told apart by whether they precede the rank's first step. An event
    -- the ingest placed in no step (a rank whose steps are its phases) takes the step holding it.
    SELECT m.run_id, m.rank, m.iteration, m.start_ns, m.event_no, m.allocated, m.reserved,
           d.total_memory - coalesce(m.reserved, m.allocated) AS free,
           coalesce(m.iteration, CASE WHEN m.start_ns < f.first_ns THEN -2147483648 END) AS segment
    FROM (SELECT m.* REPLACE (coalesce(m.iteration, CASE WHEN m.start_ns < st.end_ns THEN st.iteration END)
                              AS iteration)
          FROM memory_events m
          ASOF LEFT JOIN steps st
            ON st.run_id = m.run_id AND st.rank = m.rank AND m.start_ns >= st.start_ns) m
    LEFT JOIN ranks k ON k.run_id = m.run_id AND k.rank = m.rank
    LEFT JOIN device_memory d ON d.run_id = m.run_id AND d.rank = m.rank
     AND d.device_id = m.device_id
    LEFT JOIN (SELECT run_id, rank, min(start_ns) AS first_ns FROM steps GROUP BY ALL) f
      ON f.run_id = m.run_id AND f.rank = m.rank
    WHERE m.device_type = 'GPU' AND (k.device_id IS NULL OR k.device_id = m.device_id)
      AND scope_match(m.run_id, m.rank, getvariable('run'), getvariable('rank'))
),
-- Phases include both ends, and the value at a phase's start is the last event at or before it.
-- Joining 10 M events to every phase they precede or fall in made 20 M rows to aggregate; instead
-- the instants where a phase of the iteration starts or ends cut its events into segments (the
-- events at a cut, and those between two cuts), each summed up once, and a phase is made of the
-- segments it covers. The time before the first cut is a segment too.
cuts AS (
    SELECT DISTINCT run_id, rank, iteration, unnest([start_ns, end_ns]) AS ts FROM phases
    UNION
    SELECT DISTINCT run_id, rank, iteration, -9223372036854775808 FROM phases
),
spans AS (
    SELECT run_id, rank, iteration, ts AS lo,
           coalesce(lead(ts) OVER (PARTITION BY run_id, rank, iteration ORDER BY ts),
                    9223372036854775807) AS hi,
           row_number() OVER (ORDER BY run_id, rank, iteration, ts) AS span_no
    FROM cuts
),
segments AS (
    -- at_cut: the events at lo; else those after lo and before hi. last_*: the value of the last
    -- event (by event_no, the time order of a file's events on a device) that has one. Grouped
    -- by the span's number (a hash of one integer, not of five columns: 0.3 s less on 10 M).
    SELECT s.span_no, a.start_ns = s.lo AS at_cut,
           count(*) AS events, max(a.event_no) AS last_no,
           min(a.allocated) AS min_allocated, max(a.allocated) AS max_allocated,
           sum(a.allocated) AS sum_allocated, arg_max(a.allocated, a.event_no) AS last_allocated,
           count(a.reserved) AS reserved_events, min(a.reserved) AS min_reserved,
           max(a.reserved) AS max_reserved, sum(a.reserved) AS sum_reserved,
           arg_max(a.reserved, a.event_no) AS last_reserved,
           max(a.event_no) FILTER (a.reserved IS NOT NULL) AS last_reserved_no,
           count(a.free) AS free_events, min(a.free) AS min_free, max(a.free) AS max_free,
           sum(a.free) AS sum_free, arg_max(a.free, a.event_no) AS last_free,
           max(a.event_no) FILTER (a.free IS NOT NULL) AS last_free_no
    FROM spans s
    JOIN allocator a ON a.run_id = s.run_id AND a.rank = s.rank AND a.iteration = s.iteration
     AND a.start_ns >= s.lo AND a.start_ns < s.hi
    GROUP BY ALL
),
phase_segments AS (
    SELECT p.run_id, p.rank, p.iteration, p.phase, p.start_ns, p.end_ns, g.*,
           g.lo >= p.start_ns AND (g.at_cut OR g.hi <= p.end_ns) AS during,
           CASE WHEN g.at_cut THEN g.lo <= p.start_ns ELSE g.hi <= p.start_ns END AS before
    FROM phases p
    LEFT JOIN (SELECT s.lo, s.hi, s.run_id AS g_run_id, s.rank AS g_rank,
                      s.iteration AS g_iteration, g.* EXCLUDE (span_no)
               FROM segments g JOIN spans s USING (span_no)) g
      ON g.g_run_id = p.run_id AND g.g_rank = p.rank AND g.g_iteration = p.iteration
     AND g.lo <= p.end_ns
),
allocator_during AS (
    SELECT run_id, rank, iteration, phase, start_ns, end_ns,
           CAST(coalesce(sum(events) FILTER (during), 0) AS BIGINT) AS samples,
           min(min_allocated) FILTER (during) AS min_allocated,
           sum(sum_allocated) FILTER (during) / sum(events) FILTER (during) AS mean_allocated,
           max(max_allocated) FILTER (during) AS max_allocated,
           min(min_reserved) FILTER (during) AS min_reserved,
           sum(sum_reserved) FILTER (during) / sum(reserved_events) FILTER (during) AS mean_reserved,
           max(max_reserved) FILTER (during) AS max_reserved,
           min(min_free) FILTER (during) AS min_free,
           sum(sum_free) FILTER (during) / sum(free_events) FILTER (during) AS mean_free,
           max(max_free) FILTER (during) AS max_free,
           arg_max(last_allocated, last_no) FILTER (before) AS allocated_at_start,
           arg_max(last_reserved, last_reserved_no) FILTER (before) AS reserved_at_start,
           arg_max(last_free, last_free_no) FILTER (before) AS free_at_start,
           CAST(coalesce(sum(events) FILTER (before), 0) AS BIGINT) AS before_start
    FROM phase_segments
    GROUP BY run_id, rank, iteration, phase, start_ns, end_ns
),
-- the last event of each step (and of the time before the first step), for phases whose step
-- has no event before them
allocator_tails AS (
    SELECT run_id, rank, max(start_ns) AS last_ns, arg_max(allocated, event_no) AS allocated,
           arg_max(reserved, event_no) AS reserved, arg_max(free, event_no) AS free
    FROM allocator WHERE segment IS NOT NULL
    GROUP BY run_id, rank, segment
),
tail_before AS (
    SELECT d.run_id, d.rank, d.start_ns, arg_max(t.allocated, t.last_ns) AS allocated,
           arg_max(t.reserved, t.last_ns) AS reserved, arg_max(t.free, t.last_ns) AS free
    FROM (SELECT DISTINCT run_id, rank, start_ns FROM allocator_during) d
    JOIN allocator_tails t ON t.run_id = d.run_id AND t.rank = d.rank AND t.last_ns <= d.start_ns
    GROUP BY d.run_id, d.rank, d.start_ns
),
allocator_phases AS (
    SELECT d.*,
           CASE WHEN d.before_start > 0 THEN d.allocated_at_start ELSE t.allocated END
               AS allocated_before,
           CASE WHEN d.before_start > 0 THEN d.reserved_at_start ELSE t.reserved END
               AS reserved_before,
           CASE WHEN d.before_start > 0 THEN d.free_at_start ELSE t.free END AS free_before
    FROM allocator_during d
    LEFT JOIN tail_before t ON t.run_id = d.run_id AND t.rank = d.rank
     AND t.start_ns = d.start_ns
),
allocator_rows AS (
    SELECT run_id, rank, iteration, phase, start_ns, end_ns, 'allocator' AS source,
           x.measure, samples,
           CAST(CASE x.measure WHEN 'allocated [B]' THEN min_allocated
                WHEN 'reserved [B]' THEN min_reserved ELSE min_free END AS DOUBLE) AS min_value,
           CAST(CASE x.measure WHEN 'allocated [B]' THEN mean_allocated
                WHEN 'reserved [B]' THEN mean_reserved ELSE mean_free END AS DOUBLE) AS mean_value,
           CAST(CASE x.measure WHEN 'allocated [B]' THEN max_allocated
                WHEN 'reserved [B]' THEN max_reserved ELSE max_free END AS DOUBLE) AS max_value,
           CAST(CASE x.measure WHEN 'allocated [B]' THEN allocated_before
                WHEN 'reserved [B]' THEN reserved_before ELSE free_before END AS DOUBLE)
               AS value_at_start
    FROM allocator_phases
    CROSS JOIN (SELECT measure FROM (VALUES ('allocated [B]'), ('reserved [B]'), ('free [B]')) t(measure)
                WHERE measure ILIKE coalesce(CAST(getvariable('measure') AS VARCHAR), '%free%')) x
),
sampled_measures AS (
    SELECT DISTINCT run_id, rank, measure FROM sampled
),
sampled_during AS (
    SELECT p.run_id, p.rank, p.iteration, p.phase, p.start_ns, p.end_ns, m.measure,
           count(s.value) AS samples, min(s.value) AS min_value, avg(s.value) AS mean_value,
           max(s.value) AS max_value
    FROM phases p
    JOIN sampled_measures m ON m.run_id = p.run_id AND m.rank = p.rank
    LEFT JOIN sampled s ON s.run_id = p.run_id AND s.rank = p.rank AND s.measure = m.measure
     AND s.ts_ns >= p.start_ns AND s.ts_ns <= p.end_ns
    GROUP BY ALL
),
answers AS (
    SELECT d.run_id, d.rank, d.iteration, d.phase, d.start_ns, d.end_ns, 'samples' AS source,
           d.measure, d.samples, d.min_value, d.mean_value, d.max_value, b.value AS value_at_start
    FROM sampled_during d
    ASOF LEFT JOIN sampled b
        ON b.run_id = d.run_id AND b.rank = d.rank AND b.measure = d.measure
       AND d.start_ns >= b.ts_ns
    UNION ALL
    -- a measure the source does not give (reserved from nsys, free without the device's size)
    SELECT * FROM allocator_rows WHERE coalesce(max_value, value_at_start) IS NOT NULL
)
SELECT run_id, rank, iteration, phase, start_ns, end_ns, end_ns - start_ns AS dur_ns, source,
       measure, samples, min_value, mean_value, max_value, value_at_start
FROM answers
-- the output's own columns (Spark 4's optimizer rejects the plan ordered by the CTE's)
ORDER BY run_id, rank, iteration, start_ns, phase, source, measure;
