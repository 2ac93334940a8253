-- gpu_op_name as plain VARCHAR, for a warehouse of more than 65,536 distinct kernel names, whose
-- ENUM DuckDB would hold whole in memory at every open (sql/views/_gpu_op_name.sql).
DROP TYPE IF EXISTS gpu_op_name;
CREATE TYPE gpu_op_name AS VARCHAR;
