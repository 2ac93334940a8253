-- check: kernel_names
-- summary: Every kernel name stored is classified in store.kernel_names, which ingest keeps
--          complete (sql/kernel_names_add.sql) and from which the ENUM gpu_op_name of the
--          kernels and gpu_ops views is made: a name missing there makes those views fail.
-- returns: one row per source whose kernels carry names that store.kernel_names lacks.
SELECT
    k.file_id,
    count(DISTINCT k.name) AS unknown_names,
    format('source {} has {} kernel name(s) missing from store.kernel_names (e.g. {}), so the '
           'kernels and gpu_ops views cannot name them - rows written behind tracewh''s back? '
           're-ingest that source with --replace', k.file_id, count(DISTINCT k.name),
           left(min(k.name), 60)) AS problem
FROM store.kernels k
ANTI JOIN store.kernel_names n USING (name)
GROUP BY k.file_id
ORDER BY k.file_id;
