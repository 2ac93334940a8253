-- metric: throughput
-- version: 2
-- summary: Training throughput from run metadata: tokens/s = global batch x sequence length / median iteration time
-- unit: tokens/s
-- grain: run_id
-- params: run (text, optional), step_pattern (text, optional), include_first_last (bool, default false)
-- see: CCL-Bench throughput_tokens_sec
-- uses: clock_offsets, runs, scope, training_steps
--
-- One row per run. The iteration time is the median over iterations of the across-rank
-- iteration time (last aligned end - first aligned start over the ranks), as iteration_time
-- computes it: iterations from the iterations view or the NVTX ranges matching step_pattern,
-- first and last iteration of each rank left out unless include_first_last.
--   samples_per_s  runs.batch_size / median iteration time (global batch)
--   tokens_per_s   runs.batch_size x runs.seq_len / median iteration time
-- Values that cannot be known are NULL and `reason` says why (no workload card batch size or
-- sequence length, no complete iteration); reason is NULL when tokens_per_s is known.
WITH steps AS (
    SELECT * FROM training_steps(getvariable('step_pattern'))
),
across AS (
    SELECT s.run_id, s.iteration,
           max(s.end_ns - coalesce(c.offset_ns, 0)) - min(s.start_ns - coalesce(c.offset_ns, 0)) AS dur_ns
    FROM steps s
    LEFT JOIN clock_offsets c ON c.run_id = s.run_id AND c.rank = s.rank
    WHERE s.end_ns IS NOT NULL
      AND (coalesce(CAST(getvariable('include_first_last') AS BOOLEAN), false)
           OR NOT (s.is_first OR s.is_last))
    GROUP BY s.run_id, s.iteration
),
per_run AS (
    SELECT run_id, count(*) AS iterations, median(dur_ns) AS median_iteration_ns
    FROM across GROUP BY run_id
)
SELECT
    r.run_id,
    r.batch_size,                              -- global batch size (workload card)
    r.seq_len,                                 -- sequence length (workload card)
    coalesce(p.iterations, 0) AS iterations,   -- iterations behind the median
    p.median_iteration_ns,                     -- ns, across ranks
    r.batch_size * 1e9 / p.median_iteration_ns AS samples_per_s,
    r.batch_size * r.seq_len * 1e9 / p.median_iteration_ns AS tokens_per_s,
    CASE WHEN p.median_iteration_ns IS NULL
             THEN 'no complete iteration: the iterations view (or step_pattern) has none past the first and last'
         WHEN p.median_iteration_ns <= 0 THEN 'iteration time is zero'
         WHEN r.batch_size IS NULL AND r.seq_len IS NULL
             THEN 'runs.batch_size and runs.seq_len are NULL: no workload card with workload.data.batch_size and seq_len'
         WHEN r.batch_size IS NULL
             THEN 'runs.batch_size is NULL: no workload card with workload.data.batch_size'
         WHEN r.seq_len IS NULL
             THEN 'runs.seq_len is NULL: no workload card with workload.data.seq_len'
    END AS reason
FROM runs r
LEFT JOIN per_run p ON p.run_id = r.run_id
WHERE run_match(r.run_id, getvariable('run'))
ORDER BY r.run_id;
