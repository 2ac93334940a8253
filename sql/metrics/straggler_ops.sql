-- metric: straggler_ops
-- version: 2
-- summary: Per matched collective and rank, how long the rank waited for the last one to arrive
-- unit: ns
-- grain: run_id, op_key, rank
-- columns: run_id VARCHAR, op_key VARCHAR, collective VARCHAR, iteration INTEGER, rank INTEGER, start_ns BIGINT, end_ns BIGINT, wait_ns BIGINT, arrived_last BOOLEAN, arrived_first BOOLEAN, start_skew_ns BIGINT, end_skew_ns BIGINT, ranks BIGINT
-- params: run (text, optional), rank (int, optional), collective (text, optional), iteration_from (int, optional), iteration_to (int, optional), start_ns (int, optional), end_ns (int, optional), align_clocks (bool, default true)
-- see: HTA straggler analysis (per collective); TraceLens multi-rank collective report (nccl_implicit_sync); straggler sums these per rank
-- uses: collective_clocks, scope
-- complexity: O(n log n) in collective waits
-- show: op_key, rank, collective, wait_ns, arrived_last, start_skew_ns, run_id
--
-- v2: clock_offsets counts a grouped kernel (several collectives in one NCCL group) as one observation: nsys runs with grouped collectives get Kineto's offsets (issue 34).
-- One row per rank of each collective matched across ranks by op_key (sends and receives
-- excluded), from the collective_waits view. Times aligned across hosts (raw - clock offset):
--   wait_ns        latest aligned start over the collective's ranks - this rank's aligned start
--   arrived_last   this rank started last (ties: every tied rank); arrived_first likewise
--   start_skew_ns  latest - earliest aligned start; end_skew_ns the same for ends
-- align_clocks=false measures on each rank's clock as recorded, as TraceLens' multi-rank
-- collective report does (its rank_N_wait_time, skew in start time, skew in end time, in us):
-- on one host the clocks agree and so do the answers; across hosts the aligned waits are the
-- ones to trust (a rank whose clock runs 2 ms ahead otherwise seems to wait 2 ms less).
-- The rows of a collective come together, collectives in the order their last rank arrived.
-- rank / collective / iteration_from / iteration_to / start_ns / end_ns (UTC) keep rows; the
-- waits are always measured against every rank of the collective.
SELECT
    run_id,
    op_key,
    collective,
    iteration,
    rank,
    start_ns,                       -- UTC ns as recorded on the rank
    end_ns,
    wait_ns,
    arrived_last,
    arrived_first,
    start_skew_ns,
    end_skew_ns,
    ranks                           -- ranks the collective was matched on
FROM collective_waits_on(getvariable('align_clocks'))
WHERE scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
  AND (getvariable('collective') IS NULL
       OR collective = CAST(getvariable('collective') AS VARCHAR))
  AND iteration_in(iteration, getvariable('iteration_from'), getvariable('iteration_to'))
  AND window_overlaps(start_ns, end_ns, getvariable('start_ns'), getvariable('end_ns'))
ORDER BY run_id, last_start_ns, op_key, rank;
