-- metric: what_if
-- version: 3
-- summary: Upper bound on each step's gain if one thing on its critical path changed: stragglers on time, communication hidden or faster, no launch overhead, no data wait, a kernel faster
-- unit: ns
-- grain: run_id, end_rank, instance, scenario
-- columns: run_id VARCHAR, end_rank INTEGER, instance BIGINT, step_name VARCHAR, scenario VARCHAR, step_ns BIGINT, path_ns BIGINT, gain_ns BIGINT, new_step_ns BIGINT, gain_share DOUBLE
-- params: run (text, optional), rank (int, optional), ranks (text, default each), annotation (text, optional), instance (int, optional), start_ns (int, optional), end_ns (int, optional), data_pattern (text, optional), scenario (text, optional), factor (float, default 2), kernel (text, optional)
-- uses: collective_waits, dependency_graph
-- complexity: as critical_path (its walk), then O(n) in the path's edges and a hash join to collective_waits
-- see: the issue's what-if scenarios; HTA has none
-- show: scenario, gain_ns, new_step_ns, gain_share, step_ns, path_ns, end_rank, run_id
--
-- v3: clock_offsets counts a grouped kernel (several collectives in one NCCL group) as one observation: nsys runs with grouped collectives get Kineto's offsets (issue 34).
-- AN UPPER BOUND on the gain: the time the scenario takes off the step's critical path
-- (critical_path, same parameters); new_step_ns = the step (its range on the rank where the
-- path ends) less that gain. Another chain of the graph, shorter today, may
-- become critical and give back part of it; the step is never faster than new_step_ns says.
-- scenario (none: every one, a row each):
--   straggler_on_time  every collective the path waited at is released at its ranks' median
--                      arrival instead of the last: gain = last - median aligned arrival, summed
--                      over the path's rendezvous edges (ranks = all)
--   comm_hidden        communication on the path costs 0 (all of it could overlap compute)
--   comm_x             collective transfers `factor` times faster: comm time x (1 - 1/factor)
--   launch_free        launch and kernel-kernel overheads 0
--   no_data_wait       data loading 0
--   kernel_x           GPU ops whose name contains `kernel` `factor` times faster
WITH path AS (
    SELECT * FROM critical_path_edges(getvariable('run'), getvariable('rank'),
                                      getvariable('ranks'), getvariable('annotation'),
                                      getvariable('instance'), getvariable('start_ns'),
                                      getvariable('end_ns'), getvariable('data_pattern'))
),
steps AS (
    SELECT run_id, grp, any_value(instance) AS instance, any_value(step_name) AS step_name,
           arg_max(rank, seq) AS end_rank, CAST(sum(weight_ns) AS BIGINT) AS path_ns,
           CAST(sum(weight_ns) FILTER (WHERE bound_by = 'gpu_communication_bound') AS BIGINT) AS comm_ns,
           CAST(sum(weight_ns) FILTER (WHERE bound_by IN ('gpu_kernel_launch_overhead',
                                                          'gpu_kernel_kernel_overhead')) AS BIGINT)
               AS overhead_ns,
           CAST(sum(weight_ns) FILTER (WHERE bound_by = 'data_loading') AS BIGINT) AS data_ns,
           CAST(sum(weight_ns) FILTER (WHERE bound_by IN ('gpu_compute_bound', 'gpu_communication_bound')
                                         AND contains(name, getvariable('kernel'))) AS BIGINT)
               AS kernel_ns
    FROM path GROUP BY run_id, grp
),
-- each collective the path crossed at: its last and median aligned arrival
waits AS (
    SELECT p.run_id, p.grp, CAST(sum(c.last_ns - c.median_ns) AS BIGINT) AS late_ns
    FROM path p
    JOIN (SELECT run_id, op_key, max(aligned_start_ns) AS last_ns,
                 CAST(quantile_disc(aligned_start_ns, 0.5) AS BIGINT) AS median_ns
          FROM collective_waits GROUP BY run_id, op_key) c
      ON c.run_id = p.run_id AND c.op_key = p.name
    WHERE p.edge_type = 'rendezvous'
    GROUP BY p.run_id, p.grp
),
-- each step's length on the rank where its path ends
spans AS (
    SELECT run_id, rank, instance, win_end_ns - win_start_ns AS step_ns
    FROM critical_path_steps(getvariable('run'), NULL, getvariable('annotation'),
                             getvariable('instance'), getvariable('start_ns'), getvariable('end_ns'))
),
gains AS (
    SELECT s.*, sp.step_ns, g.scenario, least(g.gain_ns, s.path_ns) AS gain_ns
    FROM steps s
    JOIN spans sp ON sp.run_id = s.run_id AND sp.rank = s.end_rank AND sp.instance = s.instance
    LEFT JOIN waits w ON w.run_id = s.run_id AND w.grp = s.grp
    CROSS JOIN LATERAL (VALUES
        ('straggler_on_time', coalesce(w.late_ns, 0)),
        ('comm_hidden', coalesce(s.comm_ns, 0)),
        ('comm_x', CAST(round(coalesce(s.comm_ns, 0) * (1 - 1 / getvariable('factor'))) AS BIGINT)),
        ('launch_free', coalesce(s.overhead_ns, 0)),
        ('no_data_wait', coalesce(s.data_ns, 0)),
        ('kernel_x', CAST(round(coalesce(s.kernel_ns, 0) * (1 - 1 / getvariable('factor'))) AS BIGINT))
    ) g(scenario, gain_ns)
    WHERE CASE WHEN getvariable('scenario') IS NULL
                    OR getvariable('scenario') IN ('straggler_on_time', 'comm_hidden', 'comm_x',
                                                   'launch_free', 'no_data_wait', 'kernel_x')
               THEN getvariable('scenario') IS NULL OR g.scenario = getvariable('scenario')
               ELSE error('scenario must be straggler_on_time, comm_hidden, comm_x, launch_free, '
                          || 'no_data_wait or kernel_x, not ' || getvariable('scenario')) END
      AND (g.scenario <> 'kernel_x' OR getvariable('kernel') IS NOT NULL)
      AND CASE WHEN getvariable('factor') > 0 THEN true
               ELSE error('factor must be > 0, not ' || getvariable('factor')) END
)
SELECT run_id, end_rank, instance, step_name, scenario,
       step_ns,                         -- the step today, on the rank where its path ends
       path_ns,                         -- its critical path
       gain_ns,                         -- at most this much faster
       step_ns - gain_ns AS new_step_ns,  -- at least this long
       gain_ns / nullif(step_ns, 0) AS gain_share
FROM gains
ORDER BY run_id, end_rank, instance, scenario;
