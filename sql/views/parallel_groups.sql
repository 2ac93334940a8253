-- uses: cuda_api, intervals, nccl_ops
-- How a run is parallelised, read from its collectives: one row per run, process group and
-- collective, with where in the step the collective is launched, how often, how big, and the
-- pattern it matches. The parallelism metric shows it; runs takes tp/dp/pp/ep/zero_stage from
-- it when nothing better says (run_config, source 'inferred').
--
-- Phase of a collective: the phase range enclosing the CUDA call that launched it (on any
-- thread of its rank; autograd's evaluate_function ops only on their own thread): optimizer
-- (a range named like optimizer or _take_model_step, not zero_grad), else backward (named like
-- backward, or autograd::engine::evaluate_function), else forward (named like forward), else
-- other. Patterns, in this order (calls counted per rank and iteration):
--   pipeline parallel  Send/Recv/SendRecv (peers one stage apart)
--   expert parallel    AllToAll (MoE token dispatch/combine; also sharded embeddings, DLRM)
--   FSDP / ZeRO-3      AllGather in forward and ReduceScatter in backward, in one group
--   tensor parallel    2+ calls in forward and 2+ in backward: inside every layer
--   ZeRO-2             ReduceScatter of gradients in backward (and its group's AllGather of
--                      the updated parameters after the optimizer)
--   DDP / ZeRO-1       AllReduce in backward or the optimizer, none in forward (and the
--                      Broadcast of buffers in a group that reduces gradients so)
--   unclassified       anything else
--
-- parallel_groups_of: the rows of the runs want_runs (a VARCHAR list; NULL: every run), each
-- part computed for those runs only: a filter on the view's run_id stops at the launches' phases
-- (a run from a 40-run warehouse took 4x its time alone). run_config_of and tracewh export read
-- it.
CREATE OR REPLACE MACRO parallel_groups_of(want_runs) AS TABLE
WITH launched AS (
    SELECT n.run_id, n.rank, n.file_id, n.collective, n.full_bytes, n.group_size, n.pg_name,
           n.pg_desc, n.pg_ranks, n.peer, n.iteration, a.tid, a.start_ns AS launch_ns
    FROM nccl_ops n
    LEFT JOIN cuda_api a
        ON a.file_id = n.file_id AND a.pid = n.pid AND a.correlation_id = n.correlation_id
    WHERE want_runs IS NULL OR list_contains(CAST(want_runs AS VARCHAR[]), n.run_id)
),
launches AS (  -- a launch's phase depends on its rank, thread and time alone
    SELECT DISTINCT file_id, tid, launch_ns FROM launched WHERE launch_ns IS NOT NULL
),
marks AS (  -- of the ranks with launches (those asked for)
    -- any_thread: an NVTX mark covers every thread of its rank, an autograd op its own (every
    -- thread when it has none). A range's phase by its name is stored (launch_phase,
    -- sql/nvtx_range_facts.sql: optimizer, else backward, else forward; not zero_grad).
    SELECT file_id, true AS any_thread, 0 AS tid, start_ns, end_ns,
           CAST(launch_phase AS INTEGER) AS phase_order
    FROM store.nvtx_ranges
    WHERE launch_phase IS NOT NULL AND end_ns IS NOT NULL
      AND file_id IN (SELECT file_id FROM launches)
    UNION ALL
    SELECT file_id, tid IS NULL, coalesce(tid, 0), start_ns, end_ns, 2
    FROM store.cpu_ops  -- not the cpu_ops view, whose tree (depth, parent) would be computed
    WHERE name LIKE 'autograd::engine::evaluate_function:%'
      AND file_id IN (SELECT file_id FROM launches)
),
mark_groups AS (
    SELECT *, dense_rank() OVER (ORDER BY file_id, any_thread, tid, phase_order) AS grp
    FROM marks
),
covered AS (  -- per rank, thread (or any) and phase: the disjoint stretches its marks cover
    SELECT file_id, any_thread, tid, phase_order, start_ns, end_ns
    FROM intervals_union(mark_groups)
),
probes AS (  -- each launch asks each phase, on any thread and on its own
    SELECT l.file_id, l.tid AS launch_tid, l.launch_ns, p.phase_order, t.any_thread,
           CASE WHEN t.any_thread THEN 0 ELSE l.tid END AS tid
    FROM launches l
    CROSS JOIN (VALUES (1), (2), (3)) p(phase_order)
    CROSS JOIN (VALUES (true), (false)) t(any_thread)
    WHERE t.any_thread OR l.tid IS NOT NULL
),
inside AS (  -- the stretch starting last at or before the launch (ASOF) holds it, or none does
    SELECT p.file_id, p.launch_tid, p.launch_ns, min(p.phase_order) AS phase_order
    FROM probes p
    ASOF JOIN covered c
        ON c.file_id = p.file_id AND c.any_thread = p.any_thread AND c.tid = p.tid
       AND c.phase_order = p.phase_order AND p.launch_ns >= c.start_ns
    WHERE p.launch_ns < c.end_ns
    GROUP BY p.file_id, p.launch_tid, p.launch_ns
),
phased AS (  -- DISTINCT: launches alike in every column count once, as they always have
    SELECT DISTINCT l.*,
           CASE i.phase_order WHEN 1 THEN 'optimizer' WHEN 2 THEN 'backward'
                              WHEN 3 THEN 'forward' ELSE 'other' END AS phase
    FROM launched l
    LEFT JOIN inside i
           ON i.file_id = l.file_id AND i.launch_tid IS NOT DISTINCT FROM l.tid
          AND i.launch_ns = l.launch_ns
),
per_group AS (
    SELECT run_id,
           coalesce(pg_name, '') AS process_group,
           collective,
           any_value(pg_desc) AS pg_desc,
           coalesce(any_value(pg_ranks),
                    '[' || array_to_string(list_sort(list(DISTINCT rank)), ', ') || ']') AS ranks,
           coalesce(max(group_size), count(DISTINCT rank)) AS group_size,
           any_value(pg_ranks) IS NOT NULL OR max(group_size) IS NOT NULL AS group_known,
           count(DISTINCT rank) AS ranks_seen,
           list_sort(list(DISTINCT rank)) AS rank_list,
           count(DISTINCT iteration) > 0 AS has_iterations,
           greatest(count(DISTINCT iteration), 1) AS iterations,
           count(*) AS calls,
           count(*) FILTER (WHERE phase = 'forward') AS forward,
           count(*) FILTER (WHERE phase = 'backward') AS backward,
           count(*) FILTER (WHERE phase = 'optimizer') AS optimizer,
           median(full_bytes) AS median_bytes,
           max(abs(peer - rank)) AS peer_distance
    FROM phased
    GROUP BY ALL
),
rated AS (
    SELECT *,
           calls / (ranks_seen * iterations) AS calls_per_iteration,
           forward / (ranks_seen * iterations) AS forward_per_iteration,
           backward / (ranks_seen * iterations) AS backward_per_iteration,
           optimizer / (ranks_seen * iterations) AS optimizer_per_iteration
    FROM per_group
),
grouped AS (
    SELECT *,
           bool_or(collective = 'AllGather' AND forward > 0) OVER g AS gathers_in_forward,
           bool_or(collective = 'ReduceScatter' AND backward > 0) OVER g AS scatters_in_backward,
           bool_or(collective = 'AllReduce' AND forward = 0 AND backward > 0) OVER g AS reduces_gradients
    FROM rated
    WINDOW g AS (PARTITION BY run_id, process_group)
),
replicas AS (  -- the ranks that reduce gradients together in backward (DDP, ZeRO, FSDP)
    SELECT run_id, rank_list FROM grouped
    WHERE backward > 0 AND (collective = 'ReduceScatter' OR (collective = 'AllReduce' AND forward = 0))
),
judged AS (  -- a few rows per run: the join costs nothing
    SELECT g.*,
           g.collective IN ('Send', 'Recv', 'SendRecv') AND EXISTS (
               SELECT 1 FROM replicas r
               WHERE r.run_id = g.run_id AND len(list_intersect(r.rank_list, g.rank_list)) >= 2
           ) AS among_replicas
    FROM grouped g
)
SELECT
    run_id,
    process_group,            -- Process Group Name ('' when the trace has none)
    pg_desc,                  -- its description (default_pg, mesh_tp, ...)
    ranks,                    -- the group's ranks (those seen, when the trace does not say)
    group_size,
    collective,
    calls_per_iteration,      -- per rank and iteration
    forward_per_iteration,
    backward_per_iteration,
    optimizer_per_iteration,
    median_bytes,             -- nccl-tests size; NULL when the trace does not say
    CASE
        WHEN collective IN ('Send', 'Recv', 'SendRecv') AND NOT among_replicas THEN 'pipeline parallel'
        WHEN collective = 'AllToAll' THEN 'expert parallel'
        WHEN collective IN ('AllGather', 'ReduceScatter') AND gathers_in_forward AND scatters_in_backward
             AND NOT (collective = 'ReduceScatter' AND forward > 0) THEN 'FSDP / ZeRO-3'
        WHEN forward_per_iteration >= 2 AND backward_per_iteration >= 2 THEN 'tensor parallel'
        WHEN collective = 'ReduceScatter' AND backward > 0 THEN 'ZeRO-2'
        WHEN collective = 'AllGather' AND scatters_in_backward AND forward = 0 THEN 'ZeRO-2'
        WHEN collective = 'AllReduce' AND forward = 0 AND backward + optimizer > 0 THEN 'DDP / ZeRO-1'
        WHEN collective = 'Broadcast' AND reduces_gradients THEN 'DDP / ZeRO-1'
        ELSE 'unclassified'
    END AS pattern,
    collective || ' ' || printf('%.4g', calls_per_iteration)
        || CASE WHEN has_iterations THEN 'x per iteration' ELSE 'x per rank (no iterations)' END
        || ' (forward '
        || printf('%.4g', forward_per_iteration) || ', backward '
        || printf('%.4g', backward_per_iteration) || ', optimizer '
        || printf('%.4g', optimizer_per_iteration) || ')'
        || coalesce(', median ' || CAST(CAST(median_bytes AS BIGINT) AS VARCHAR) || ' B', '')
        || CASE WHEN group_known THEN ' in a group of ' || group_size || ' ranks ' || ranks
                ELSE ' on ranks ' || ranks || ' (the trace names no process group)' END
        || coalesce(CASE WHEN collective IN ('Send', 'Recv', 'SendRecv')
                         THEN ', peers ' || peer_distance || ' rank(s) apart' END, '')
        || CASE WHEN among_replicas THEN ', between ranks that reduce gradients together (replicas,'
                                         || ' not pipeline stages)' ELSE '' END
        AS evidence
FROM judged;

CREATE OR REPLACE VIEW parallel_groups AS
SELECT * FROM parallel_groups_of(NULL);
