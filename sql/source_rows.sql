-- Event rows stored for each source just written (variables first_file_id, last_file_id): what
-- store.sources.rows records.
SELECT file_id, count(*) AS rows
FROM (SELECT file_id FROM store.kernels UNION ALL SELECT file_id FROM store.memcpy
      UNION ALL SELECT file_id FROM store.memset UNION ALL SELECT file_id FROM store.cuda_api
      UNION ALL SELECT file_id FROM store.cpu_ops UNION ALL SELECT file_id FROM store.nvtx_ranges
      UNION ALL SELECT file_id FROM store.nccl_ops UNION ALL SELECT file_id FROM store.gpu_syncs
      UNION ALL SELECT file_id FROM store.python_frames
      UNION ALL SELECT file_id FROM store.os_calls UNION ALL SELECT file_id FROM store.memory_events
      UNION ALL SELECT file_id FROM store.samples UNION ALL SELECT file_id FROM store.log_values)
WHERE file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id')
GROUP BY file_id;
