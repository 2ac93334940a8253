-- 0021: store.shaped_ops keeps the CPU op itself (cpu_ops.op_id), and holds the ops that
-- launched GPU work by the launch link (launch_cpu_ops: the op around the launching call), not
-- only those whose External id a kernel carries: traces whose kernels carry the correlation id
-- there (PARAM DLRM, the HTA samples) had no shaped op (issue 37). The derive entry op_shapes
-- (sql/op_shapes_add.sql) fills the rows again: its script changed.
ALTER TABLE store.shaped_ops ADD COLUMN op_id BIGINT;
ALTER TABLE store.shaped_ops ALTER COLUMN external_id DROP NOT NULL;
DELETE FROM store.meta WHERE key = 'derive:op_shapes';
