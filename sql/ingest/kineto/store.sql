-- The writer's step for one Kineto trace: the rows 10..50 staged in the temp tables
-- _kineto_<stored table> go into the stored tables, inside the file's transaction, under the
-- file_id and rank the writer gave the file. Variables: run_id, rank, rank_source, file_id.

INSERT INTO store.cuda_api BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('rank') AS rank,
       getvariable('file_id') AS file_id, * FROM _kineto_cuda_api;

-- ids stable across `tracewh remove` (migrations/0015): the file's id and the op's number; the
-- tree from 22_cpu_op_tree.sql (migrations/0017)
INSERT INTO store.cpu_ops BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('rank') AS rank,
       getvariable('file_id') AS file_id, getvariable('file_id') * 4294967296 + op_no AS op_id,
       getvariable('file_id') * 4294967296 + parent_no AS parent_id,
       * EXCLUDE (op_no, parent_no)
FROM _kineto_cpu_ops;

INSERT INTO store.nvtx_ranges BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('rank') AS rank,
       getvariable('file_id') AS file_id, * FROM _kineto_nvtx_ranges;

INSERT INTO store.kernels BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('rank') AS rank,
       getvariable('file_id') AS file_id, * FROM _kineto_kernels;

INSERT INTO store.memcpy BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('rank') AS rank,
       getvariable('file_id') AS file_id, * FROM _kineto_memcpy;

INSERT INTO store.memset BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('rank') AS rank,
       getvariable('file_id') AS file_id, * FROM _kineto_memset;

INSERT INTO store.nccl_ops BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('rank') AS rank,
       getvariable('file_id') AS file_id, * FROM _kineto_nccl_ops;

INSERT INTO store.gpu_syncs BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('rank') AS rank,
       getvariable('file_id') AS file_id, * FROM _kineto_gpu_syncs;

INSERT INTO store.python_frames BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('rank') AS rank,
       getvariable('file_id') AS file_id, * FROM _kineto_python_frames;

INSERT INTO store.ranks BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('rank') AS rank,
       getvariable('file_id') AS file_id, getvariable('rank_source') AS rank_source,
       * FROM _kineto_ranks;

INSERT INTO store.devices BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('rank') AS rank,
       getvariable('file_id') AS file_id, * FROM _kineto_devices;

INSERT INTO store.memory_events BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('rank') AS rank,
       getvariable('file_id') AS file_id, getvariable('file_id') * 4294967296 + cpu_op_no AS cpu_op_id,
       * EXCLUDE (file_key, cpu_op_no) FROM _kineto_memory_events;
