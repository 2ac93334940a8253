-- uses: clock_offsets, collective_waits, cpu_ops, cuda_api, gpu_ops, gpu_syncs, host_names, iterations, nccl_ops, nvtx_ranges, path_walk, ranks, scope
-- The dependency graph of a step and its critical path (HolisticTraceAnalysis' critical path
-- analysis, hta/analyzers/critical_path_analysis.py of 0.5.0, extended across ranks).
--
-- Scope. A step is a range per rank: by default the rank's iterations (ProfilerStep#N), with
-- `annotation` every NVTX range / user annotation whose name contains that text (HTA:
-- `annotation in name`); `instance` is the 0-based instance in start order (HTA's instance_id);
-- with a UTC window (start_ns / end_ns) and no annotation, the window on every rank.
-- As HTA clips: a CPU op or CUDA API call belongs to the step when it starts inside the range
-- and lasts > 0 ns; a GPU op when its launching call does (ops without a launch are left out).
-- ranks = each: one graph per rank and step (HTA's); all: one graph per run and step, the ranks
-- joined by their collectives, walked back from the last rank to finish, or from `rank`.
--
-- Nodes: the start and the end of every CPU op (Kineto cpu_op; nsys: NVTX push/pop ranges),
-- CUDA API call and GPU op in the step, and a `release` node where a rank's collective kernel
-- learns that the last rank arrived. Edges, each typed (HTA's CPEdgeType in brackets):
--   operator [OPERATOR_KERNEL]   on a CPU thread, consecutive nodes of the nesting walk (enter
--       op, enter child, leave child, ..., leave op): weight = the time between them; into the
--       end of a blocking call (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventQuery,
--       cudaEventSynchronize, cudaMemcpy, cudaMemcpyAsync) weight 0, class `sync wait` (HTA:
--       weight 0 too). On a stream, a GPU op's start -> end, weight = its duration.
--   dependency [DEPENDENCY]      end of a thread's outermost op -> start of its next one, weight 0
--       (the thread's idle time between top-level ops is on no path, as in HTA).
--   launch [KERNEL_LAUNCH_DELAY] launching call's start -> GPU op's start, when the stream was
--       empty at the launch (HTA: queue length 1 at the launch and 0 at the op's start, the
--       stream's previous op ended before the launch, the awaited event's op too).
--   kernel_kernel [KERNEL_KERNEL_DELAY] otherwise the stream's previous op's end -> start.
--       An op with neither (nor an awaited event) gets a launch edge of weight 0, so the path
--       goes on to the CPU that launched it (HTA 0.5.0 leaves it without input unless its
--       option critical_path_add_zero_weight_launch_edges is on).
--   sync [SYNC_DEPENDENCY], weight 0: the op last launched on a stream before a cudaEventRecord ->
--       the next op launched on the waiting stream after cudaStreamWaitEvent (from the same
--       thread), or -> the end of cudaEventSynchronize; the last op started on the stream
--       (every stream: Context Sync) -> the end of the synchronizing call (gpu_syncs).
--   rendezvous (tracewh), weight 0: ranks = all, a collective matched across ranks
--       (collective_waits): the start of the last rank's kernel -> the release node of every
--       other rank's kernel (at the last arrival, in that rank's clock), class `waiting for
--       rank N` (its name: the collective's op_key); release -> the kernel's end is
--       communication (the transfer after it).
--   send_recv (tracewh), weight 0: ranks = all, a point-to-point pair (nccl_ops): the n-th Send
--       from rank a to peer b in the step meets the n-th Recv on b from a (an equi-join on
--       sender, receiver, n; `peer` must be a global rank: Kineto's Src/Dst Rank, nsys' world
--       communicator); whichever kernel started last releases the other as a rendezvous of
--       two does (NCCL's send and recv kernels wait for each other), class `waiting for rank N`;
--       a kernel that runs several operations (a grouped SendRecv) is not paired yet.
--       Not yet edges: a blocking call without a gpu_syncs row (nsys without CUDA sync tracing, the
--       generated benches): its end then has only its thread's input, as in HTA.
-- bound_by (HTA's `bound_by`): cpu_bound, gpu_compute_bound (memcpy/memset too, as HTA),
-- gpu_communication_bound (comm kernels), gpu_kernel_launch_overhead,
-- gpu_kernel_kernel_overhead, '' for dependency and sync edges; tracewh adds `data_loading`
-- (CPU time under an op or range matching data_pattern; HTA: cpu_bound), `sync wait` (the
-- weight-0 end of a blocking call) and `waiting for rank N`.
--
-- The walk (critical_path_walk): each node's blocking predecessor is the input that arrived
-- last, and the path the chain of those back from the step's last node. On the shared alexnet
-- trace it is HTA's longest path, edge for edge in time per class
-- (tests/peer/hta_critical_path.py).

-- critical_path_per: the rows critical_path gives, checked (NULL: edge).
-- @arg want_per  any  edge | class | step; anything else is an error
CREATE OR REPLACE MACRO critical_path_per(want_per) AS
    CASE WHEN coalesce(CAST(want_per AS VARCHAR), 'edge') IN ('edge', 'class', 'step')
         THEN coalesce(CAST(want_per AS VARCHAR), 'edge')
         ELSE error('per must be edge, class or step, not ' || CAST(want_per AS VARCHAR)) END;

-- critical_path_steps: the steps (or annotation instances) asked for, per rank.
-- @column run_id, rank, instance (0-based), step_name, win_start_ns, win_end_ns
CREATE OR REPLACE MACRO critical_path_steps(want_run, want_rank, want_annotation, want_instance,
                                            want_start_ns, want_end_ns) AS TABLE
WITH marks AS (
    SELECT run_id, rank, name, start_ns, end_ns FROM iterations
    WHERE want_annotation IS NULL AND want_start_ns IS NULL AND want_end_ns IS NULL
      AND end_ns IS NOT NULL
      AND scope_match(run_id, rank, want_run, want_rank)
    UNION ALL
    SELECT run_id, rank, name, start_ns, end_ns FROM nvtx_ranges
    WHERE want_annotation IS NOT NULL AND end_ns IS NOT NULL
      AND contains(name, CAST(want_annotation AS VARCHAR))
      AND scope_match(run_id, rank, want_run, want_rank)
    UNION ALL
    -- a time window (UTC ns) instead: one step per rank
    SELECT run_id, rank, 'window', coalesce(CAST(want_start_ns AS BIGINT), 0),
           coalesce(CAST(want_end_ns AS BIGINT), 9223372036854775807)
    FROM ranks
    WHERE want_annotation IS NULL AND (want_start_ns IS NOT NULL OR want_end_ns IS NOT NULL)
      AND scope_match(run_id, rank, want_run, want_rank)
)
SELECT run_id, rank,
       row_number() OVER (PARTITION BY run_id, rank ORDER BY start_ns, end_ns DESC) - 1 AS instance,
       name AS step_name, start_ns AS win_start_ns, end_ns AS win_end_ns
FROM marks
QUALIFY want_instance IS NULL OR instance = CAST(want_instance AS INTEGER);

-- critical_path_graph: the nodes' edges of every step asked for.
-- @arg want_ranks  any  each (default) | all
-- @arg want_data   any  data_loader_pattern's parameter
-- @column grp      BIGINT   one walk: (run, instance) with ranks = all, else (run, rank, instance)
-- @column dst, src BIGINT   node ids (event * 4 + 0 start, 1 end, 2 release)
-- @column src_ts, dst_ts BIGINT  the nodes' times (each in its rank's clock)
-- @column weight_ns, edge_type, bound_by, rank, from_rank, name, lane
-- @column aligned_ns  BIGINT  dst_ts less the rank's clock offset (clock_offsets); NULL on a
--                     rank other than `rank` (ranks = all: the walk starts on that rank)
-- @column instance, step_name
CREATE OR REPLACE MACRO critical_path_graph(want_run, want_rank, want_ranks, want_annotation,
                                            want_instance, want_start_ns, want_end_ns,
                                            want_data) AS TABLE
WITH RECURSIVE mode AS (
    SELECT CASE WHEN coalesce(CAST(want_ranks AS VARCHAR), 'each') IN ('each', 'all')
                THEN coalesce(CAST(want_ranks AS VARCHAR), 'each') = 'all'
                ELSE error('ranks must be each or all, not ' || CAST(want_ranks AS VARCHAR)) END
           AS joined
),
steps AS (
    SELECT s.*, dense_rank() OVER (ORDER BY s.run_id, CASE WHEN m.joined THEN -1 ELSE s.rank END,
                                            s.instance) AS grp
    -- ranks = all takes every rank's step; `rank` then names where the walk starts
    FROM critical_path_steps(want_run,
                             CASE WHEN coalesce(CAST(want_ranks AS VARCHAR), 'each') = 'all'
                                  THEN NULL ELSE want_rank END,
                             want_annotation, want_instance, want_start_ns, want_end_ns) s, mode m
),
-- (a grp lies in one run: the joins and windows below that match grp leave run_id out, a
-- text key that only slowed their sorts)
-- the steps' span as constants for the scans (their zone maps skip the rest of the capture)
lo AS (SELECT min(win_start_ns) AS ns FROM steps),
hi AS (SELECT max(win_end_ns) AS ns FROM steps),
cpu_events AS NOT MATERIALIZED (
    SELECT s.grp, o.run_id, o.rank, o.pid, o.tid, o.start_ns, o.end_ns, o.name,
           o.correlation_id, 'cpu_op' AS src_kind, o.op_id AS stored_key
    FROM cpu_ops o JOIN steps s ON s.run_id = o.run_id AND s.rank = o.rank
    WHERE o.start_ns BETWEEN s.win_start_ns AND s.win_end_ns AND o.end_ns > o.start_ns
      AND o.start_ns BETWEEN (SELECT ns FROM lo) AND (SELECT ns FROM hi)
    UNION ALL
    SELECT s.grp, r.run_id, r.rank, r.pid, r.tid, r.start_ns, r.end_ns, r.name, NULL, 'nvtx',
           r.range_id
    FROM nvtx_ranges r JOIN steps s ON s.run_id = r.run_id AND s.rank = r.rank
    WHERE r.kind = 'push_pop' AND r.start_ns BETWEEN s.win_start_ns AND s.win_end_ns
      AND r.end_ns > r.start_ns AND r.start_ns BETWEEN (SELECT ns FROM lo) AND (SELECT ns FROM hi)
    UNION ALL
    SELECT s.grp, a.run_id, a.rank, a.pid, a.tid, a.start_ns, a.end_ns, a.name,
           a.correlation_id, 'api', NULL
    FROM cuda_api a JOIN steps s ON s.run_id = a.run_id AND s.rank = a.rank
    WHERE a.start_ns BETWEEN s.win_start_ns AND s.win_end_ns AND a.end_ns > a.start_ns
      AND a.start_ns BETWEEN (SELECT ns FROM lo) AND (SELECT ns FROM hi)
),
gpu_events AS NOT MATERIALIZED (
    SELECT s.grp, g.run_id, g.rank, g.pid, g.device_id, g.stream_id, g.start_ns, g.end_ns,
           CAST(g.name AS VARCHAR) AS name, g.correlation_id, CAST(g.kind AS VARCHAR) AS kind,
           g.launch_ns
    FROM gpu_ops g JOIN steps s ON s.run_id = g.run_id AND s.rank = g.rank
    WHERE g.launch_ns BETWEEN s.win_start_ns AND s.win_end_ns
      AND g.launch_ns BETWEEN (SELECT ns FROM lo) AND (SELECT ns FROM hi)
),
-- The ranks a walk can reach, from the collectives alone, before any graph is built: the walk
-- starts on a rank that may hold the step's last node (or on `rank`) and leaves a rank only
-- where one of its collectives or sends waited for another rank. A rank it cannot reach is
-- left out of the graph (the path is the same). Each step's last node ends no earlier than
-- its latest CPU node (always a node) and no later than its latest GPU op (a node if its
-- launching call is in the step).
rank_ends AS (
    SELECT e.grp, e.rank, e.sure_ns - coalesce(o.offset_ns, 0) AS sure_ns,
           e.may_ns - coalesce(o.offset_ns, 0) AS may_ns
    FROM (SELECT grp, run_id, rank, max(end_ns) FILTER (WHERE sure) AS sure_ns,
                 max(end_ns) AS may_ns
          FROM (SELECT grp, run_id, rank, end_ns, true AS sure FROM cpu_events
                UNION ALL
                SELECT grp, run_id, rank, end_ns, false FROM gpu_events)
          GROUP BY ALL) e
    LEFT JOIN clock_offsets o ON o.run_id = e.run_id AND o.rank = e.rank
),
start_ranks AS (
    SELECT grp, rank
    FROM (SELECT *, max(sure_ns) OVER (PARTITION BY grp) AS last_sure_ns FROM rank_ends)
    WHERE NOT (SELECT joined FROM mode)
       OR (want_rank IS NULL AND may_ns >= coalesce(last_sure_ns, may_ns))
       OR rank = CAST(want_rank AS INTEGER)
),
-- rank -> a rank it may have waited for in the step: the last arrivals of its collectives,
-- the peers of its sends and receives (a superset of the rendezvous and send_recv edges)
waits_for AS (
    SELECT g.grp, g.rank, l.rank AS on_rank
    FROM gpu_events g
    JOIN collective_waits c ON c.run_id = g.run_id AND c.rank = g.rank AND c.start_ns = g.start_ns
    JOIN collective_waits l ON l.run_id = c.run_id AND l.op_key = c.op_key AND l.arrived_last
    WHERE g.kind = 'comm' AND NOT c.arrived_last AND (SELECT joined FROM mode)
    UNION ALL
    SELECT g.grp, g.rank, n.peer
    FROM gpu_events g
    JOIN nccl_ops n ON n.run_id = g.run_id AND n.rank = g.rank AND n.start_ns = g.start_ns
                   AND n.stream_id = g.stream_id
    WHERE g.kind = 'comm' AND n.collective IN ('Send', 'Recv') AND n.peer IS NOT NULL
      AND (SELECT joined FROM mode)
      AND n.start_ns BETWEEN (SELECT ns FROM lo) AND (SELECT max(start_ns) FROM gpu_events)
),
reach(grp, rank) AS (
    SELECT grp, rank FROM start_ranks
    UNION
    SELECT w.grp, w.on_rank FROM reach r JOIN waits_for w ON w.grp = r.grp AND w.rank = r.rank
),
-- the nodes' events, numbered in an order of their content (ties between nodes are broken by
-- it, so the path does not depend on the order rows are stored in): CPU ops, NVTX ranges, API
-- calls, GPU ops; ops and ranges in their stored key's order (an op before its child of the
-- same span), the others in time order
events AS (
    SELECT row_number() OVER (ORDER BY list_position(['cpu_op', 'nvtx', 'api', 'gpu'], src_kind),
                                       grp, rank, stored_key, start_ns, end_ns, pid, tid,
                                       device_id, stream_id, correlation_id, name) AS ev,
           *,
           CASE WHEN src_kind IN ('cpu_op', 'nvtx')
                THEN regexp_matches(coalesce(name, ''), data_loader_pattern(want_data))
                ELSE false END AS data_load
    FROM (SELECT grp, run_id, rank, pid, tid, NULL::INTEGER AS device_id,
                 NULL::BIGINT AS stream_id, start_ns, end_ns, name, correlation_id, src_kind,
                 stored_key, NULL::VARCHAR AS kind, NULL::BIGINT AS launch_ns
          FROM cpu_events
          UNION ALL
          SELECT grp, run_id, rank, pid, NULL, device_id, stream_id, start_ns, end_ns, name,
                 correlation_id, 'gpu', NULL, kind, launch_ns
          FROM gpu_events) e
    -- the reachable ranks as one short list: a semi join's hash table would hold every rank's
    -- events (the optimizer cannot size the recursive CTE)
    WHERE list_contains((SELECT list(struct_pack(grp := grp, rank := rank)) FROM reach),
                        struct_pack(grp := e.grp, rank := e.rank))
),
-- CPU threads: the nesting walk (ends before starts at one instant; inner ends first, outer
-- starts first), the depth after each node, and the edge from the node before
cpu_walk AS (
    SELECT ev, grp, run_id, rank, pid, tid, name, data_load, src_kind, is_end, ts,
           row_number() OVER lane AS seq,
           -- the node's number among the thread's starts (or ends): no running sum
           row_number() OVER (PARTITION BY grp, rank, pid, tid, is_end
                              ORDER BY ts, tie, ev) AS nth_kind,
           lag(ev) OVER lane AS prev_ev, lag(is_end) OVER lane AS prev_is_end,
           lag(ts) OVER lane AS prev_ts, lag(name) OVER lane AS prev_name,
           lag(data_load) OVER lane AS prev_data
    FROM (SELECT ev, grp, run_id, rank, pid, tid, name, data_load, src_kind, false AS is_end,
                 start_ns AS ts, -end_ns AS tie
          FROM events WHERE src_kind <> 'gpu'
          UNION ALL
          SELECT ev, grp, run_id, rank, pid, tid, name, data_load, src_kind, true, end_ns,
                 -start_ns
          FROM events WHERE src_kind <> 'gpu')
    WINDOW lane AS (PARTITION BY grp, rank, pid, tid ORDER BY ts, is_end DESC, tie, ev
                    ROWS UNBOUNDED PRECEDING)
),
cpu_depths AS (
    -- the depth after the node: starts so far less ends so far
    SELECT * EXCLUDE (nth_kind),
           CAST(CASE WHEN is_end THEN seq - 2 * nth_kind ELSE 2 * nth_kind - seq END AS INTEGER)
               AS open_after
    FROM cpu_walk
),
cpu_nodes AS (
    -- the depth after the node before: this node's, less its own step (no second sort)
    SELECT *, open_after - CASE WHEN is_end THEN -1 ELSE 1 END AS prev_open FROM cpu_depths
),
-- the op open around a gap between two siblings (HTA gives the gap to it): the last op that
-- started one level up before the gap
cpu_starts AS (
    SELECT grp, run_id, rank, pid, tid, seq, open_after, name, data_load
    FROM cpu_nodes WHERE NOT is_end
),
cpu_flagged AS (
    SELECT *, prev_is_end AND NOT is_end AS gap,
           is_end AND src_kind = 'api'
           AND name IN ('cudaDeviceSynchronize', 'cudaStreamSynchronize', 'cudaEventQuery',
                        'cudaEventSynchronize', 'cudaMemcpy', 'cudaMemcpyAsync') AS blocking_end
    FROM cpu_nodes WHERE prev_ev IS NOT NULL
),
cpu_edges AS (
    SELECT c.grp, c.run_id, c.ev * 4 + CAST(c.is_end AS INTEGER) AS dst,
           c.prev_ev * 4 + CAST(c.prev_is_end AS INTEGER) AS src,
           c.prev_ts AS src_ts, c.ts AS dst_ts, c.rank, c.rank AS from_rank,
           CASE WHEN c.gap AND c.prev_open = 0 THEN 'dependency' ELSE 'operator' END AS edge_type,
           CASE WHEN c.gap AND c.prev_open = 0 THEN 0 WHEN c.blocking_end THEN 0
                ELSE c.ts - c.prev_ts END AS weight_ns,
           CASE WHEN c.gap AND c.prev_open = 0 THEN ''
                WHEN c.blocking_end THEN 'sync wait'
                WHEN (NOT c.prev_is_end AND c.prev_data) OR (c.is_end AND c.data_load)
                     OR (c.gap AND c.open_data) THEN 'data_loading'
                ELSE 'cpu_bound' END AS bound_by,
           CASE WHEN NOT c.prev_is_end THEN c.prev_name WHEN c.is_end THEN c.name
                ELSE c.open_name END AS name,
           'thread ' || c.tid AS lane
    FROM (SELECT *, NULL::VARCHAR AS open_name, NULL::BOOLEAN AS open_data
          FROM cpu_flagged WHERE NOT (gap AND prev_open > 0)
          UNION ALL
          -- only a gap inside an op looks for the op around it
          SELECT c.*, p.name, p.data_load
          FROM (SELECT * FROM cpu_flagged WHERE gap AND prev_open > 0) c
          ASOF LEFT JOIN cpu_starts p
            ON p.grp = c.grp AND p.rank = c.rank AND p.pid = c.pid
           AND p.tid = c.tid AND p.open_after = c.open_after - 1 AND p.seq < c.seq) c
),
-- the launching call of each GPU op (same rank, process, correlation id and start, as
-- gpu_op_calls, whose join over the whole warehouse this avoids); an op whose call lasts 0 ns
-- is not in the step (HTA)
launched AS (
    SELECT g.* EXCLUDE (tid), a.tid AS launch_tid, a.ev AS api_ev,
           lag(g.end_ns) OVER stream AS prev_end_ns, lag(g.ev) OVER stream AS prev_ev,
           lag(g.name) OVER stream AS prev_name, lead(g.launch_ns) OVER stream AS next_launch_ns
    FROM (SELECT * FROM events WHERE src_kind = 'gpu') g
    JOIN (SELECT * FROM events WHERE src_kind = 'api') a
      ON a.grp = g.grp AND a.rank = g.rank AND a.pid = g.pid
     AND a.correlation_id = g.correlation_id AND a.start_ns = g.launch_ns
    WINDOW stream AS (PARTITION BY g.grp, g.rank, g.device_id, g.stream_id
                      ORDER BY g.start_ns, g.ev)
),
-- the step's launches, for event records and stream waits (HTA looks them up in the whole
-- trace, but an op launched before the step is not in its graph either)
all_launches AS (
    SELECT grp, run_id, rank, pid, launch_tid, device_id, stream_id, correlation_id, launch_ns
    FROM launched
),
-- the steps' syncs, grouped: gpu_syncs' own lookup of each waiting call (over every call of the
-- warehouse) is then left out of the plan; the step's call is joined in `waits`
syncs AS (
    SELECT run_id, rank, pid, device_id, stream_id, sync_kind, wait_stream_id, start_ns, end_ns,
           correlation_id, wait_event_correlation_id, count(*) AS copies
    FROM gpu_syncs
    -- a sync recorded after the step's end is not in it (HTA: so for context and event syncs)
    WHERE start_ns BETWEEN (SELECT ns FROM lo) AND (SELECT ns FROM hi)
    GROUP BY ALL
),
-- the event records waited on: their correlation ids bound the scan of the calls
records AS (
    SELECT run_id, rank, pid, correlation_id, start_ns
    FROM cuda_api
    WHERE name = 'cudaEventRecord'
      AND correlation_id IN (SELECT wait_event_correlation_id FROM syncs)
),
waits AS (
    -- the waiting call is the step's API call with the sync's correlation id
    SELECT s.grp, w.run_id, w.rank, w.pid, w.device_id, w.stream_id, w.sync_kind,
           w.wait_stream_id, a.tid AS api_tid, a.start_ns AS api_start_ns, w.end_ns,
           a.ev AS api_ev, rec.start_ns AS record_ns
    FROM syncs w
    JOIN steps s ON s.run_id = w.run_id AND s.rank = w.rank
    JOIN (SELECT * FROM events WHERE src_kind = 'api') a
      ON a.grp = s.grp AND a.run_id = w.run_id AND a.rank = w.rank AND a.pid = w.pid
     AND a.correlation_id = w.correlation_id
    LEFT JOIN records rec
      ON rec.run_id = w.run_id AND rec.rank = w.rank AND rec.pid = w.pid
     AND rec.correlation_id = w.wait_event_correlation_id
),
-- the op launched last on the recorded stream before cudaEventRecord
event_sources AS (
    SELECT w.*, l.correlation_id AS src_corr
    FROM (SELECT * FROM waits WHERE sync_kind IN ('Stream Wait Event', 'Event Sync')
                                AND record_ns IS NOT NULL) w
    ASOF JOIN all_launches l
      ON l.grp = w.grp AND l.run_id = w.run_id AND l.rank = w.rank AND l.device_id = w.device_id
     AND l.stream_id = w.wait_stream_id AND l.launch_ns <= w.record_ns
),
-- cudaStreamWaitEvent: the next op launched on the waiting stream by the same thread
stream_waits AS (
    SELECT src.ev AS src_ev, src.end_ns AS src_end_ns, nxt.correlation_id AS dst_corr, w.grp,
           w.run_id, w.rank, w.pid
    FROM (SELECT * FROM event_sources WHERE sync_kind = 'Stream Wait Event') w
    JOIN (SELECT * FROM events WHERE src_kind = 'gpu') src
      ON src.grp = w.grp AND src.run_id = w.run_id AND src.rank = w.rank AND src.pid = w.pid
     AND src.correlation_id = w.src_corr
    ASOF JOIN all_launches nxt
      ON nxt.grp = w.grp AND nxt.run_id = w.run_id AND nxt.rank = w.rank AND nxt.pid = w.pid
     AND nxt.launch_tid = w.api_tid AND nxt.stream_id = w.stream_id
     AND nxt.launch_ns >= w.api_start_ns
),
gpu_in AS (
    SELECT l.*, sw.src_ev AS sync_ev, sw.src_end_ns AS sync_end_ns
    FROM launched l
    LEFT JOIN (SELECT grp, run_id, rank, pid, dst_corr, arg_max(src_ev, src_end_ns) AS src_ev,
                      max(src_end_ns) AS src_end_ns
               FROM stream_waits GROUP BY ALL) sw
      ON sw.grp = l.grp AND sw.run_id = l.run_id AND sw.rank = l.rank AND sw.pid = l.pid
     AND sw.dst_corr = l.correlation_id
),
gpu_edges AS (
    -- the op itself
    SELECT grp, run_id, ev * 4 + 1 AS dst, ev * 4 AS src, start_ns AS src_ts, end_ns AS dst_ts, rank,
           rank AS from_rank, 'operator' AS edge_type, end_ns - start_ns AS weight_ns,
           CASE WHEN kind = 'comm' THEN 'gpu_communication_bound' ELSE 'gpu_compute_bound' END
               AS bound_by,
           name, 'stream ' || stream_id AS lane
    FROM gpu_in
    UNION ALL
    -- launch, else the stream's previous op, else (neither, nor a sync: HTA leaves the op
    -- without input) its launch at weight 0, as HTA's critical_path_add_zero_weight_launch_edges
    SELECT grp, run_id, ev * 4,
           CASE WHEN kk_edge THEN prev_ev * 4 + 1 ELSE api_ev * 4 END,
           CASE WHEN kk_edge THEN prev_end_ns ELSE launch_ns END, start_ns, rank, rank,
           CASE WHEN kk_edge THEN 'kernel_kernel' ELSE 'launch' END,
           CASE WHEN launch_edge THEN start_ns - launch_ns WHEN kk_edge THEN start_ns - prev_end_ns
                ELSE 0 END,
           CASE WHEN kk_edge THEN 'gpu_kernel_kernel_overhead' ELSE 'gpu_kernel_launch_overhead' END,
           CASE WHEN kk_edge THEN prev_name ELSE name END, 'stream ' || stream_id
    FROM (SELECT *, NOT launch_edge AND prev_ev IS NOT NULL
                    AND (sync_end_ns IS NULL OR sync_end_ns < prev_end_ns) AS kk_edge
          FROM (SELECT *, (prev_end_ns IS NULL OR prev_end_ns < launch_ns)
                       AND (next_launch_ns IS NULL OR next_launch_ns > start_ns)
                       AND (sync_end_ns IS NULL OR sync_end_ns < launch_ns) AS launch_edge
                FROM gpu_in))
    WHERE launch_edge OR kk_edge OR sync_ev IS NULL
    UNION ALL
    -- an awaited event's op -> the op that waited for it
    SELECT grp, run_id, ev * 4, sync_ev * 4 + 1, sync_end_ns, start_ns, rank, rank, 'sync', 0, '',
           NULL, 'stream ' || stream_id
    FROM gpu_in WHERE sync_ev IS NOT NULL
),
-- host synchronization: the op it waited for -> the end of the waiting call
sync_edges AS (
    SELECT w.grp, w.run_id, w.api_ev * 4 + 1 AS dst, g.ev * 4 + 1 AS src, g.end_ns AS src_ts,
           w.end_ns AS dst_ts, w.rank, w.rank AS from_rank, 'sync' AS edge_type, 0 AS weight_ns,
           '' AS bound_by, NULL AS name, 'thread ' || w.api_tid AS lane
    FROM (SELECT * FROM event_sources WHERE sync_kind = 'Event Sync') w
    JOIN (SELECT * FROM events WHERE src_kind = 'gpu') g
      ON g.grp = w.grp AND g.run_id = w.run_id AND g.rank = w.rank AND g.pid = w.pid
     AND g.correlation_id = w.src_corr
    UNION ALL
    SELECT w.grp, w.run_id, w.api_ev * 4 + 1, g.ev * 4 + 1, g.end_ns, w.end_ns, w.rank, w.rank, 'sync', 0,
           '', NULL, 'thread ' || w.api_tid
    FROM (SELECT w.*, st.stream_id AS sync_stream
          FROM waits w
          JOIN (SELECT DISTINCT grp, run_id, rank, device_id, stream_id FROM gpu_in) st
            ON st.grp = w.grp AND st.run_id = w.run_id AND st.rank = w.rank
           AND (st.stream_id = w.stream_id OR w.sync_kind = 'Context Sync')
          WHERE w.sync_kind IN ('Stream Sync', 'Context Sync')) w
    ASOF JOIN gpu_in g
      ON g.grp = w.grp AND g.run_id = w.run_id AND g.rank = w.rank
     AND g.stream_id = w.sync_stream AND g.start_ns <= w.end_ns
),
-- the step's sends and receives, the n-th of each (rank, peer, direction)
p2p AS (
    SELECT g.grp, g.run_id, g.ev, g.rank, g.start_ns, g.end_ns, g.stream_id, n.collective, n.peer,
           n.start_ns - coalesce(o.offset_ns, 0) AS aligned_start_ns,
           row_number() OVER (PARTITION BY g.grp, g.run_id, g.rank, n.peer, n.collective
                              ORDER BY n.start_ns, g.ev) AS nth
    FROM nccl_ops n
    JOIN gpu_in g ON g.run_id = n.run_id AND g.rank = n.rank AND g.start_ns = n.start_ns
                 AND g.stream_id = n.stream_id AND g.kind = 'comm'
    LEFT JOIN clock_offsets o ON o.run_id = n.run_id AND o.rank = n.rank
    -- a kernel running several operations (nsys: a grouped SendRecv) waits for all its peers:
    -- not paired yet
    WHERE (SELECT joined FROM mode) AND n.collective IN ('Send', 'Recv') AND n.peer IS NOT NULL
      AND n.kernel_ops = 1
      -- the step's GPU ops' span (one may start after the step's end), for the zone maps
      AND n.start_ns BETWEEN (SELECT ns FROM lo) AND (SELECT max(start_ns) FROM gpu_events)
),
-- ranks = all: each collective waits for its last rank
rendezvous AS (
    SELECT g.grp, g.run_id, g.ev, g.rank, g.start_ns, g.end_ns, g.stream_id, c.op_key, c.arrived_last,
           c.start_ns + (c.last_start_ns - c.aligned_start_ns) AS release_ns, 'rendezvous' AS edge_type
    FROM collective_waits c
    JOIN gpu_in g ON g.run_id = c.run_id AND g.rank = c.rank AND g.start_ns = c.start_ns
                 AND g.kind = 'comm'
    WHERE (SELECT joined FROM mode)
    UNION ALL
    -- a send and its recv wait for each other: a rendezvous of two
    SELECT me.grp, me.run_id, me.ev, me.rank, me.start_ns, me.end_ns, me.stream_id,
           CASE WHEN me.collective = 'Send' THEN 'Send ' || me.rank || '->' || me.peer
                ELSE 'Send ' || me.peer || '->' || me.rank END || ' #' || me.nth,
           me.aligned_start_ns >= other.aligned_start_ns,
           me.start_ns + (other.aligned_start_ns - me.aligned_start_ns), 'send_recv'
    FROM p2p me
    JOIN p2p other ON other.grp = me.grp AND other.run_id = me.run_id AND other.rank = me.peer
                  AND other.peer = me.rank AND other.nth = me.nth
                  AND other.collective <> me.collective
),
last_arrivals AS (
    SELECT grp, op_key, arg_min(ev, rank) AS last_ev, min(rank) AS last_rank,
           arg_min(start_ns, rank) AS last_start_ns
    FROM rendezvous WHERE arrived_last GROUP BY ALL
),
rendezvous_edges AS (
    SELECT r.grp, r.run_id, r.ev * 4 + 2 AS dst, a.last_ev * 4 AS src, a.last_start_ns AS src_ts,
           r.release_ns AS dst_ts, r.rank, a.last_rank AS from_rank, r.edge_type,
           0 AS weight_ns, 'waiting for rank ' || a.last_rank AS bound_by, r.op_key AS name,
           'stream ' || r.stream_id AS lane
    FROM rendezvous r JOIN last_arrivals a ON a.grp = r.grp AND a.op_key = r.op_key
    WHERE NOT r.arrived_last AND r.release_ns < r.end_ns
    UNION ALL
    SELECT r.grp, r.run_id, r.ev * 4 + 1, r.ev * 4 + 2, r.release_ns, r.end_ns, r.rank, r.rank, 'operator',
           r.end_ns - r.release_ns, 'gpu_communication_bound', g.name, 'stream ' || r.stream_id
    FROM rendezvous r JOIN last_arrivals a ON a.grp = r.grp AND a.op_key = r.op_key
    JOIN events g ON g.ev = r.ev
    WHERE NOT r.arrived_last AND r.release_ns < r.end_ns
)
SELECT e.*,
       CASE WHEN want_rank IS NULL OR e.rank = CAST(want_rank AS INTEGER)
            THEN e.dst_ts - coalesce(o.offset_ns, 0) END AS aligned_ns,
       i.instance, i.step_name
FROM (SELECT * FROM cpu_edges
      UNION ALL SELECT * FROM gpu_edges
      UNION ALL SELECT * FROM sync_edges
      UNION ALL SELECT * FROM rendezvous_edges) e
JOIN (SELECT grp, any_value(instance) AS instance, any_value(step_name) AS step_name
      FROM steps GROUP BY grp) i ON i.grp = e.grp
LEFT JOIN clock_offsets o ON o.run_id = e.run_id AND o.rank = e.rank;

-- critical_path_edges: the edges of each step's critical path (critical_path_walk of
-- critical_path_graph), first to last (seq 1..n).
CREATE OR REPLACE MACRO critical_path_edges(want_run, want_rank, want_ranks, want_annotation,
                                            want_instance, want_start_ns, want_end_ns,
                                            want_data) AS TABLE
WITH graph AS MATERIALIZED (
    SELECT row_number() OVER () AS edge_id, *
    FROM critical_path_graph(want_run, want_rank, want_ranks, want_annotation, want_instance,
                             want_start_ns, want_end_ns, want_data)
)
-- the walk holds the graph's times only; the names and classes of the path's edges join after
SELECT g.* EXCLUDE (edge_id), p.seq
FROM critical_path_walk(graph) p JOIN graph g USING (edge_id);
