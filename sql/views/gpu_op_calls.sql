-- uses: gpu_ops
-- Each GPU op (kernel, memcpy, memset) with the CUDA API call that launched it: the first call
-- with the op's file, process and correlation id (a driver call under a runtime call shares its
-- id), whose start ingest keeps as gpu_ops.launch_ns. A join on that start finds it without a
-- GROUP BY over every call (1 s instead of ~25 s on 8 M ops). Ops whose launching call is not in
-- the trace (launched before the capture) are not here; gpu_op_launches keeps every op.
CREATE OR REPLACE VIEW gpu_op_calls AS
SELECT g.run_id, g.rank, g.rank_key, g.file_id, g.pid, g.device_id, g.stream_id, g.op, g.kind,
       g.name, g.start_ns, g.end_ns, g.dur_ns, g.correlation_id, g.iteration, g.alone,
       c.rowid AS api_id,            -- the call's row (this query only)
       c.name AS api_name,           -- cudaLaunchKernel, cuLaunchKernelEx, cudaMemcpyAsync, ...
       c.tid AS launch_tid,
       c.start_ns AS launch_ns,
       c.end_ns AS launch_end_ns,
       c.external_id AS api_external_id  -- Kineto: the CPU op it ran under
FROM gpu_ops g
JOIN store.cuda_api c
  ON c.file_id = g.file_id AND c.pid = g.pid AND c.correlation_id = g.correlation_id
 AND c.start_ns = g.launch_ns;
