-- metric: scaling
-- version: 11
-- summary: Runs side by side (1, 2, 4 nodes ...): shares of step time and one sentence naming each run's main bottleneck
-- unit: percent
-- grain: run_id
-- columns: run_id VARCHAR, world_size BIGINT, nodes BIGINT, label VARCHAR, differs_in VARCHAR, step_ns DOUBLE, window_ns BIGINT, compute_pct DOUBLE, exposed_comm_pct DOUBLE, exposed_mem_pct DOUBLE, exposed_other_pct DOUBLE, idle_pct DOUBLE, exposed_by_collective VARCHAR, bottleneck VARCHAR, bottleneck_pct DOUBLE, baseline_run VARCHAR, baseline_pct DOUBLE, idle_cause VARCHAR, idle_cause_pct DOUBLE, sentence VARCHAR, wait_pct DOUBLE, transfer_pct DOUBLE, comm_other_pct DOUBLE, launch_pct DOUBLE, idle_data_pct DOUBLE, idle_sync_pct DOUBLE, idle_os_pct DOUBLE, idle_launching_pct DOUBLE, idle_unexplained_pct DOUBLE, loss_pct DOUBLE, loss_wait_pct DOUBLE, loss_transfer_pct DOUBLE, loss_comm_other_pct DOUBLE, loss_mem_pct DOUBLE, loss_other_pct DOUBLE, loss_launch_pct DOUBLE, loss_idle_data_pct DOUBLE, loss_idle_sync_pct DOUBLE, loss_idle_os_pct DOUBLE, loss_idle_launching_pct DOUBLE, loss_idle_unexplained_pct DOUBLE, loss_per_node_pct DOUBLE, loss_by_group VARCHAR
-- params: runs (text, optional), series (text, optional), step_pattern (text, optional), include_first_last (bool, default false), cause_min_ns (int, default 30000), data_pattern (text, optional)
-- see: temporal_breakdown, comm_comp_overlap, iteration_time, idle_gaps
-- uses: aligned_steps, collective_parts, gap_causes, host_activity, gpu_ops, intervals, nccl_ops, ranks, run_cards, run_choice, run_config, series
-- complexity: O(n log n) in GPU ops and NCCL ops (intervals_flatten and intervals_intersect sweeps; the
--   exposed communication meets the collectives' parts by a binned equi-join)
-- show: run_id, world_size, step_ns, compute_pct, exposed_comm_pct, idle_pct, bottleneck, sentence
--
-- v11: clock_offsets counts a grouped kernel (several collectives in one NCCL group) as one observation: nsys runs with grouped collectives get Kineto's offsets (issue 34).
-- One row per run (runs: a comma-separated list of run ids; default every run), ordered by
-- size. The temporal breakdown of every rank (as temporal_breakdown computes it: W = the rank's
-- GPU span, split into compute, exposed communication, exposed memory, other and idle) is summed
-- over the run's ranks, and each part is given as a share of the summed W, i.e. of the average
-- step. Exposed communication is also split by collective (nccl_ops.collective): the time a kind
-- of collective runs with no compute kernel running (|U kind n (U comm \ U compute)|; kinds that
-- overlap each other count for each: a grouped SendRecv kernel is both Send and Recv). Exposed
-- communication outside nccl_ops is what the union of all nccl_ops leaves exposed.
-- The bottleneck is the largest non-compute part: exposed NCCL <collective>, exposed
-- communication outside nccl_ops, exposed memory copies, other GPU work (sync, unclassified
-- kernels) or idle GPU time. The sentence names it and compares it with the smallest run (fewest
-- ranks; the first by run_id on a tie), in the words of the scaling study (version 11), e.g.
--   "At 4 nodes, 35% of the step time is spent in gradient synchronization (exposed NCCL
--    AllReduce), up from 9% at 1 node" (AllReduce and ReduceScatter reduce gradients).
-- Why the GPU idles (version 7): in each idle gap of a rank's GPU timeline (across its devices)
-- at least cause_min_ns long (default 30 us, as idle_gaps), what the rank's launching thread
-- did, as idle_gaps' causes (sql/lib/gap_causes.sql): idle_cause is the host cause (data
-- loading, sync wait, os call, launching) that covers the most of the run's idle time and
-- idle_cause_pct its share of all of it (shorter gaps count as unexplained). When idle time is
-- the bottleneck and one cause explains more than half of it, the sentence names it; data
-- loading in the words of the scaling study, where GPU utilization is 100 - idle_pct:
--   "At 2 nodes, GPU utilization drops to 69% (from 95% at 1 node) because the data loader
--    cannot keep up: 31% of the step time is idle GPU time, 70% of it while the host was
--    loading data".
-- Runs are described by their node count when their ranks' hosts are known (distinct
-- ranks.host), else by world size ("8 ranks"). step_ns is the median across-rank iteration time
-- (as iteration_time: first and last iteration of each rank left out unless include_first_last;
-- NULL without iterations).
-- series (a series_id of the series view) compares the runs of that series only, labelled and
-- ordered by the one field they differ in ("tp=2"). Runs are never mixed silently: differs_in
-- names the configuration fields (run_config) whose values differ among the runs compared, and
-- when that is more than one field the sentence says the runs are not one series.
-- Where the efficiency goes (version 9). Each run's summed GPU time W is cut into disjoint parts
-- (shares of W, summing to 100):
--   compute_pct                                  as above (the efficiency)
--   wait_pct, transfer_pct                       exposed communication (no compute kernel running)
--                                                while a collective matched across ranks
--                                                (collective_arrivals, as comm_breakdown) waits for
--                                                its last rank, or after that arrival; where two
--                                                collectives overlap, transfer wins over wait, then
--                                                the first process group by name
--   comm_other_pct                               the rest of exposed communication (sends and
--                                                receives, unmatched kernels; past 31 process
--                                                groups the later ones)
--   exposed_mem_pct, exposed_other_pct           as above
--   launch_pct                                   idle GPU time while a collective's launching call
--                                                had started and its kernel had not
--   idle_data_pct, idle_sync_pct, idle_os_pct,   the rest of the idle time by the host's cause
--   idle_launching_pct, idle_unexplained_pct     (host_in_gaps over the idle gaps >= cause_min_ns,
--                                                launches cut out; shorter gaps and host time none
--                                                of these covers: unexplained)
-- so idle_pct = launch_pct + idle_*_pct and exposed_comm_pct = wait_pct + transfer_pct +
-- comm_other_pct. The loss of each run against the smallest (baseline) run, in points of GPU
-- time (NULL on the baseline):
--   loss_pct = baseline compute_pct - compute_pct
--            = loss_wait_pct + loss_transfer_pct + loss_comm_other_pct + loss_mem_pct
--              + loss_other_pct + loss_launch_pct + loss_idle_data_pct + loss_idle_sync_pct
--              + loss_idle_os_pct + loss_idle_launching_pct + loss_idle_unexplained_pct
-- exactly (each loss_*_pct = the part's share here - its share in the baseline), and
-- loss_per_node_pct = loss_pct / (nodes - baseline nodes) (NULL without hosts or added nodes).
-- loss_by_group splits loss_wait_pct and loss_transfer_pct by process group (a group missing
-- from one run has share 0 there): 'wait 0 +1.2, transfer 0 +12.3, transfer 1 -0.1'.
WITH chosen AS (
    SELECT run_id FROM (SELECT run_id FROM run_cards UNION SELECT run_id FROM ranks)
    WHERE run_chosen(run_id, getvariable('runs'), getvariable('series'))
),
in_series AS (
    SELECT run_id, varied || '=' || value AS label, position FROM series
    WHERE series_id = CAST(getvariable('series') AS VARCHAR)
),
differing AS (
    -- configuration fields whose values differ among the runs compared (or that some lack)
    SELECT string_agg(key, ', ' ORDER BY key) AS fields, count(*) AS n
    FROM (
        SELECT key FROM run_config WHERE run_id IN (SELECT run_id FROM chosen)
        GROUP BY key
        HAVING count(DISTINCT value) > 1 OR count(*) < (SELECT count(*) FROM chosen)
    )
),
keys AS (
    SELECT r.run_id, r.rank, r.rank_key AS grp FROM ranks r JOIN chosen c ON c.run_id = r.run_id
),
ops AS NOT MATERIALIZED (
    -- layer: 0 compute, 1 comm, 2 memory, NULL sync/other
    SELECT rank_key AS grp, start_ns, end_ns, alone,
           CASE kind WHEN 'compute' THEN 0 WHEN 'comm' THEN 1
                     WHEN 'memcpy' THEN 2 WHEN 'memset' THEN 2 END AS layer
    FROM gpu_ops
    WHERE run_id IN (SELECT run_id FROM chosen)
),
crowded AS (
    SELECT grp, start_ns, end_ns, layer FROM ops WHERE NOT alone
),
flat AS (
    -- the GPU timeline of each rank by its top layer (compute > comm > memory > other): an op
    -- alone on the timeline is a piece by itself, only the others are flattened
    SELECT grp, start_ns, end_ns, layer FROM ops WHERE alone AND end_ns > start_ns
    UNION ALL
    SELECT grp, start_ns, end_ns, layer FROM intervals_flatten(crowded)
),
spans AS (
    SELECT grp, min(start_ns) AS start_ns, max(end_ns) AS end_ns FROM ops GROUP BY grp
),
breakdown AS (
    SELECT s.grp, s.start_ns, s.end_ns,
           coalesce(sum(f.end_ns - f.start_ns), 0) AS busy_ns,
           coalesce(sum(f.end_ns - f.start_ns) FILTER (WHERE f.layer = 0), 0) AS layer0_ns,
           coalesce(sum(f.end_ns - f.start_ns) FILTER (WHERE f.layer = 1), 0) AS layer1_ns,
           coalesce(sum(f.end_ns - f.start_ns) FILTER (WHERE f.layer = 2), 0) AS layer2_ns,
           coalesce(sum(f.end_ns - f.start_ns) FILTER (WHERE f.layer IS NULL), 0) AS rest_ns
    FROM spans s LEFT JOIN flat f ON f.grp = s.grp
    GROUP BY s.grp, s.start_ns, s.end_ns
),
-- exposed communication, split by collective --------------------------------------------------
exposed AS (
    SELECT grp, start_ns, end_ns FROM flat WHERE layer = 1
),
collectives AS (
    SELECT collective, row_number() OVER (ORDER BY collective) AS kind_id
    FROM (SELECT DISTINCT n.collective FROM nccl_ops n JOIN chosen c ON c.run_id = n.run_id)
),
exposed_by_kind AS (
    -- the exposed pieces once per collective kind, keyed (rank, kind); kind 0: any collective
    SELECT e.grp * 1000 + c.kind_id AS grp, e.start_ns, e.end_ns
    FROM exposed e CROSS JOIN (SELECT kind_id FROM collectives UNION ALL SELECT 0) c
),
collective_ops AS (
    SELECT n.rank_key * 1000 + c.kind_id AS grp, n.start_ns, n.end_ns
    FROM nccl_ops n
    JOIN collectives c ON c.collective = n.collective
    WHERE n.run_id IN (SELECT run_id FROM chosen)
    UNION ALL
    SELECT rank_key * 1000, start_ns, end_ns FROM nccl_ops WHERE run_id IN (SELECT run_id FROM chosen)
),
exposed_kind_ns AS (
    SELECT grp // 1000 AS grp, grp % 1000 AS kind_id, sum(end_ns - start_ns) AS exposed_ns
    FROM intervals_intersect(exposed_by_kind, collective_ops)
    GROUP BY ALL
),
-- what the host did while the GPU idled ------------------------------------------------------------
one_device AS (
    SELECT rank_key AS grp FROM gpu_ops WHERE run_id IN (SELECT run_id FROM chosen)
    GROUP BY rank_key HAVING count(DISTINCT device_id) = 1
),
rank_gaps AS MATERIALIZED (
    -- the idle gaps of each rank's timeline long enough to ask the host about. A rank with one
    -- device: before each op that starts after the device's earlier ops ended
    -- (gpu_ops.device_prev_end_ns; no sort of the millions of ops); with several: between
    -- consecutive pieces of flat (disjoint, and covering its busy time)
    SELECT row_number() OVER (ORDER BY grp, start_ns) AS gap_id, grp, start_ns, end_ns
    FROM (SELECT rank_key AS grp, device_prev_end_ns AS start_ns, start_ns AS end_ns
          FROM gpu_ops
          WHERE run_id IN (SELECT run_id FROM chosen) AND rank_key IN (SELECT grp FROM one_device)
          UNION ALL
          SELECT grp, lag(end_ns) OVER (PARTITION BY grp ORDER BY start_ns), start_ns
          FROM flat WHERE grp NOT IN (SELECT grp FROM one_device))
    WHERE end_ns - start_ns >= coalesce(CAST(getvariable('cause_min_ns') AS BIGINT), 30000)
),
-- the parts of communication (version 9) ---------------------------------------------------------
arrivals AS MATERIALIZED (
    -- each matched collective on each rank; the last arrival kept inside the kernel so that
    -- wait and transfer cover it exactly
    SELECT rank_key AS grp, process_group, call_ns, start_ns, end_ns,
           least(greatest(last_arrival_ns, start_ns), end_ns) AS arrived_ns
    FROM collective_arrivals()
    WHERE run_id IN (SELECT run_id FROM chosen) AND end_ns > start_ns
),
part_layers AS (
    -- one flatten layer per (part, process group): 0.. transfers, then waits (bits 0..61)
    SELECT part, process_group, layer
    FROM (SELECT p.part, g.process_group,
                 row_number() OVER (ORDER BY p.part DESC, g.process_group) - 1 AS layer
          FROM (SELECT DISTINCT process_group FROM arrivals) g
          CROSS JOIN (VALUES ('transfer'), ('wait')) p(part))
    WHERE layer <= 61
),
comm_parts AS (
    SELECT a.grp, a.start_ns, a.arrived_ns AS end_ns, l.layer
    FROM arrivals a LEFT JOIN part_layers l ON l.part = 'wait' AND l.process_group = a.process_group
    UNION ALL
    SELECT a.grp, a.arrived_ns, a.end_ns, l.layer
    FROM arrivals a LEFT JOIN part_layers l ON l.part = 'transfer' AND l.process_group = a.process_group
),
labelled AS (
    SELECT grp, start_ns, end_ns, layer FROM intervals_flatten(comm_parts)
    WHERE end_ns > start_ns AND layer IS NOT NULL
),
exposed_parts AS (
    -- each labelled piece's time inside exposed communication: both sets are disjoint per rank,
    -- so the overlaps of the pairs add up to the intersection (a binned equi-join)
    SELECT l.grp, l.layer,
           sum(least(l.end_ns, e.end_ns) - greatest(l.start_ns, e.start_ns)) AS ns
    FROM time_bins(labelled) l
    JOIN time_bins(exposed) e ON e.grp = l.grp AND e.bin = l.bin
    WHERE l.start_ns < e.end_ns AND l.end_ns > e.start_ns
      AND bin_of(greatest(l.start_ns, e.start_ns)) = l.bin
    GROUP BY l.grp, l.layer
),
launches AS (
    SELECT grp, call_ns AS start_ns, start_ns AS end_ns FROM arrivals WHERE call_ns < start_ns
),
launch_spans AS (
    -- disjoint per rank: launches queued together overlap
    SELECT grp, start_ns, end_ns FROM intervals_union(launches)
),
launch_window AS (
    -- the launches inside the rank's GPU span
    SELECT row_number() OVER (ORDER BY l.grp, l.start_ns) AS span_id, l.grp,
           greatest(l.start_ns, s.start_ns) AS start_ns, least(l.end_ns, s.end_ns) AS end_ns
    FROM launch_spans l JOIN spans s ON s.grp = l.grp
    WHERE l.end_ns > s.start_ns AND l.start_ns < s.end_ns
),
launch_busy AS (
    -- the GPU busy inside them (busy_pieces: a binned equi-join, no sort of the ops)
    SELECT span_id, sum(end_ns - start_ns) AS ns FROM busy_pieces(launch_window, ops)
    GROUP BY span_id
),
launch_idle AS (
    SELECT w.grp, sum(w.end_ns - w.start_ns - coalesce(b.ns, 0)) AS ns
    FROM launch_window w LEFT JOIN launch_busy b ON b.span_id = w.span_id
    GROUP BY w.grp
),
touched AS MATERIALIZED (
    -- the long gaps a launch overlaps: only these are asked again, without the launches
    SELECT DISTINCT g.gap_id, g.grp, g.start_ns, g.end_ns
    FROM time_bins(launch_spans) l
    JOIN time_bins(rank_gaps) g ON g.grp = l.grp AND g.bin = l.bin
    WHERE g.start_ns < l.end_ns AND g.end_ns > l.start_ns
),
touched_spans AS (
    SELECT grp, start_ns, end_ns FROM touched
),
cause_gaps AS MATERIALIZED (
    -- the touched gaps without the launches, numbered after rank_gaps: the host is asked once
    SELECT (SELECT count(*) FROM rank_gaps) + row_number() OVER (ORDER BY grp, start_ns) AS gap_id,
           grp, start_ns, end_ns
    FROM intervals_difference(touched_spans, launch_spans)
),
asked_gaps AS (
    SELECT gap_id, grp, start_ns, end_ns FROM rank_gaps
    UNION ALL
    SELECT gap_id, grp, start_ns, end_ns FROM cause_gaps
),
host_in_asked AS MATERIALIZED (
    SELECT * FROM host_in_gaps(asked_gaps, getvariable('data_pattern'))
),
host_per_run AS (
    SELECT k.run_id,
           sum(h.data_loading_ns) AS data_ns, sum(h.sync_wait_ns) AS sync_ns,
           sum(h.os_call_ns) AS os_ns, sum(h.launching_ns) AS launch_ns
    FROM host_in_asked h
    JOIN rank_gaps g ON g.gap_id = h.gap_id
    JOIN keys k ON k.grp = g.grp
    GROUP BY k.run_id
),
idle_cause AS (
    -- the host cause covering the most idle time of a run (a tie: the first listed)
    SELECT run_id, cause, ns FROM (
        SELECT run_id, 'data loading' AS cause, data_ns AS ns, 1 AS listed FROM host_per_run
        UNION ALL SELECT run_id, 'sync wait', sync_ns, 2 FROM host_per_run
        UNION ALL SELECT run_id, 'os call', os_ns, 3 FROM host_per_run
        UNION ALL SELECT run_id, 'launching', launch_ns, 4 FROM host_per_run)
    WHERE ns > 0
    QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY ns DESC, listed) = 1
),
-- per run ---------------------------------------------------------------------------------------
per_run AS (
    SELECT k.run_id,
           sum(b.end_ns - b.start_ns) AS window_ns,
           sum(b.layer0_ns) AS compute_ns,
           sum(b.layer1_ns) AS exposed_comm_ns,
           sum(b.layer2_ns) AS exposed_mem_ns,
           sum(b.rest_ns) AS exposed_other_ns,
           sum(b.end_ns - b.start_ns - b.busy_ns) AS idle_ns
    FROM breakdown b JOIN keys k ON k.grp = b.grp
    GROUP BY k.run_id
),
per_run_kind AS (
    SELECT k.run_id, c.collective, sum(e.exposed_ns) AS exposed_ns
    FROM exposed_kind_ns e
    JOIN keys k ON k.grp = e.grp
    JOIN collectives c ON c.kind_id = e.kind_id
    GROUP BY k.run_id, c.collective
),
part_ns AS (
    -- exposed wait / transfer per run and process group
    SELECT k.run_id, l.part, l.process_group, sum(e.ns) AS ns
    FROM exposed_parts e
    JOIN part_layers l ON l.layer = e.layer
    JOIN keys k ON k.grp = e.grp
    GROUP BY ALL
),
cause_per_run AS (
    SELECT k.run_id,
           coalesce(sum(h.data_loading_ns), 0) AS data_ns, coalesce(sum(h.sync_wait_ns), 0) AS sync_ns,
           coalesce(sum(h.os_call_ns), 0) AS os_ns, coalesce(sum(h.launching_ns), 0) AS launching_ns
    FROM host_in_asked h
    JOIN (SELECT gap_id, grp FROM rank_gaps WHERE gap_id NOT IN (SELECT gap_id FROM touched)
          UNION ALL
          SELECT gap_id, grp FROM cause_gaps) g ON g.gap_id = h.gap_id
    JOIN keys k ON k.grp = g.grp
    GROUP BY k.run_id
),
shares AS (
    -- every part of a run's GPU time as a share of it; the parts sum to 100
    SELECT p.run_id, p.compute_ns * 100.0 / p.window_ns AS compute_pct,
           coalesce(w.ns, 0) * 100.0 / p.window_ns AS wait_pct,
           coalesce(t.ns, 0) * 100.0 / p.window_ns AS transfer_pct,
           (p.exposed_comm_ns - coalesce(w.ns, 0) - coalesce(t.ns, 0)) * 100.0 / p.window_ns
               AS comm_other_pct,
           p.exposed_mem_ns * 100.0 / p.window_ns AS mem_pct,
           p.exposed_other_ns * 100.0 / p.window_ns AS other_pct,
           coalesce(li.ns, 0) * 100.0 / p.window_ns AS launch_pct,
           coalesce(c.data_ns, 0) * 100.0 / p.window_ns AS idle_data_pct,
           coalesce(c.sync_ns, 0) * 100.0 / p.window_ns AS idle_sync_pct,
           coalesce(c.os_ns, 0) * 100.0 / p.window_ns AS idle_os_pct,
           coalesce(c.launching_ns, 0) * 100.0 / p.window_ns AS idle_launching_pct,
           (p.idle_ns - coalesce(li.ns, 0) - coalesce(c.data_ns, 0) - coalesce(c.sync_ns, 0)
            - coalesce(c.os_ns, 0) - coalesce(c.launching_ns, 0)) * 100.0 / p.window_ns
               AS idle_unexplained_pct
    FROM per_run p
    LEFT JOIN (SELECT run_id, sum(ns) AS ns FROM part_ns WHERE part = 'wait' GROUP BY run_id) w
           ON w.run_id = p.run_id
    LEFT JOIN (SELECT run_id, sum(ns) AS ns FROM part_ns WHERE part = 'transfer' GROUP BY run_id) t
           ON t.run_id = p.run_id
    LEFT JOIN (SELECT k.run_id, sum(l.ns) AS ns FROM launch_idle l JOIN keys k ON k.grp = l.grp
               GROUP BY k.run_id) li ON li.run_id = p.run_id
    LEFT JOIN cause_per_run c ON c.run_id = p.run_id
    WHERE p.window_ns > 0
),
candidates AS (
    -- every non-compute part of a run, as a share of its GPU time
    SELECT p.run_id, 'exposed NCCL ' || k.collective AS part, k.exposed_ns * 100.0 / p.window_ns AS pct
    FROM per_run_kind k JOIN per_run p USING (run_id)
    UNION ALL
    SELECT p.run_id, 'exposed communication outside nccl_ops',
           greatest(exposed_comm_ns - coalesce(a.exposed_ns, 0), 0) * 100.0 / window_ns
    FROM per_run p
    LEFT JOIN (SELECT k.run_id, sum(e.exposed_ns) AS exposed_ns
               FROM exposed_kind_ns e JOIN keys k ON k.grp = e.grp
               WHERE e.kind_id = 0 GROUP BY k.run_id) a ON a.run_id = p.run_id
    UNION ALL
    SELECT run_id, 'exposed memory copies', exposed_mem_ns * 100.0 / window_ns FROM per_run
    UNION ALL
    SELECT run_id, 'other GPU work (sync, unclassified kernels)', exposed_other_ns * 100.0 / window_ns
    FROM per_run
    UNION ALL
    SELECT run_id, 'idle GPU time', idle_ns * 100.0 / window_ns FROM per_run
),
bottleneck AS (
    SELECT run_id, part, pct FROM candidates
    WHERE pct IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY pct DESC, part) = 1
),
-- run sizes and step time -------------------------------------------------------------------------
sizes AS (
    SELECT c.run_id,
           count(DISTINCT r.rank) AS world_size,
           CASE WHEN count(r.rank) > 0 AND count(r.host) = count(r.rank)
                THEN count(DISTINCT r.host) END AS nodes
    FROM chosen c LEFT JOIN ranks r ON r.run_id = c.run_id
    GROUP BY c.run_id
),
step_time AS (
    SELECT run_id, median(dur_ns) AS step_ns
    FROM aligned_steps(getvariable('step_pattern'), getvariable('include_first_last'))
    GROUP BY run_id
),
kind_text AS (
    -- 'AllReduce 35.1%, AllGather 2.0%' (a join, not a correlated subquery: Spark refuses an
    -- aggregate whose argument mixes outer and local columns)
    SELECT k.run_id,
           string_agg(k.collective || ' ' || printf('%.1f', k.exposed_ns * 100.0 / p.window_ns) || '%',
                      ', ' ORDER BY k.exposed_ns DESC, k.collective) AS exposed_by_collective
    FROM per_run_kind k JOIN per_run p ON p.run_id = k.run_id
    GROUP BY k.run_id
),
described AS (
    SELECT s.run_id, s.world_size, s.nodes,
           coalesce(i.label,
                    CASE WHEN s.nodes IS NOT NULL
                         THEN s.nodes || CASE WHEN s.nodes = 1 THEN ' node' ELSE ' nodes' END
                         ELSE s.world_size || CASE WHEN s.world_size = 1 THEN ' rank' ELSE ' ranks' END
                    END) AS label,
           row_number() OVER (ORDER BY i.position, s.world_size, s.run_id) AS size_order
    FROM sizes s LEFT JOIN in_series i ON i.run_id = s.run_id
),
baseline AS (
    SELECT run_id AS baseline_run, label AS baseline_label FROM described WHERE size_order = 1
),
group_loss AS (
    -- each process group's wait and transfer share here minus in the baseline (0 where absent)
    SELECT d.run_id, x.part, x.process_group,
           coalesce(max(g.ns) FILTER (WHERE g.run_id = d.run_id), 0) * 100.0 / max(p.window_ns)
             - coalesce(max(g.ns) FILTER (WHERE g.run_id = bl.baseline_run), 0) * 100.0
               / max(pb.window_ns) AS loss_pct
    FROM described d
    CROSS JOIN baseline bl
    JOIN per_run p ON p.run_id = d.run_id
    JOIN per_run pb ON pb.run_id = bl.baseline_run
    JOIN (SELECT DISTINCT part, process_group FROM part_ns) x ON true
    LEFT JOIN part_ns g ON g.part = x.part AND g.process_group = x.process_group
                       AND g.run_id IN (d.run_id, bl.baseline_run)
    WHERE d.run_id <> bl.baseline_run AND p.window_ns > 0 AND pb.window_ns > 0
    GROUP BY d.run_id, x.part, x.process_group
),
group_text AS (
    SELECT run_id,
           string_agg(part || ' ' || process_group || ' ' || printf('%+.1f', loss_pct), ', '
                      ORDER BY part DESC, process_group) AS loss_by_group
    FROM group_loss
    GROUP BY run_id
),
joined AS (
    SELECT d.run_id, d.world_size, d.nodes, d.label, d.size_order, t.step_ns, p.window_ns,
           p.compute_ns, p.exposed_comm_ns, p.exposed_mem_ns, p.exposed_other_ns, p.idle_ns,
           b.part AS bottleneck, b.pct AS bottleneck_pct,
           bl.baseline_run, bl.baseline_label,
           CASE WHEN bl.baseline_run <> d.run_id
                THEN coalesce((SELECT c.pct FROM candidates c
                               WHERE c.run_id = bl.baseline_run AND c.part = b.part), 0) END
               AS baseline_pct,
           kt.exposed_by_collective, dif.fields AS differs_in, dif.n AS fields_differing,
           ic.cause AS idle_cause, ic.ns * 100.0 / p.idle_ns AS idle_cause_pct,
           sh.wait_pct, sh.transfer_pct, sh.comm_other_pct, sh.launch_pct, sh.idle_data_pct,
           sh.idle_sync_pct, sh.idle_os_pct, sh.idle_launching_pct, sh.idle_unexplained_pct,
           CASE WHEN bl.baseline_run <> d.run_id THEN sb.compute_pct - sh.compute_pct END AS loss_pct,
           CASE WHEN bl.baseline_run <> d.run_id THEN sh.wait_pct - sb.wait_pct END AS loss_wait_pct,
           CASE WHEN bl.baseline_run <> d.run_id THEN sh.transfer_pct - sb.transfer_pct END AS loss_transfer_pct,
           CASE WHEN bl.baseline_run <> d.run_id THEN sh.comm_other_pct - sb.comm_other_pct END AS loss_comm_other_pct,
           CASE WHEN bl.baseline_run <> d.run_id THEN sh.mem_pct - sb.mem_pct END AS loss_mem_pct,
           CASE WHEN bl.baseline_run <> d.run_id THEN sh.other_pct - sb.other_pct END AS loss_other_pct,
           CASE WHEN bl.baseline_run <> d.run_id THEN sh.launch_pct - sb.launch_pct END AS loss_launch_pct,
           CASE WHEN bl.baseline_run <> d.run_id THEN sh.idle_data_pct - sb.idle_data_pct END AS loss_idle_data_pct,
           CASE WHEN bl.baseline_run <> d.run_id THEN sh.idle_sync_pct - sb.idle_sync_pct END AS loss_idle_sync_pct,
           CASE WHEN bl.baseline_run <> d.run_id THEN sh.idle_os_pct - sb.idle_os_pct END AS loss_idle_os_pct,
           CASE WHEN bl.baseline_run <> d.run_id THEN sh.idle_launching_pct - sb.idle_launching_pct END
               AS loss_idle_launching_pct,
           CASE WHEN bl.baseline_run <> d.run_id THEN sh.idle_unexplained_pct - sb.idle_unexplained_pct END
               AS loss_idle_unexplained_pct,
           CASE WHEN bl.baseline_run <> d.run_id AND d.nodes > bd.nodes
                THEN (sb.compute_pct - sh.compute_pct) / (d.nodes - bd.nodes) END AS loss_per_node_pct,
           gt.loss_by_group
    FROM described d
    CROSS JOIN baseline bl
    CROSS JOIN differing dif
    LEFT JOIN per_run p ON p.run_id = d.run_id
    LEFT JOIN bottleneck b ON b.run_id = d.run_id
    LEFT JOIN step_time t ON t.run_id = d.run_id
    LEFT JOIN kind_text kt ON kt.run_id = d.run_id
    LEFT JOIN idle_cause ic ON ic.run_id = d.run_id
    LEFT JOIN described bd ON bd.run_id = bl.baseline_run
    LEFT JOIN shares sh ON sh.run_id = d.run_id
    LEFT JOIN shares sb ON sb.run_id = bl.baseline_run
    LEFT JOIN group_text gt ON gt.run_id = d.run_id
)
SELECT
    run_id,
    world_size,                                   -- ranks
    nodes,                                        -- distinct hosts (NULL when unknown)
    label,                                        -- "4 nodes", "8 ranks", or in a series "tp=2"
    differs_in,                                   -- configuration fields that differ among the runs
    step_ns,                                      -- median across-rank iteration time, ns
    CAST(window_ns AS BIGINT) AS window_ns,       -- GPU time summed over ranks, ns
    compute_ns * 100.0 / window_ns AS compute_pct,
    exposed_comm_ns * 100.0 / window_ns AS exposed_comm_pct,
    exposed_mem_ns * 100.0 / window_ns AS exposed_mem_pct,
    exposed_other_ns * 100.0 / window_ns AS exposed_other_pct,
    idle_ns * 100.0 / window_ns AS idle_pct,
    exposed_by_collective,                        -- 'AllReduce 35.1%, AllGather 2.0%'
    bottleneck,                                   -- the largest non-compute part
    bottleneck_pct,
    baseline_run,                                 -- the smallest run
    baseline_pct,                                 -- the same part's share there
    idle_cause,                                   -- data loading | sync wait | os call | launching (NULL: none)
    idle_cause_pct,                               -- its share of the run's idle time
    CASE
        WHEN window_ns IS NULL OR window_ns = 0 THEN label || ': no GPU activity in this run'
        -- seed 002's second sentence: the GPU waits for input
        WHEN bottleneck = 'idle GPU time' AND idle_cause = 'data loading' AND idle_cause_pct > 50
            THEN 'At ' || label || ', GPU utilization '
                 || CASE WHEN baseline_pct IS NULL
                             THEN 'is ' || CAST(round(100 - bottleneck_pct) AS BIGINT) || '%'
                         WHEN round(bottleneck_pct) > round(baseline_pct)
                             THEN 'drops to ' || CAST(round(100 - bottleneck_pct) AS BIGINT)
                                  || '% (from ' || CAST(round(100 - baseline_pct) AS BIGINT)
                                  || '% at ' || baseline_label || ')'
                         ELSE 'is ' || CAST(round(100 - bottleneck_pct) AS BIGINT) || '% ('
                              || CAST(round(100 - baseline_pct) AS BIGINT) || '% at '
                              || baseline_label || ')' END
                 || ' because the data loader cannot keep up: '
                 || CAST(round(bottleneck_pct) AS BIGINT) || '% of the step time is idle GPU time, '
                 || CAST(round(idle_cause_pct) AS BIGINT) || '% of it while the host was loading data'
        ELSE 'At ' || label || ', ' || CAST(round(bottleneck_pct) AS BIGINT) || '% of the step time '
             -- seed 002's first sentence: gradients are reduced by AllReduce (DDP) or
             -- ReduceScatter (FSDP, ZeRO)
             || CASE WHEN bottleneck IN ('exposed NCCL AllReduce', 'exposed NCCL ReduceScatter')
                     THEN 'is spent in gradient synchronization (' || bottleneck || ')'
                     ELSE 'is ' || bottleneck END
             || CASE WHEN baseline_pct IS NULL THEN ''
                     WHEN round(bottleneck_pct) > round(baseline_pct)
                         THEN ', up from ' || CAST(round(baseline_pct) AS BIGINT) || '% at ' || baseline_label
                     WHEN round(bottleneck_pct) < round(baseline_pct)
                         THEN ', down from ' || CAST(round(baseline_pct) AS BIGINT) || '% at ' || baseline_label
                     ELSE ', as at ' || baseline_label END
             || CASE WHEN bottleneck = 'idle GPU time' AND idle_cause_pct > 50
                     THEN '; ' || CAST(round(idle_cause_pct) AS BIGINT) || '% of it while the host was '
                          || CASE idle_cause WHEN 'sync wait' THEN 'waiting in sync calls'
                                             WHEN 'os call' THEN 'in OS calls (I/O)'
                                             ELSE 'launching GPU work' END
                     ELSE '' END
    END || CASE WHEN fields_differing > 1
                THEN ' (not one series: the runs differ in ' || differs_in || ')' ELSE '' END
        AS sentence,
    -- where the GPU time goes and what each part costs against the baseline (version 9: the
    -- header's identities; points of GPU time)
    wait_pct, transfer_pct, comm_other_pct, launch_pct, idle_data_pct, idle_sync_pct,
    idle_os_pct, idle_launching_pct, idle_unexplained_pct,
    loss_pct,                                     -- baseline compute_pct - compute_pct
    loss_wait_pct, loss_transfer_pct, loss_comm_other_pct, loss_mem_pct, loss_other_pct,
    loss_launch_pct, loss_idle_data_pct, loss_idle_sync_pct, loss_idle_os_pct,
    loss_idle_launching_pct, loss_idle_unexplained_pct,
    loss_per_node_pct,                            -- loss_pct / added nodes
    loss_by_group                                 -- 'wait 0 +1.2, transfer 0 +12.3'
FROM joined
ORDER BY size_order;
