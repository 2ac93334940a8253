-- 0004: each distinct kernel name once, with its kind (DESIGN section 6). Classifying a name
-- costs a few regular expressions; doing it per distinct name instead of per kernel row keeps
-- the kernels and gpu_ops views fast on millions of rows. Filled at ingest, and rebuilt
-- whenever a tracewh with different patterns opens the warehouse (warehouse.install_views).
CREATE TABLE store.kernel_names (
    name VARCHAR NOT NULL,
    kind VARCHAR NOT NULL
);
