-- Remove every row of one source (variable file_id) from the stored tables.
DELETE FROM store.kernels WHERE file_id = getvariable('file_id');
DELETE FROM store.memcpy WHERE file_id = getvariable('file_id');
DELETE FROM store.memset WHERE file_id = getvariable('file_id');
DELETE FROM store.cuda_api WHERE file_id = getvariable('file_id');
DELETE FROM store.cpu_ops WHERE file_id = getvariable('file_id');
DELETE FROM store.nvtx_ranges WHERE file_id = getvariable('file_id');
DELETE FROM store.nccl_ops WHERE file_id = getvariable('file_id');
DELETE FROM store.gpu_syncs WHERE file_id = getvariable('file_id');
DELETE FROM store.python_frames WHERE file_id = getvariable('file_id');
DELETE FROM store.os_calls WHERE file_id = getvariable('file_id');
DELETE FROM store.devices WHERE file_id = getvariable('file_id');
DELETE FROM store.memory_events WHERE file_id = getvariable('file_id');
DELETE FROM store.shaped_ops WHERE file_id = getvariable('file_id');
DELETE FROM store.shape_sources WHERE file_id = getvariable('file_id');
DELETE FROM store.samples WHERE file_id = getvariable('file_id');
DELETE FROM store.log_values WHERE file_id = getvariable('file_id');
DELETE FROM store.run_params WHERE file_id = getvariable('file_id');
DELETE FROM store.ranks WHERE file_id = getvariable('file_id');
DELETE FROM store.sources WHERE file_id = getvariable('file_id');
-- Shapes no source has any more go too.
DELETE FROM store.op_shapes WHERE shape_id NOT IN (SELECT shape_id FROM store.shaped_ops);
-- A run left without sources goes too.
DELETE FROM store.runs WHERE run_id NOT IN (SELECT run_id FROM store.sources);
