-- uses: cpu_ops, kernels, perf_models
-- One row per op that launched GPU kernels (kernels.external_id = cpu_ops.external_id, Kineto)
-- and has a performance model (perf_model, sql/lib/perf_models.sql), with the shapes it was called with
-- and what the model gives. Ops of traces recorded without shapes have no rows. A view, so the
-- models' large expression is bound once (0.16 CPU s on the 8 M GPU-op bench; a table macro
-- took 0.56) and the Parquet lake holds the results, which Spark then reads as a table.
CREATE OR REPLACE VIEW perf_ops AS
WITH launchers AS (
    SELECT DISTINCT run_id, rank, file_id, external_id FROM kernels WHERE external_id IS NOT NULL
),
shaped AS MATERIALIZED (  -- args parsed once: perf_model reads each field many times
    SELECT o.run_id, o.rank, o.file_id, o.external_id, o.name, perf_shapes(o.args) AS s
    FROM cpu_ops o
    SEMI JOIN launchers l
        ON l.run_id = o.run_id AND l.rank = o.rank AND l.file_id = o.file_id
       AND l.external_id = o.external_id
    WHERE o.args LIKE '%"Input Dims"%'
),
modelled AS MATERIALIZED (
    SELECT *, perf_model(name, s.dims, s.types, s.concrete) AS m FROM shaped
)
SELECT
    run_id,
    rank,
    file_id,
    external_id,                                       -- the op's (and its kernels') External id
    name,                                              -- aten::addmm, ...
    CAST(s.dims AS VARCHAR) AS input_dims,             -- "Input Dims"
    CAST(s.types AS VARCHAR) AS input_types,           -- "Input type"
    CAST(s.concrete AS VARCHAR) AS concrete_inputs,    -- "Concrete Inputs"
    m.family AS family,                                -- GEMM, CONV_fwd, SDPA_fwd, ...
    m.dtype AS dtype,                                  -- fp32, bf16, fp16, fp8, fp64 (NULL: no peak applies)
    m.flops AS flops,                                  -- NULL: the model gives none for these shapes
    m.bytes AS bytes                                   -- moved to and from device memory
FROM modelled
WHERE m IS NOT NULL;  -- NULL: no model for this op name
