-- metric: sync_stalls
-- version: 1
-- summary: Host calls that wait for the GPU (the nsys analyze sync rules): host time blocked and GPU idle time during them, per rank and call name or per call
-- unit: ns
-- grain: run_id, rank, rule, name, tid, start_ns
-- columns: run_id VARCHAR, rank INTEGER, tid BIGINT, rule VARCHAR, name VARCHAR, start_ns BIGINT, end_ns BIGINT, iteration INTEGER, calls BIGINT, blocked_ns BIGINT, max_blocked_ns BIGINT, gpu_idle_ns BIGINT
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), start_ns (int, optional), end_ns (int, optional), per_call (bool, default false)
-- see: nsys analyze rules cuda_api_sync, cuda_memcpy_sync, cuda_memset_sync, cuda_memcpy_async
-- uses: gpu_ops, host_activity, ranks, scope
-- complexity: O(n log n) in GPU ops and host events (sweeps; no range join)
-- show: rule, name, blocked_ns, gpu_idle_ns, rank, calls, run_id
--
-- The calls are blocking_calls' (sql/lib/host_activity.sql), on any host thread:
--   sync api         cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize,
--                    cuCtxSynchronize (and the cu / hip spellings)      (rule cuda_api_sync)
--   sync memcpy      a copy launched by a call without Async (cudaMemcpy) (cuda_memcpy_sync)
--   sync memset      a memset launched by a call without Async          (cuda_memset_sync)
--   pageable memcpy  an Async copy to or from pageable host memory      (cuda_memcpy_async)
-- blocked_ns is the call's duration: the host thread waited that long. gpu_idle_ns is the
-- time, during the call, that the rank's GPU had nothing in flight: the idle gaps between its
-- busy islands (as idle_gaps finds them: before the first op and after the last is not idle)
-- that overlap the call; a rank with several devices adds each device's idle time. A call that
-- blocks while the GPU is idle is time both lose. Default: summed per (rank, rule, call name),
-- with calls and the longest call; per_call = true: one row per call, with its thread, start
-- and end (UTC ns). Calls are kept by rank, iteration (the host step holding their start) and
-- by overlapping the start_ns / end_ns window.
WITH calls AS MATERIALIZED (
    SELECT row_number() OVER (ORDER BY b.file_id, b.pid, b.tid, b.start_ns, b.end_ns, b.name) AS call_id,
           r.rank_key AS grp, b.*
    FROM blocking_calls() b
    JOIN ranks r USING (run_id, rank)
    WHERE scope_match(b.run_id, b.rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(b.iteration, getvariable('iteration_from'), getvariable('iteration_to'))
      AND window_overlaps(b.start_ns, b.end_ns, getvariable('start_ns'), getvariable('end_ns'))
),
call_bins AS (
    SELECT DISTINCT grp, bin FROM time_bins(calls)
),
gaps AS MATERIALIZED (
    -- an op that starts after every earlier op of its device ended opens an island; the gap
    -- before it runs from that end. Only gaps in a bin of a call, or spanning bins (few), can
    -- overlap a call: the millions of others are dropped before any binning.
    SELECT g.rank_key AS grp, g.device_prev_end_ns AS start_ns, g.start_ns AS end_ns
    FROM gpu_ops g
    LEFT JOIN call_bins b ON b.grp = g.rank_key AND b.bin = bin_of(g.device_prev_end_ns)
    WHERE g.device_prev_end_ns < g.start_ns
      AND (b.grp IS NOT NULL OR bin_of(g.device_prev_end_ns) < bin_of(g.start_ns))
),
idle AS (
    SELECT c.call_id, sum(least(c.end_ns, g.end_ns) - greatest(c.start_ns, g.start_ns)) AS ns
    FROM time_bins(calls) c
    JOIN time_bins(gaps) g ON g.grp = c.grp AND g.bin = c.bin
    WHERE g.start_ns < c.end_ns AND g.end_ns > c.start_ns
      AND bin_of(greatest(c.start_ns, g.start_ns)) = c.bin
    GROUP BY c.call_id
),
per_call AS (
    SELECT c.run_id, c.rank, c.tid, c.rule, c.name, c.start_ns, c.end_ns, c.iteration,
           c.end_ns - c.start_ns AS blocked_ns, CAST(coalesce(i.ns, 0) AS BIGINT) AS gpu_idle_ns
    FROM calls c LEFT JOIN idle i USING (call_id)
),
answer AS (
    SELECT run_id, rank, tid, rule, name, start_ns, end_ns, iteration,
           1 AS calls, blocked_ns, blocked_ns AS max_blocked_ns, gpu_idle_ns
    FROM per_call
    WHERE coalesce(CAST(getvariable('per_call') AS BOOLEAN), false)
    UNION ALL
    SELECT run_id, rank, NULL, rule, name, min(start_ns), max(end_ns), NULL, count(*),
           CAST(sum(blocked_ns) AS BIGINT), max(blocked_ns), CAST(sum(gpu_idle_ns) AS BIGINT)
    FROM per_call
    WHERE NOT coalesce(CAST(getvariable('per_call') AS BOOLEAN), false)
    GROUP BY run_id, rank, rule, name
)
SELECT
    run_id,
    rank,
    tid,                                       -- the waiting thread (per_call; NULL when summed)
    rule,                                      -- sync api | sync memcpy | sync memset | pageable memcpy
    name,                                      -- the call: cudaStreamSynchronize, cudaMemcpy, ...
    start_ns,                                  -- UTC ns: the call's (summed: the first start)
    end_ns,                                    -- (summed: the last end)
    iteration,                                 -- per_call: the step holding its start
    calls,
    blocked_ns,                                -- host time blocked in these calls
    max_blocked_ns,                            -- the longest call
    gpu_idle_ns                                -- GPU idle time during them
FROM answer
ORDER BY run_id, rank, start_ns, rule, name;
