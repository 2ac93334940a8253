-- uses: kernels, perf_ops, scope
-- The kernels of modelled ops: a kernel's External id names the innermost CPU op around its
-- launch (Kineto); the ops with a performance model are perf_ops. What op_efficiency and
-- roofline put at their FLOPs and bytes.

-- op_kernels: each kernel launched by a modelled op, in the scope asked for (NULL: all).
-- @arg want_run             any  the run asked for (NULL: every run)
-- @arg want_rank            any  the rank asked for (NULL: every rank)
-- @arg want_iteration_from  any  the first iteration kept (NULL: from the first)
-- @arg want_iteration_to    any  the last iteration kept (NULL: to the last)
-- @arg want_start_ns        any  UTC window start, ns (NULL: open)
-- @arg want_end_ns          any  UTC window end, ns (NULL: open)
-- @ret TABLE(run_id VARCHAR, rank INTEGER, file_id, shape_id, op_no, external_id, dur_ns BIGINT)
CREATE OR REPLACE MACRO op_kernels(want_run, want_rank, want_iteration_from, want_iteration_to,
                                   want_start_ns, want_end_ns) AS TABLE
    SELECT o.run_id, o.rank, o.file_id, o.shape_id, o.op_no, o.external_id, k.dur_ns
    FROM kernels k
    JOIN perf_ops o ON o.file_id = k.file_id AND o.external_id = k.external_id
    WHERE k.external_id IS NOT NULL
      AND scope_match(k.run_id, k.rank, want_run, want_rank)
      AND iteration_in(k.iteration, want_iteration_from, want_iteration_to)
      AND window_overlaps(k.start_ns, k.end_ns, want_start_ns, want_end_ns);
