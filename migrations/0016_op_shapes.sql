-- 0016: the shapes of the kernel-launching ops, read from cpu_ops.args once per source instead of
-- at every query (parsing the args of 8 M ops took ~100 CPU s; the metrics then read integers).
-- Only what the trace says is stored, never a performance model's answer: the models
-- (sql/lib/perf_models.sql) still run at query time, on each distinct shape once, so a changed
-- model changes every warehouse's answers at once. Filled per source by sql/op_shapes_add.sql
-- (from tracewh.ingest.derive); sources stored before this migration, and every source again
-- when that script changes, are filled when a warehouse is opened for writing
-- (tracewh.op_shapes.refresh, recorded in store.meta 'op_shapes_script').

-- Each distinct (op name, "Input Dims", "Input type", "Concrete Inputs"), the three as the JSON
-- text of the trace (NULL: not recorded). Shared by the sources; shape_id is this warehouse's.
CREATE TABLE store.op_shapes (
    shape_id         BIGINT NOT NULL,
    name             VARCHAR NOT NULL,
    input_dims       VARCHAR,
    input_types      VARCHAR,
    concrete_inputs  VARCHAR
);

-- One row per CPU op with "Input Dims" whose External id a kernel of its source carries.
CREATE TABLE store.shaped_ops (
    run_id       VARCHAR NOT NULL,
    rank         INTEGER NOT NULL,
    file_id      BIGINT NOT NULL,
    external_id  BIGINT NOT NULL,
    op_no        BIGINT NOT NULL,   -- numbers the source's rows: two ops may share an External id
    shape_id     BIGINT NOT NULL
);

-- One row per source with CPU ops: were shapes recorded (record_shapes=True)?
CREATE TABLE store.shape_sources (
    run_id           VARCHAR NOT NULL,
    rank             INTEGER NOT NULL,
    file_id          BIGINT NOT NULL,
    shapes_recorded  BOOLEAN NOT NULL
);
