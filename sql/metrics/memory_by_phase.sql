-- metric: memory_by_phase
-- version: 2
-- summary: A sampled measure (default free GPU memory) during each iteration's forward, backward and optimizer phases: min, mean, max
-- unit: as sampled (the measure's column name says it, e.g. memory.free [MiB])
-- grain: run_id, rank, iteration, phase, measure
-- params: run (text, optional), rank (int, optional), measure (text, optional), phases (text, optional)
-- see: nvidia-smi --query-gpu=timestamp,index,memory.free --format=csv -lms 100 (tracewh ingest --series)
-- uses: iterations, nvtx_ranges, phase_names, ranks, samples, scope
--
-- Samples (tracewh ingest --series) are joined to ranks by UTC time: a rank's samples are those
-- of its GPU (samples.device_id = ranks.device_id) on its host (when both name one). `measure`
-- is an ILIKE pattern on the sampled column's name (default '%free%'). Phases are NVTX ranges
-- (or Kineto annotations) whose name matches `phases`, a regular expression (default: names
-- ending in forward, backward, optimizer, optimizer_step, _take_model_step or step after a
-- start, `.` or `:`, as in nvtx_phases), placed in the iteration whose host range holds their
-- start. Per (rank, iteration, phase instance, measure):
--   samples          samples taken while the phase ran (start <= ts <= end)
--   min/mean/max     of those samples (NULL when none: sampling slower than the phase)
--   value_at_start   the last sample at or before the phase began, for such short phases
WITH phases AS (
    SELECT n.run_id, n.rank, n.name AS phase, n.start_ns, n.end_ns, i.iteration
    FROM nvtx_ranges n
    JOIN iterations i ON i.run_id = n.run_id AND i.rank = n.rank
     AND n.start_ns >= i.start_ns AND n.start_ns < coalesce(i.end_ns, 9223372036854775807)
    WHERE n.kind IN ('push_pop', 'start_end', 'annotation') AND n.end_ns IS NOT NULL
      AND regexp_matches(coalesce(n.name, ''),
              phase_pattern(getvariable('phases')))
      AND scope_match(n.run_id, n.rank, getvariable('run'), getvariable('rank'))
),
rank_samples AS (
    -- each rank's samples: its GPU, on its host when both sides say which
    SELECT k.run_id, k.rank, s.metric AS measure, s.ts_ns, s.value
    FROM samples s
    JOIN ranks k ON k.run_id = s.run_id AND k.device_id = s.device_id
     AND (s.host IS NULL OR k.host IS NULL OR s.host = k.host)
    WHERE s.metric ILIKE coalesce(CAST(getvariable('measure') AS VARCHAR), '%free%')
      AND s.value IS NOT NULL
),
measures AS (
    SELECT DISTINCT run_id, rank, measure FROM rank_samples
),
during AS (
    SELECT p.run_id, p.rank, p.iteration, p.phase, p.start_ns, p.end_ns, m.measure,
           count(s.value) AS samples, min(s.value) AS min_value, avg(s.value) AS mean_value,
           max(s.value) AS max_value
    FROM phases p
    JOIN measures m ON m.run_id = p.run_id AND m.rank = p.rank
    LEFT JOIN rank_samples s ON s.run_id = p.run_id AND s.rank = p.rank AND s.measure = m.measure
     AND s.ts_ns >= p.start_ns AND s.ts_ns <= p.end_ns
    GROUP BY ALL
)
SELECT d.run_id, d.rank, d.iteration, d.phase, d.start_ns, d.end_ns,
       d.end_ns - d.start_ns AS dur_ns, d.measure, d.samples, d.min_value, d.mean_value,
       d.max_value, b.value AS value_at_start
FROM during d
ASOF LEFT JOIN rank_samples b
    ON b.run_id = d.run_id AND b.rank = d.rank AND b.measure = d.measure AND d.start_ns >= b.ts_ns
ORDER BY d.run_id, d.rank, d.iteration, d.start_ns, d.phase, d.measure;
