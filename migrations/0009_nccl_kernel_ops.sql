-- 0009: store.nccl_ops.kernel_ops, the operations that share the row's kernel. An nsys kernel
-- may run several (a grouped SendRecv kernel is each Send and Recv of its NCCL group), and each
-- row carries the kernel's full times, so summing their durations counted that kernel once per
-- operation (4x on the shared nsys-ai/mfu_2gpu_before export). Kineto stores one row per kernel:
-- the default. Rows stored before are counted here: one kernel = file, process, stream, times.
ALTER TABLE store.nccl_ops ADD COLUMN kernel_ops INTEGER DEFAULT 1;
UPDATE store.nccl_ops n SET kernel_ops = k.ops
FROM (SELECT file_id, pid, stream_id, start_ns, end_ns, count(*) AS ops
      FROM store.nccl_ops GROUP BY ALL HAVING count(*) > 1) k
WHERE n.file_id = k.file_id AND n.pid IS NOT DISTINCT FROM k.pid
  AND n.stream_id IS NOT DISTINCT FROM k.stream_id AND n.start_ns = k.start_ns
  AND n.end_ns = k.end_ns;
