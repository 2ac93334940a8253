-- 0022: store.nccl_ops keeps an all_to_allv's per-peer split sizes (issue 37): Kineto's "In split
-- size" / "Out split size" (PyTorch >= 2.2, on record_param_comms and copied to its kernel), the
-- dim-0 rows sent to / received from each member of the process group, in group order. NULL when
-- the trace records none (nsys, older PyTorch, equal splits: "[]"). Rows ingested before this
-- migration stay NULL until their source is ingested again.
ALTER TABLE store.nccl_ops ADD COLUMN in_splits BIGINT[];
ALTER TABLE store.nccl_ops ADD COLUMN out_splits BIGINT[];
