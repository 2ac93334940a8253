-- uses: op_shapes
-- One row per op that launched GPU work (the op around the launching call, launch_cpu_ops)
-- and has a performance model (perf_model, sql/lib/perf_models.sql), with the shapes it was called
-- with and what the model gives. Ops of traces recorded without shapes have no rows. The shapes
-- are stored at ingest (store.shaped_ops, sql/op_shapes_add.sql); the models run at query time
-- on the distinct shapes (op_shapes).
CREATE OR REPLACE VIEW perf_ops AS
SELECT
    o.run_id,
    o.rank,
    o.file_id,
    o.op_id,                                           -- cpu_ops.op_id = gpu_op_launches.cpu_op_id
    o.external_id,                                     -- the op's External id
    o.op_no,                                           -- tells apart ops of a source with one External id
    o.shape_id,                                        -- op_shapes
    s.name,                                            -- aten::addmm, ...
    s.input_dims,                                      -- "Input Dims"
    s.input_types,                                     -- "Input type"
    s.concrete_inputs,                                 -- "Concrete Inputs"
    s.family,                                          -- GEMM, CONV_fwd, SDPA_fwd, ...
    s.dtype,                                           -- fp32, bf16, fp16, fp8, fp64 (NULL: no peak applies)
    s.flops,                                           -- NULL: the model gives none for these shapes
    s.bytes                                            -- moved to and from device memory
FROM store.shaped_ops o
JOIN op_shapes s USING (shape_id)
WHERE s.family IS NOT NULL;  -- NULL: no model for this op name
