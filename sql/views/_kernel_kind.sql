-- uses: none
-- Kernel kinds (DESIGN section 6): the patterns of store.kernel_kinds, in precedence order:
--   1. the user's patterns (`tracewh kinds load FILE`), in their file's order;
--   2. tracewh's (sql/kernel_kinds.csv, reloaded when a tracewh with other patterns opens the
--      warehouse), in that file's order;
--   the first pattern that matches the name gives the kind; no match: compute; no name: other.
-- Ingest classifies each distinct name once into store.kernel_names, and changed patterns
-- classify every stored name again, so the kernels and gpu_ops views read kinds by a join.
-- This is the reference definition, plain SQL; tracewh then makes the macro again as a CASE of
-- the same patterns written as constants, which answers the same 200x faster
-- (tracewh.kinds.compile_kernel_kind, run whenever the patterns change).
CREATE OR REPLACE MACRO kernel_kind(name) AS
    CASE
        WHEN name IS NULL OR name = '' THEN 'other'
        ELSE coalesce((SELECT p.kind FROM store.kernel_kinds p
                       WHERE regexp_matches(name, p.pattern)
                       ORDER BY p.origin <> 'user', p.position LIMIT 1), 'compute')
    END;
