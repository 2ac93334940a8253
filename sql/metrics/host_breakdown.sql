-- metric: host_breakdown
-- version: 3
-- summary: Per rank and iteration (and per rank over its steps), the launching thread's time and its shares: data loading, forward, backward, optimizer, waiting on the GPU, OS calls, launching, other
-- unit: ns
-- grain: run_id, rank, iteration
-- columns: run_id VARCHAR, rank INTEGER, iteration INTEGER, start_ns BIGINT, end_ns BIGINT, iteration_ns BIGINT, data_loading_ns BIGINT, forward_ns BIGINT, backward_ns BIGINT, optimizer_ns BIGINT, sync_wait_ns BIGINT, os_call_ns BIGINT, launching_ns BIGINT, other_ns BIGINT, data_loading_pct DOUBLE, forward_pct DOUBLE, backward_pct DOUBLE, optimizer_pct DOUBLE, sync_wait_pct DOUBLE, os_call_pct DOUBLE, launching_pct DOUBLE, other_pct DOUBLE
-- params: run (text, optional), rank (int, optional), iteration_from (int, optional), iteration_to (int, optional), step_pattern (text, optional), data_pattern (text, optional), phases (text, optional)
-- see: nsys analyze (cuda_api_sync, cuda_memcpy_sync, cuda_memset_sync, cuda_memcpy_async); DeepSpeed wall_clock_breakdown
-- uses: host_activity, intervals, ranks, scope, training_steps
-- complexity: O(n log n) in host events: CPU ops, API calls, OS calls (host_activity; intervals_flatten sweep)
-- show: iteration, rank, iteration_ns, forward_pct, backward_pct, optimizer_pct, data_loading_pct, sync_wait_pct, launching_pct, other_pct, run_id
--
-- The launching thread of a rank is the thread of its steps (the training loop), else its
-- thread with the most CUDA API calls (main_threads in sql/lib/host_activity.sql). Each
-- iteration's host step (training_steps: ProfilerStep#N, or the NVTX ranges matching
-- step_pattern) is split by what that thread does, each instant going to the first of these
-- in flight (host_activity's layers, most specific first):
--   sync_wait_ns     a call that waits for the GPU (sync_stalls' rules: cudaStreamSynchronize &
--                    co., blocking memcpy / memset, async memcpy to or from pageable memory)
--   launching_ns     a CUDA API call that enqueues GPU work (cudaLaunchKernel, cudaMemcpyAsync, ...)
--   data_loading_ns  a CPU op or NVTX range / annotation on the thread matching data_pattern
--                    (default: DataLoader, data_load, ...: PyTorch's enumerate(DataLoader)#...)
--   os_call_ns       an OS runtime call (os_calls: read, write, fsync, futex, poll, ...)
--   optimizer_ns, backward_ns, forward_ns   a phase range of the rank (nvtx_phases' `phases`
--                    pattern), on any thread: backward ranges are on autograd's thread while
--                    the launching thread waits in loss.backward()
--   other_ns         none of these (Python, framework overhead, other CUDA calls)
-- So a sync inside backward is sync wait, a read() inside the data loader is data loading and
-- the launches of the forward pass are launching. The parts sum to iteration_ns, the host
-- step's duration. Steps still open at the end of the capture are left out.
-- Each rank also gets a row with iteration NULL: its steps together (iteration_ns and each
-- part summed over them; start_ns, end_ns the first start and the last end). Every row gives
-- each part as a share too: data_loading_pct ... other_pct = 100 x part / iteration_ns.
-- How: the launching thread's CUDA calls (host_calls) never overlap one another, so they are
-- not flattened: the other activities and the step itself (the bottom layer) are flattened
-- into pieces, and each piece gives the time of the calls inside it (a binned equi-join,
-- time_bins) to sync wait or launching.
WITH steps AS (
    SELECT run_id, rank, iteration, start_ns, end_ns
    FROM training_steps(getvariable('step_pattern'))
    WHERE end_ns IS NOT NULL
      AND scope_match(run_id, rank, getvariable('run'), getvariable('rank'))
      AND iteration_in(iteration, getvariable('iteration_from'), getvariable('iteration_to'))
),
keys AS (
    SELECT s.run_id, s.rank, r.rank_key, row_number() OVER (ORDER BY s.run_id, s.rank) AS grp
    FROM (SELECT DISTINCT run_id, rank FROM steps) s JOIN ranks r USING (run_id, rank)
),
windows AS (
    SELECT k.grp, s.iteration AS window_id, s.start_ns, s.end_ns
    FROM steps s JOIN keys k USING (run_id, rank)
),
activity AS (
    -- layers 2-6, and the steps themselves as layer 7 (other): the pieces tile every step
    SELECT k.grp, a.start_ns, a.end_ns, a.layer, CAST(NULL AS INTEGER) AS window_id
    FROM host_activity(getvariable('data_pattern'), getvariable('phases')) a
    JOIN keys k USING (run_id, rank)
    UNION ALL
    SELECT grp, start_ns, end_ns, 7, window_id FROM windows
),
clipped AS (
    SELECT tile_key(grp, window_id) AS grp, start_ns, end_ns, layer
    FROM intervals_clip(activity, windows)
),
pieces AS MATERIALIZED (
    -- flattened per (rank, step): tile_key's high half is the rank, its low half the step
    SELECT grp // 4294967296 AS grp, grp % 4294967296 - 2147483648 AS window_id,
           start_ns, end_ns, layer, row_number() OVER (ORDER BY grp, start_ns) AS piece_id
    FROM intervals_flatten(clipped)
),
cut_bins AS (
    -- the bins in which a piece starts or ends: few
    SELECT DISTINCT grp, bin_of(start_ns) AS bin FROM pieces
    UNION
    SELECT DISTINCT grp, bin_of(end_ns) FROM pieces
),
calls AS MATERIALIZED (
    -- each call, and whether it needs cutting: it spans bins, or a piece edge is in its bin
    SELECT k.grp, c.start_ns, c.end_ns, c.layer AS call_layer, bin_of(c.start_ns) AS first_bin,
           bin_of(c.start_ns) < bin_of(c.end_ns) OR b.grp IS NOT NULL AS cut
    FROM host_calls() c
    JOIN keys k USING (rank_key)
    LEFT JOIN cut_bins b ON b.grp = k.grp AND b.bin = bin_of(c.start_ns)
),
cut_calls AS (
    SELECT grp, start_ns, end_ns, call_layer FROM calls WHERE cut
),
piece_bins AS (
    SELECT * FROM time_bins(pieces)
),
summed AS (
    -- the millions of calls inside one bin that no piece edge cuts are summed per bin first
    SELECT grp, first_bin AS bin, call_layer, sum(end_ns - start_ns) AS ns
    FROM calls
    WHERE NOT cut
    GROUP BY ALL
),
covered AS (
    -- per piece, the time of the sync (0) and launching (1) calls inside it
    SELECT p.piece_id, s.call_layer, sum(s.ns) AS ns
    FROM summed s JOIN piece_bins p ON p.grp = s.grp AND p.bin = s.bin
    GROUP BY ALL
    UNION ALL
    SELECT p.piece_id, c.call_layer,
           sum(least(c.end_ns, p.end_ns) - greatest(c.start_ns, p.start_ns))
    FROM time_bins(cut_calls) c
    JOIN piece_bins p ON p.grp = c.grp AND p.bin = c.bin
    WHERE c.start_ns < p.end_ns AND c.end_ns > p.start_ns
      AND bin_of(greatest(c.start_ns, p.start_ns)) = c.bin
    GROUP BY ALL
),
layers AS (
    -- a piece's own layer keeps the time no call covers
    SELECT p.grp, p.window_id, p.layer, p.end_ns - p.start_ns - coalesce(sum(c.ns), 0) AS ns
    FROM pieces p LEFT JOIN covered c ON c.piece_id = p.piece_id
    GROUP BY p.grp, p.window_id, p.layer, p.piece_id, p.start_ns, p.end_ns
    UNION ALL
    SELECT p.grp, p.window_id, c.call_layer, c.ns
    FROM covered c JOIN pieces p ON p.piece_id = c.piece_id
),
totals AS (
    SELECT grp, window_id,
           sum(ns) FILTER (WHERE layer = 0) AS sync_wait_ns,
           sum(ns) FILTER (WHERE layer = 1) AS launching_ns,
           sum(ns) FILTER (WHERE layer = 2) AS data_loading_ns,
           sum(ns) FILTER (WHERE layer = 3) AS os_call_ns,
           sum(ns) FILTER (WHERE layer = 4) AS optimizer_ns,
           sum(ns) FILTER (WHERE layer = 5) AS backward_ns,
           sum(ns) FILTER (WHERE layer = 6) AS forward_ns,
           sum(ns) FILTER (WHERE layer = 7) AS other_ns
    FROM layers
    GROUP BY grp, window_id
),
split AS (
SELECT
    k.run_id,
    k.rank,
    w.window_id AS iteration,
    w.start_ns,                                -- the host step, UTC ns
    w.end_ns,
    w.end_ns - w.start_ns AS iteration_ns,
    CAST(coalesce(t.data_loading_ns, 0) AS BIGINT) AS data_loading_ns,
    CAST(coalesce(t.forward_ns, 0) AS BIGINT) AS forward_ns,
    CAST(coalesce(t.backward_ns, 0) AS BIGINT) AS backward_ns,
    CAST(coalesce(t.optimizer_ns, 0) AS BIGINT) AS optimizer_ns,
    CAST(coalesce(t.sync_wait_ns, 0) AS BIGINT) AS sync_wait_ns,
    CAST(coalesce(t.os_call_ns, 0) AS BIGINT) AS os_call_ns,
    CAST(coalesce(t.launching_ns, 0) AS BIGINT) AS launching_ns,
    CAST(coalesce(t.other_ns, 0) AS BIGINT) AS other_ns
FROM windows w
JOIN keys k ON k.grp = w.grp
LEFT JOIN totals t ON t.grp = w.grp AND t.window_id = w.window_id
),
with_ranks AS (
    SELECT * FROM split
    UNION ALL
    SELECT run_id, rank, NULL, min(start_ns), max(end_ns), sum(iteration_ns),
           sum(data_loading_ns), sum(forward_ns), sum(backward_ns), sum(optimizer_ns),
           sum(sync_wait_ns), sum(os_call_ns), sum(launching_ns), sum(other_ns)
    FROM split
    GROUP BY run_id, rank
)
SELECT
    run_id, rank, iteration, start_ns, end_ns,
    CAST(iteration_ns AS BIGINT) AS iteration_ns,
    CAST(data_loading_ns AS BIGINT) AS data_loading_ns,
    CAST(forward_ns AS BIGINT) AS forward_ns,
    CAST(backward_ns AS BIGINT) AS backward_ns,
    CAST(optimizer_ns AS BIGINT) AS optimizer_ns,
    CAST(sync_wait_ns AS BIGINT) AS sync_wait_ns,
    CAST(os_call_ns AS BIGINT) AS os_call_ns,
    CAST(launching_ns AS BIGINT) AS launching_ns,
    CAST(other_ns AS BIGINT) AS other_ns,
    100 * data_loading_ns / nullif(iteration_ns, 0) AS data_loading_pct,
    100 * forward_ns / nullif(iteration_ns, 0) AS forward_pct,
    100 * backward_ns / nullif(iteration_ns, 0) AS backward_pct,
    100 * optimizer_ns / nullif(iteration_ns, 0) AS optimizer_pct,
    100 * sync_wait_ns / nullif(iteration_ns, 0) AS sync_wait_pct,
    100 * os_call_ns / nullif(iteration_ns, 0) AS os_call_pct,
    100 * launching_ns / nullif(iteration_ns, 0) AS launching_pct,
    100 * other_ns / nullif(iteration_ns, 0) AS other_pct
FROM with_ranks
ORDER BY run_id, rank, iteration NULLS LAST;
