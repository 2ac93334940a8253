-- uses: cpu_ops, cuda_api, host_names, iterations, nvtx_ranges, os_calls, phase_ranges, scope
-- What a rank's host threads do, as the host-side metrics (sync_stalls, host_breakdown,
-- idle_gaps' causes) name it.

-- _api_name_class: the CUDA API names of the warehouse that api_class names, with their class
-- (the few distinct names are matched, not the millions of calls).
CREATE OR REPLACE MACRO _api_name_class() AS TABLE
WITH __names AS MATERIALIZED (
    -- materialized: else the optimizer pushes the regular expressions below the DISTINCT, onto
    -- every call (13 s instead of 0.1 s on 8 M calls)
    SELECT DISTINCT name FROM cuda_api
)
SELECT name, class FROM (SELECT name, api_class(name) AS class FROM __names)
WHERE class IS NOT NULL;

-- blocking_calls: the host calls that wait for the GPU, as the `nsys analyze` rules flag them:
--   sync api         cuda_api_sync: cudaDeviceSynchronize, cudaStreamSynchronize,
--                    cudaEventSynchronize, cuCtxSynchronize (and the cu / hip spellings)
--   sync memcpy      cuda_memcpy_sync: a copy launched by a call without Async in its name
--                    (cudaMemcpy, cuMemcpyDtoH, ...): the host waits for the copy
--   sync memset      cuda_memset_sync: a memset launched by a call without Async
--   pageable memcpy  cuda_memcpy_async: an Async copy to or from pageable host memory, which
--                    the driver stages through a pinned buffer while the host waits
-- One row per call; a driver call inside a runtime call is left out. The rule is stored with
-- each call at ingest (cuda_api.blocking_rule, sql/cuda_api_roles.sql).
-- @column run_id, rank, file_id, pid, tid, start_ns, end_ns, name, iteration  of the call
-- @column rule  VARCHAR  sync api | sync memcpy | sync memset | pageable memcpy
CREATE OR REPLACE MACRO blocking_calls() AS TABLE
SELECT run_id, rank, file_id, pid, tid, start_ns, end_ns, name, iteration, blocking_rule AS rule
FROM cuda_api
WHERE blocking_rule IS NOT NULL;

-- main_threads: each rank's launching thread: the thread of its steps (ProfilerStep#N: the
-- training loop, where the data loader, the forward pass and the optimizer run), else the host
-- thread with the most CUDA API calls (ties: the lowest pid, then tid). Not simply the most
-- calls: PyTorch's autograd thread launches the backward pass, often more kernels than the
-- loop's thread. Ranks with neither have none.
-- @column run_id, rank, file_id, pid, tid
CREATE OR REPLACE MACRO main_threads() AS TABLE
WITH __counted AS (
    SELECT any_value(run_id) AS run_id, rank, file_id, pid, tid, count(*) AS n, 0 AS source
    FROM iterations GROUP BY file_id, rank, pid, tid
    UNION ALL
    SELECT any_value(run_id), rank, file_id, pid, tid, count(*), 1
    FROM cuda_api GROUP BY file_id, rank, pid, tid  -- integers group fastest
)
SELECT run_id, rank, arg_max(file_id, key) AS file_id, arg_max(pid, key) AS pid,
       arg_max(tid, key) AS tid
FROM (SELECT *, (-source, n, -coalesce(pid, 0), -coalesce(tid, 0)) AS key FROM __counted)
GROUP BY run_id, rank;

-- host_calls: the CUDA API calls of each rank's launching thread (main_threads) that wait for
-- the GPU (layer 0: blocking_calls' rules) or enqueue GPU work (layer 1: the other launch,
-- memcpy and memset calls). Calls of one thread do not overlap (driver calls inside a runtime
-- call are left out: cuda_api.in_runtime_call), so their durations add up: the metrics
-- sum them instead of flattening millions. The rank is given by its rank_key only (no text
-- column on millions of rows).
-- @column rank_key, start_ns, end_ns
-- @column layer  INTEGER  0 sync wait, 1 launching
CREATE OR REPLACE MACRO host_calls() AS TABLE
WITH main AS (SELECT * FROM main_threads())
SELECT rank_key(a.file_id, a.rank) AS rank_key, a.start_ns, a.end_ns,
       CASE WHEN a.blocking_rule IS NULL THEN 1 ELSE 0 END AS layer
FROM cuda_api a
JOIN main m ON m.file_id = a.file_id AND m.pid = a.pid AND m.tid = a.tid
SEMI JOIN _api_name_class() n ON n.name = a.name
WHERE a.in_runtime_call IS NOT TRUE;

