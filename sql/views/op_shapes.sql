-- uses: perf_models
-- One row per distinct (op name, Input Dims, Input type, Concrete Inputs) of the kernel-launching
-- ops, stored once (store.op_shapes, migration 0016, filled by sql/op_shapes_add.sql) so that no
-- query parses cpu_ops.args, with what the performance models (sql/lib/perf_models.sql) give,
-- evaluated here at query time on each distinct shape once.
CREATE OR REPLACE VIEW op_shapes AS
WITH parsed AS MATERIALIZED (  -- perf_model reads each field many times
    SELECT shape_id, name,
           perf_shapes_json(input_dims, input_types, concrete_inputs) AS s
    FROM store.op_shapes
),
modelled AS MATERIALIZED (
    SELECT *, perf_model(name, s.dims, s.types, s.concrete) AS m FROM parsed
)
SELECT
    shape_id,                                          -- this warehouse's: join on it in one query
    name,                                              -- aten::addmm, ...
    CAST(s.dims AS VARCHAR) AS input_dims,             -- "Input Dims"
    CAST(s.types AS VARCHAR) AS input_types,           -- "Input type"
    CAST(s.concrete AS VARCHAR) AS concrete_inputs,    -- "Concrete Inputs"
    m.family AS family,                                -- GEMM, CONV_fwd, SDPA_fwd, ... (NULL: no model)
    m.dtype AS dtype,                                  -- fp32, bf16, fp16, fp8, fp64 (NULL: no peak applies)
    m.flops AS flops,                                  -- NULL: the model gives none for these shapes
    m.bytes AS bytes                                   -- moved to and from device memory
FROM modelled;

