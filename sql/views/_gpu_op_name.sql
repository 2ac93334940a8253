-- uses: memcpy_label
-- gpu_op_name: an ENUM of every GPU op name in the warehouse (the kernel names of
-- store.kernel_names, the memcpy labels, '[CUDA memset]'), in text order. The kernels and
-- gpu_ops views give `name` this type, so a name travels through sorts, joins and Arrow results
-- as a small integer (a dictionary column in Arrow, polars and pandas) instead of ~200 bytes of
-- text: listing 8M ops sorted takes half the time and half the memory. Text order keeps ORDER BY,
-- min and max as on VARCHAR; comparisons, LIKE and string functions see the text; Parquet
-- stores it as a string.
-- An ENUM cannot grow, so this file runs again whenever the names may have changed: after
-- kernel_names_add.sql, as the second script of derive entry kernel_names (tracewh.store.derive).
-- DuckDB holds every value of an ENUM in memory from the moment it opens the file, outside its
-- memory limit (2.44 M distinct kernel names: 5.5 GB for `tracewh runs`). Past 65,536 names
-- (a template kernel per shape, say) derive makes gpu_op_name plain VARCHAR instead
-- (gpu_op_name_text.sql), and this file gives an ENUM of the memcpy and memset labels only
-- until then: names stay in store.kernel_names, and memory follows the question.
DROP TYPE IF EXISTS gpu_op_name;
CREATE TYPE gpu_op_name AS ENUM (
    SELECT name FROM (SELECT name FROM store.kernel_names
                      WHERE (SELECT count(*) FROM store.kernel_names) <= 65536
                      UNION SELECT memcpy_name(copy_kind)
                            FROM (SELECT DISTINCT copy_kind FROM store.memcpy)
                      UNION SELECT '[CUDA memset]')
    ORDER BY name);
