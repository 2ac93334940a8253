-- uses: collective_waits, gpu_ops, host_activity, intervals, nccl_ops
-- Collectives matched across ranks, as comm_breakdown cuts them into parts and straggler_cause
-- explains the late arrivals: each rank's arrival with its launching call, and the GPU's busy
-- time inside stretches of a rank's timeline.

-- collective_arrivals: one row per rank of each collective matched across ranks (the rows of
-- collective_waits: sends and receives excluded), with what nccl_ops and gpu_ops add. A rank
-- that lists one op_key twice counts once (as in collective_waits): its first kernel's stream and
-- launching call. Times are as recorded on the rank's own clock, except aligned_start_ns and
-- last_start_ns (collective_waits' aligned times, to compare ranks).
-- @column run_id, op_key, rank, rank_key, collective, iteration, ranks
-- @column process_group    nccl_ops.pg_name ('' when the trace names none)
-- @column device_id, stream_id   the kernel's device and stream
-- @column call_ns          start of the CUDA API call that launched the kernel (gpu_ops.launch_ns;
--                          NULL: not in the trace)
-- @column start_ns, end_ns the kernel (this rank's arrival and end)
-- @column wait_ns          collective_waits.wait_ns: last arrival - this arrival (aligned)
-- @column last_arrival_ns  start_ns + wait_ns: the last rank's arrival, on this rank's clock
-- @column arrived_last, aligned_start_ns, last_start_ns   as collective_waits
CREATE OR REPLACE MACRO collective_arrivals() AS TABLE
WITH __ca_ops AS (
    -- each matched operation's first kernel, and the call that launched it (a hash join on the
    -- kernel's file, process, correlation id and start: gpu_ops.launch_ns is kept at ingest;
    -- an NCCL kernel is of kind comm, which lets the scan skip the other kernels' names)
    SELECT n.run_id, n.op_key, n.rank,
           arg_min(n.rank_key, n.start_ns) AS rank_key,
           arg_min(n.device_id, n.start_ns) AS device_id,
           arg_min(n.stream_id, n.start_ns) AS stream_id,
           arg_min(n.pg_name, n.start_ns) AS pg_name,
           arg_min(g.launch_ns, n.start_ns) AS call_ns
    FROM nccl_ops n
    LEFT JOIN gpu_ops g
           ON g.file_id = n.file_id AND g.pid = n.pid AND g.correlation_id = n.correlation_id
          AND g.start_ns = n.start_ns AND g.op = 'kernel' AND g.kind = 'comm'
    WHERE n.op_key IS NOT NULL AND n.collective NOT IN ('Send', 'Recv', 'SendRecv')
    GROUP BY n.run_id, n.op_key, n.rank
)
SELECT w.run_id, w.op_key, w.rank, o.rank_key, w.collective, w.iteration, w.ranks,
       coalesce(o.pg_name, '') AS process_group, o.device_id, o.stream_id, o.call_ns,
       w.start_ns, w.end_ns, w.wait_ns, w.start_ns + w.wait_ns AS last_arrival_ns,
       w.arrived_last, w.aligned_start_ns, w.last_start_ns
FROM collective_waits w
JOIN __ca_ops o ON o.run_id = w.run_id AND o.op_key = w.op_key AND o.rank = w.rank;

-- busy_pieces(spans, ops): the time each span has at least one op in flight, as pieces.
-- @arg spans  a table (span_id, grp, start_ns, end_ns): grp a rank_key; span_id unique; spans
--             may overlap (each is answered alone)
-- @arg ops    a table (grp, start_ns, end_ns, alone): GPU ops; alone as gpu_ops.alone (TRUE only
--             for an op that overlaps and touches no other op of its grp)
-- @column span_id, start_ns, end_ns   disjoint pieces (per span) of positive length, in no
--             particular order: U ops n the span
-- How: ops meet the spans by a binned equi-join (time_bins), never a range join; ops alone on
-- their timeline are pieces as they are (cut to the span), only the others are merged
-- (intervals_union, per span).
CREATE OR REPLACE MACRO busy_pieces(spans, ops) AS TABLE
WITH __bp_spans AS MATERIALIZED (
    SELECT span_id, grp, start_ns, end_ns FROM query_table(spans) WHERE end_ns > start_ns
),
__bp_reach AS (
    SELECT grp, min(start_ns) AS first_ns, max(end_ns) AS last_ns FROM __bp_spans GROUP BY grp
),
__bp_keys AS MATERIALIZED (
    SELECT * FROM bin_keys(__bp_spans)
),
__bp_ops AS (
    -- only the ops of the spans' timelines, between their first start and last end, and of
    -- those (millions) only the ones that can meet a span in the binned join below (bin_keys)
    SELECT o.grp, o.start_ns, o.end_ns, o.alone
    FROM query_table(ops) o
    JOIN __bp_reach r ON r.grp = o.grp AND o.end_ns > r.first_ns AND o.start_ns < r.last_ns
    CROSS JOIN (SELECT any_value(sparse) AS sparse FROM __bp_keys) s
    SEMI JOIN __bp_keys k
           ON k.grp = o.grp
          AND k.bin = bin_key(o.start_ns, o.end_ns, s.sparse)
    WHERE o.end_ns > o.start_ns
),
__bp_cut AS (
    SELECT s.span_id, greatest(o.start_ns, s.start_ns) AS start_ns,
           least(o.end_ns, s.end_ns) AS end_ns, o.alone
    FROM time_bins(__bp_ops) o
    JOIN time_bins(__bp_spans) s ON s.grp = o.grp AND s.bin = o.bin
    WHERE o.start_ns < s.end_ns AND o.end_ns > s.start_ns
      AND bin_of(greatest(o.start_ns, s.start_ns)) = o.bin
),
__bp_crowded AS (
    SELECT span_id AS grp, start_ns, end_ns FROM __bp_cut WHERE NOT alone
)
SELECT span_id, start_ns, end_ns FROM __bp_cut WHERE alone
UNION ALL
SELECT grp, start_ns, end_ns FROM intervals_union(__bp_crowded) WHERE end_ns > start_ns;
