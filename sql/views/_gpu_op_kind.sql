-- uses: none
-- The fixed vocabularies of gpu_ops as ENUMs, in text order (so ORDER BY, min and max give what
-- they give on VARCHAR): `op` and `kind`, also the kernels view's kind. Sorting or listing
-- millions of ops then carries a byte per value instead of a string (gpu_trace over 8M ops:
-- 4.0 -> 3.3 CPU s); comparisons with text and string functions work as on VARCHAR, and
-- Parquet stores strings. kernel_kind() returns one of the kernel kinds.
DROP TYPE IF EXISTS gpu_op_type;
CREATE TYPE gpu_op_type AS ENUM ('kernel', 'memcpy', 'memset');
DROP TYPE IF EXISTS gpu_op_kind;
CREATE TYPE gpu_op_kind AS ENUM ('comm', 'compute', 'memcpy', 'memset', 'other', 'sync');
