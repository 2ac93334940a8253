-- metric: critical_path
-- version: 3
-- summary: The chain of CPU work, launches, GPU ops, syncs and collectives that decided when each step ended, across ranks, with HTA's bound_by classes
-- unit: ns
-- grain: run_id, end_rank, instance, seq, bound_by
-- columns: run_id VARCHAR, end_rank INTEGER, instance BIGINT, step_name VARCHAR, seq BIGINT, rank INTEGER, lane VARCHAR, edge_type VARCHAR, bound_by VARCHAR, name VARCHAR, start_ns BIGINT, end_ns BIGINT, dur_ns BIGINT, share DOUBLE, edges BIGINT, path_ns BIGINT, span_ns BIGINT, ranks_crossed INTEGER[], top_class VARCHAR, top_ops VARCHAR[]
-- params: run (text, optional), rank (int, optional), ranks (text, default each), annotation (text, optional), instance (int, optional), start_ns (int, optional), end_ns (int, optional), per (text, default edge), data_pattern (text, optional), hta (bool, default false)
-- uses: dependency_graph
-- complexity: O(n log n) in the CPU ops, API calls and GPU ops of the steps asked for (sorts per thread and stream, ASOF joins for launches and syncs, pointer doubling: log2(path length) hash-join rounds)
-- see: HTA critical_path_analysis + get_critical_path_breakdown
-- show: seq, name, dur_ns, bound_by, rank, share, edge_type, instance, path_ns, run_id
--
-- v3: clock_offsets counts a grouped kernel (several collectives in one NCCL group) as one observation: nsys runs with grouped collectives get Kineto's offsets (issue 34).
-- The dependency graph and the walk are sql/lib/dependency_graph.sql (its header gives every
-- edge and where it follows HTA 0.5.0). Steps: the rank's iterations (ProfilerStep#N), or with
-- `annotation` the NVTX ranges / user annotations whose name contains it; `instance` = 0-based
-- instance (HTA's instance_id); none: every instance. A UTC window (start_ns, end_ns) without
-- an annotation is one step per rank (a capture without step ranges). ranks = each: a path per rank and step,
-- on that rank's graph (HTA's analysis); ranks = all: a path per step across the ranks,
-- walked back from the last rank to finish (or from `rank`: what that rank's step waited on),
-- crossing to another rank at a collective whose
-- last rank arrived after this rank, or at a send/recv pair whose other side started later
-- (`waiting for rank N`).
-- per = edge (default): the path, one row per edge, first to last (seq): the rank and lane
--   (thread or stream) it lies on, edge_type (operator, dependency, launch, kernel_kernel,
--   sync, rendezvous, send_recv), bound_by, the op it is attributed to (HTA's rule), start/end, dur_ns.
-- per = class: one row per step and bound_by: dur_ns, its share of the path, the edges.
-- per = step: one row per step: step and path length, the ranks the path crossed, the class
--   with the most time and the three ops with the most time on the path.
-- Differences from HTA 0.5.0, each by design (hta = true gives HTA's classes):
--   - CPU time under a data-loading op (data_pattern, as host_breakdown) is `data_loading`,
--     the weight-0 end of a blocking sync call `sync wait` (0 ns); HTA: cpu_bound.
--   - the path ends at the step's last node; HTA takes the longest path of the whole graph,
--     which on its graph ends there too when the step ends on its last GPU op or call.
--   - times in ns (HTA: the file's µs).
WITH path AS (
    SELECT * FROM critical_path_edges(getvariable('run'), getvariable('rank'),
                                      getvariable('ranks'), getvariable('annotation'),
                                      getvariable('instance'), getvariable('start_ns'),
                                      getvariable('end_ns'), getvariable('data_pattern'))
),
checked AS (
    SELECT p.*,
           CASE WHEN coalesce(getvariable('hta'), false) AND bound_by IN ('data_loading', 'sync wait')
                THEN 'cpu_bound' ELSE bound_by END AS class,
           -- one window, unordered: the rank of the last edge, the path's length
           arg_max(rank, seq) OVER (PARTITION BY grp) AS end_rank,
           CAST(sum(weight_ns) OVER (PARTITION BY grp) AS BIGINT) AS path_ns
    FROM path p
),
edges AS (
    SELECT run_id, end_rank, instance, step_name, seq, rank, lane, edge_type, class AS bound_by,
           name, src_ts AS start_ns, dst_ts AS end_ns, weight_ns AS dur_ns, path_ns
    FROM checked
),
classes AS (
    SELECT run_id, end_rank, instance, any_value(step_name) AS step_name, bound_by,
           CAST(sum(dur_ns) AS BIGINT) AS dur_ns, any_value(path_ns) AS path_ns, count(*) AS edges,
           list(DISTINCT rank ORDER BY rank) AS ranks
    FROM edges GROUP BY run_id, end_rank, instance, bound_by
),
step_ops AS (
    SELECT run_id, end_rank, instance, name, CAST(sum(dur_ns) AS BIGINT) AS dur_ns
    FROM edges WHERE name IS NOT NULL GROUP BY ALL
),
steps AS (
    SELECT e.run_id, e.end_rank, e.instance, any_value(e.step_name) AS step_name,
           max(e.end_ns) - min(e.start_ns) AS span_ns, any_value(e.path_ns) AS path_ns,
           list(DISTINCT e.rank ORDER BY e.rank) AS ranks_crossed,
           (SELECT arg_max(c.bound_by, c.dur_ns) FROM classes c
            WHERE c.run_id = e.run_id AND c.end_rank = e.end_rank AND c.instance = e.instance) AS top_class,
           (SELECT list(o.name ORDER BY o.dur_ns DESC, o.name)[1:3] FROM step_ops o
            WHERE o.run_id = e.run_id AND o.end_rank = e.end_rank AND o.instance = e.instance) AS top_ops
    FROM edges e GROUP BY e.run_id, e.end_rank, e.instance
)
SELECT run_id, end_rank, instance, step_name,
       seq, rank, lane, edge_type, bound_by, name, start_ns, end_ns, dur_ns,
       NULL::DOUBLE AS share, NULL::BIGINT AS edges, NULL::BIGINT AS path_ns, NULL::BIGINT AS span_ns,
       NULL::INTEGER[] AS ranks_crossed, NULL::VARCHAR AS top_class, NULL::VARCHAR[] AS top_ops
FROM edges WHERE critical_path_per(getvariable('per')) = 'edge'
UNION ALL
SELECT run_id, end_rank, instance, step_name, NULL, NULL, NULL, NULL,
       bound_by, NULL, NULL, NULL, dur_ns, dur_ns / nullif(path_ns, 0), edges, path_ns, NULL,
       ranks, NULL, NULL
FROM classes WHERE critical_path_per(getvariable('per')) = 'class'
UNION ALL
SELECT run_id, end_rank, instance, step_name, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, path_ns, path_ns / nullif(span_ns, 0), NULL, path_ns, span_ns,
       ranks_crossed, top_class, top_ops
FROM steps WHERE critical_path_per(getvariable('per')) = 'step'
ORDER BY run_id, end_rank, instance, seq, bound_by;
