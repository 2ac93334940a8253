-- Event rows stored for one source (variable file_id): what store.sources.rows records.
SELECT (SELECT count(*) FROM store.kernels WHERE file_id = getvariable('file_id'))
     + (SELECT count(*) FROM store.memcpy WHERE file_id = getvariable('file_id'))
     + (SELECT count(*) FROM store.memset WHERE file_id = getvariable('file_id'))
     + (SELECT count(*) FROM store.cuda_api WHERE file_id = getvariable('file_id'))
     + (SELECT count(*) FROM store.cpu_ops WHERE file_id = getvariable('file_id'))
     + (SELECT count(*) FROM store.nvtx_ranges WHERE file_id = getvariable('file_id'))
     + (SELECT count(*) FROM store.nccl_ops WHERE file_id = getvariable('file_id'))
     + (SELECT count(*) FROM store.gpu_syncs WHERE file_id = getvariable('file_id'))
     + (SELECT count(*) FROM store.python_frames WHERE file_id = getvariable('file_id'))
     + (SELECT count(*) FROM store.os_calls WHERE file_id = getvariable('file_id'))
     + (SELECT count(*) FROM store.memory_events WHERE file_id = getvariable('file_id'))
     + (SELECT count(*) FROM store.samples WHERE file_id = getvariable('file_id'))
     + (SELECT count(*) FROM store.log_values WHERE file_id = getvariable('file_id'));