-- host_activity: the rest of what each rank's launching thread does, as layered intervals for
-- intervals_flatten; with host_calls' layers 0 and 1 above them, the most specific first (at
-- each instant the lowest layer in flight names the time):
--   2 data loading  CPU ops and NVTX ranges / annotations on the thread matching data_pattern
--   3 os call       OS runtime calls on the thread (os_calls: I/O, polls, locks)
--   4 optimizer, 5 backward, 6 forward   the phase ranges (phase_pattern, phase_kind) of the
--                   rank on any of its threads: autograd runs backward on its own thread while
--                   the launching thread waits in loss.backward()
-- A sync call inside backward is sync wait; the read() calls of a data loader are data loading.
-- With the default patterns the ranges' stored facts are read (data_loading; phase through
-- phase_ranges: sql/nvtx_range_facts.sql), not regular expressions over millions of names.
-- @arg want_data    any  data_loader_pattern's parameter
-- @arg want_phases  any  phase_pattern's parameter
-- @column run_id, rank, start_ns, end_ns
-- @column layer  INTEGER  2-6 as above
CREATE OR REPLACE MACRO host_activity(want_data, want_phases) AS TABLE
WITH main AS (SELECT * FROM main_threads())
SELECT r.run_id, r.rank, r.start_ns, r.end_ns, 2 AS layer
FROM (SELECT run_id, rank, file_id, pid, tid, start_ns, end_ns FROM nvtx_ranges
      WHERE kind IN ('push_pop', 'start_end', 'annotation') AND end_ns IS NOT NULL
        AND CASE WHEN want_data IS NULL THEN data_loading IS TRUE
                 ELSE regexp_matches(coalesce(name, ''), data_loader_pattern(want_data)) END
      UNION ALL
      SELECT run_id, rank, file_id, pid, tid, start_ns, end_ns FROM cpu_ops
      WHERE regexp_matches(coalesce(name, ''), data_loader_pattern(want_data))) r
SEMI JOIN main m ON m.file_id = r.file_id AND m.pid = r.pid AND m.tid = r.tid
UNION ALL
SELECT o.run_id, o.rank, o.start_ns, o.end_ns, 3
FROM os_calls o
SEMI JOIN main m ON m.file_id = o.file_id AND m.pid = o.pid AND m.tid = o.tid
UNION ALL
SELECT run_id, rank, start_ns, end_ns,
       CASE phase WHEN 'optimizer' THEN 4 WHEN 'backward' THEN 5 ELSE 6 END
FROM phase_ranges(want_phases);

-- time_bins: each interval of a table (grp, start_ns, end_ns, ...) once per 2^20 ns (~1 ms) bin
-- of its group's timeline it touches, with that bin: two sets of intervals then meet by an
-- equi-join on (grp, bin) instead of a range join. A pair that overlaps meets in every bin
-- both touch: count it once, in bin_of(greatest(a.start_ns, b.start_ns)).
-- @column bin  BIGINT
CREATE OR REPLACE MACRO bin_of(t) AS t // 1048576;
CREATE OR REPLACE MACRO time_bins(intervals) AS TABLE
SELECT *, bin_of(start_ns) AS bin FROM query_table(intervals)
UNION ALL
SELECT *, unnest(range(bin_of(start_ns) + 1, bin_of(end_ns) + 1)) AS bin
FROM query_table(intervals)
WHERE bin_of(end_ns) > bin_of(start_ns);

-- bin_keys: the keys of a semi join that leaves out, before a binned join against
-- `intervals`, the rows of the other side that cannot meet one of them: with key
-- bin_key(start_ns, end_ns, sparse), a row that starts in a bin the intervals touch or reaches
-- into a later bin (-1) is kept (exact by time_bins' rule). When the intervals touch a
-- quarter or more of the bins between their group's first and last (a GPU idle now and then
-- all along), such a semi join would keep most rows at the cost of its hash table: sparse is
-- then false, and every row of a group with intervals has key -1.
-- @column grp, bin  BIGINT
-- @column sparse    BOOLEAN, the same on every row (a caller joins any_value(sparse) to the
--                   other side's rows: a subquery in the join condition would not transpile)
CREATE OR REPLACE MACRO bin_keys(intervals) AS TABLE
WITH __bk_bins AS MATERIALIZED (
    SELECT DISTINCT grp, bin FROM time_bins(intervals)
),
__bk_sparse AS (
    SELECT coalesce(sum(bins) < sum(span) / 4, false) AS sparse
    FROM (SELECT grp, count(*) AS bins, max(bin) - min(bin) + 1 AS span
          FROM __bk_bins GROUP BY grp)
)
SELECT b.grp, b.bin, s.sparse FROM __bk_bins b, __bk_sparse s WHERE s.sparse
UNION ALL
SELECT DISTINCT b.grp, -1, s.sparse FROM __bk_bins b, __bk_sparse s;
CREATE OR REPLACE MACRO bin_key(start_ns, end_ns, sparse) AS
    CASE WHEN NOT sparse OR bin_of(end_ns) > bin_of(start_ns) THEN -1 ELSE bin_of(start_ns) END;
