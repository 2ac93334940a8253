-- uses: none
-- Performance models of PyTorch operators (issue 19), version 1: FLOPs and bytes moved of one
-- op instance from the shapes Kineto records with record_shapes=True (cpu_ops.args: "Input Dims",
-- "Input type", "Concrete Inputs"). The formulas follow TraceLens' PerfModel (AMD-AGI/TraceLens,
-- TraceLens/PerfModel/perf_model.py, MIT) so that the numbers compare; where they differ on
-- purpose, the macro says so. Lists are 1-based here (TraceLens' index i is i + 1).
--   perf_bpe(type)            bytes per element of a PyTorch type name ('c10::BFloat16' -> 2)
--   perf_dtype(type)          the peak-table data type: fp64, fp32, fp16, bf16, fp8 (else NULL)
--   perf_numel(dims)          elements of a tensor of those dims (a scalar's [] -> 1)
--   perf_shapes(args)         STRUCT(dims BIGINT[][], types VARCHAR[], concrete VARCHAR[]) of an
--                             op's args JSON; NULL fields when the trace has no shapes
--   perf_shapes_json(dims, types, concrete)
--                             the same from the three fields' JSON (store.op_shapes)
--   perf_model(name, dims, types, concrete)
--                             STRUCT(family, flops, bytes, dtype) of one op; NULL: no model
-- A caller parses the args once (perf_shapes, in a CTE) and passes the columns to perf_model;
-- the views parse each distinct shape once (op_shapes).
-- Families: GEMM, CONV_fwd, CONV_bwd, SDPA_fwd, SDPA_bwd, elementwise_unary, elementwise_binary,
-- reduce, norm_fwd, norm_bwd, softmax_fwd, softmax_bwd, embedding.
-- Every macro is plain SQL over its arguments: no table is read.

CREATE OR REPLACE MACRO perf_bpe(t) AS
    CASE t
        WHEN 'double' THEN 8 WHEN 'long int' THEN 8 WHEN 'c10::complex<float>' THEN 8
        WHEN 'float' THEN 4 WHEN 'int' THEN 4
        WHEN 'c10::Half' THEN 2 WHEN 'c10::BFloat16' THEN 2 WHEN 'short int' THEN 2
        WHEN 'c10::Float8_e4m3fn' THEN 1 WHEN 'c10::Float8_e5m2' THEN 1
        WHEN 'c10::Float8_e4m3fnuz' THEN 1 WHEN 'c10::Float8_e5m2fnuz' THEN 1
        WHEN 'signed char' THEN 1 WHEN 'unsigned char' THEN 1 WHEN 'bool' THEN 1
    END;

CREATE OR REPLACE MACRO perf_dtype(t) AS
    CASE
        WHEN t = 'double' THEN 'fp64'
        WHEN t = 'float' THEN 'fp32'
        WHEN t = 'c10::Half' THEN 'fp16'
        WHEN t = 'c10::BFloat16' THEN 'bf16'
        WHEN t LIKE 'c10::Float8%' THEN 'fp8'
    END;

CREATE OR REPLACE MACRO perf_numel(dims) AS
    coalesce(list_aggregate(CAST(dims AS DOUBLE[]), 'product'), 1.0);

-- one spatial parameter of a convolution: a one-element list applies to every dimension
CREATE OR REPLACE MACRO _perf_at(l, i) AS CASE WHEN len(l) = 1 THEN l[1] ELSE l[i] END;

-- output size of spatial dimension i of a convolution: floor((x + 2p - dil (k - 1) - 1) / s) + 1
-- (PyTorch's, and TraceLens' CONV.get_conv_out_dim); transposed: (x - 1) s - 2p + dil (k - 1)
-- + out_pad + 1; 1 past the input's spatial dimensions. x, w: input and weight dims.
CREATE OR REPLACE MACRO _perf_conv_out(x, w, i, stride, pad, dil, transposed, out_pad) AS
    CASE WHEN len(x) < i + 2 THEN 1
         WHEN transposed
         THEN (x[i + 2] - 1) * _perf_at(stride, i) - 2 * _perf_at(pad, i)
              + _perf_at(dil, i) * (w[i + 2] - 1) + coalesce(_perf_at(out_pad, i), 0) + 1
         ELSE floor((x[i + 2] + 2 * _perf_at(pad, i) - _perf_at(dil, i) * (w[i + 2] - 1) - 1)
                    / _perf_at(stride, i)) + 1
    END;

-- elements of a convolution's output: batch x out channels x each spatial size (1 to 3 dims)
CREATE OR REPLACE MACRO _perf_conv_out_numel(x, w, stride, pad, dil, transposed, out_pad) AS
    CAST(x[1] AS DOUBLE) * CASE WHEN transposed THEN w[2] ELSE w[1] END
    * _perf_conv_out(x, w, 1, stride, pad, dil, transposed, out_pad)
    * _perf_conv_out(x, w, 2, stride, pad, dil, transposed, out_pad)
    * _perf_conv_out(x, w, 3, stride, pad, dil, transposed, out_pad);

-- convolution (TraceLens CONV, after torch.utils.flop_counter): 2 x out elements x (c_in /
-- groups x kernel) [+ out elements for the bias]; bytes: input, weight, bias (out channels),
-- output. d: input, weight, [bias] dims; t: their types.
CREATE OR REPLACE MACRO _perf_conv(d, t, stride, pad, dil, transposed, out_pad) AS
    {'family': 'CONV_fwd',
     'flops': _perf_conv_out_numel(d[1], d[2], stride, pad, dil, transposed, out_pad)
              * (2.0 * perf_numel(list_slice(d[2], 2, len(d[2]))) + CASE WHEN len(d[3]) > 0 THEN 1 ELSE 0 END),
     'bytes': (perf_numel(d[1]) + perf_numel(d[2]) + CASE WHEN len(d[3]) > 0 THEN d[2][1] ELSE 0 END
               + _perf_conv_out_numel(d[1], d[2], stride, pad, dil, transposed, out_pad)) * perf_bpe(t[1]),
     'dtype': perf_dtype(t[1])};

-- GEMM (TraceLens GEMM.flops_func / bytes_func): b batches of an (m x k) by (k x n) product,
-- flops = b (2mnk + [bias] mn), bytes = b (mk + kn + mn + [bias] n) x bpe; the bias is taken as
-- 1 x n and the output has the inputs' type (TraceLens' assumptions), except _scaled_mm: fp8
-- inputs write 2-byte outputs.
CREATE OR REPLACE MACRO _perf_gemm(b, m, n, k, bias, bpe, out_bpe, t) AS
    {'family': 'GEMM',
     'flops': CAST(b AS DOUBLE) * (2.0 * m * n * k + CASE WHEN bias THEN 1.0 * m * n ELSE 0 END),
     'bytes': CAST(b AS DOUBLE) * ((1.0 * m * k + 1.0 * k * n) * bpe + 1.0 * m * n * out_bpe
                                    + CASE WHEN bias THEN 1.0 * n * bpe ELSE 0 END),
     'dtype': perf_dtype(t)};

-- SDPA (TraceLens SDPA.flops_func / bytes_func, after flash-attention's benchmark): per head,
-- QK^T and PV are 2 Nq Nkv d each; softmax is left out; causal halves the FLOPs (only when
-- Nq = Nkv: TraceLens raises otherwise, here the FLOPs are NULL). Bytes: read Q, K, V, write O.
-- Backward (flops_bwd_func): dV, dP, dQ, dK products (+ the QK^T recompute of flash kernels) and
-- the GQA head reduction; bytes read Q, K, V, dO and write dQ, dK, dV.
CREATE OR REPLACE MACRO _perf_sdpa(backward, flash, b, nq, hq, nkv, hkv, dqk, dv, causal, t) AS
    {'family': CASE WHEN backward THEN 'SDPA_bwd' ELSE 'SDPA_fwd' END,
     'flops': CASE WHEN causal AND nq <> nkv THEN NULL ELSE
                  CASE WHEN backward
                       THEN CASE WHEN flash THEN 2.0 * b * hq * nq * nkv * dqk ELSE 0 END
                            + 2.0 * b * hq * nkv * nq * dv + 1.0 * b * nkv * dv * (hq // hkv - 1)
                            + 2.0 * b * hq * nq * nkv * dv
                            + 2.0 * b * hq * nq * nkv * dqk
                            + 2.0 * b * hq * nkv * nq * dqk + 1.0 * b * nkv * dqk * (hq // hkv - 1)
                       ELSE 2.0 * b * hq * nq * nkv * dqk + 2.0 * b * hq * nq * dv * nkv
                  END / CASE WHEN causal THEN 2 ELSE 1 END
              END,
     'bytes': (1.0 * b * nq * hq * dqk + 1.0 * b * nkv * hkv * dqk + 1.0 * b * nkv * hkv * dv
               + 1.0 * b * nq * hq * dv
               + CASE WHEN backward THEN 1.0 * b * nq * hq * dqk + 1.0 * b * nkv * hkv * dqk
                                         + 1.0 * b * nkv * hkv * dv ELSE 0 END) * perf_bpe(t),
     'dtype': perf_dtype(t)};

-- q, k, v dims in (B, H, N, d) order, or (B, N, H, d) when bnhd
CREATE OR REPLACE MACRO _perf_sdpa_dims(backward, flash, q, k, v, bnhd, causal, t) AS
    _perf_sdpa(backward, flash, q[1], CASE WHEN bnhd THEN q[2] ELSE q[3] END,
               CASE WHEN bnhd THEN q[3] ELSE q[2] END, CASE WHEN bnhd THEN k[2] ELSE k[3] END,
               CASE WHEN bnhd THEN k[3] ELSE k[2] END, q[4], v[4], causal, t);

-- the attention ops: where q, k, v are (the backward ops take dO first), their layout, and
-- which argument is is_causal, per signature
CREATE OR REPLACE MACRO _perf_sdpa_op(op_name, d, t, c) AS
    _perf_sdpa_dims(op_name LIKE '%backward',
                    op_name NOT LIKE '%efficient%' AND op_name NOT LIKE '%cudnn%',
                    d[CASE WHEN op_name LIKE '%backward' THEN 2 ELSE 1 END],
                    d[CASE WHEN op_name LIKE '%backward' THEN 3 ELSE 2 END],
                    d[CASE WHEN op_name LIKE '%backward' THEN 4 ELSE 3 END],
                    op_name LIKE '%flash_attention_%ward' OR op_name LIKE 'flash_attn::%',
                    c[CASE op_name
                          WHEN 'aten::_scaled_dot_product_flash_attention' THEN 5
                          WHEN 'aten::_scaled_dot_product_efficient_attention' THEN 7
                          WHEN 'aten::_scaled_dot_product_cudnn_attention' THEN 7
                          WHEN 'aten::_flash_attention_forward' THEN 9
                          WHEN 'flash_attn::_flash_attn_forward' THEN 6
                          WHEN 'flash_attn::_flash_attn_backward' THEN 11
                          ELSE 12 END] = 'True',   -- the three aten backward ops
                    t[CASE WHEN op_name LIKE '%backward' THEN 2 ELSE 1 END]);

-- the forward convolutions: aten::convolution and _convolution (input, weight, bias, stride,
-- padding, dilation, transposed, output_padding, groups) and the backends' own, which launch
-- the kernels, without a transposed flag: cudnn_convolution (input, weight, padding, stride,
-- dilation, ...: no bias), miopen_convolution (input, weight, bias, padding, stride, dilation, ...)
CREATE OR REPLACE MACRO _perf_conv_op(op_name, d, t, c) AS
    _perf_conv(CASE WHEN op_name = 'aten::cudnn_convolution' THEN [d[1], d[2], []] ELSE d END, t,
               TRY_CAST(c[CASE op_name WHEN 'aten::miopen_convolution' THEN 5 ELSE 4 END] AS BIGINT[]),
               TRY_CAST(c[CASE op_name WHEN 'aten::cudnn_convolution' THEN 3
                                       WHEN 'aten::miopen_convolution' THEN 4 ELSE 5 END] AS BIGINT[]),
               TRY_CAST(c[CASE op_name WHEN 'aten::cudnn_convolution' THEN 5 ELSE 6 END] AS BIGINT[]),
               op_name IN ('aten::convolution', 'aten::_convolution') AND c[7] = 'True',
               CASE WHEN op_name IN ('aten::convolution', 'aten::_convolution')
                    THEN TRY_CAST(c[8] AS BIGINT[]) END);

-- the three fields as JSON (store.op_shapes keeps their text), parsed
CREATE OR REPLACE MACRO perf_shapes_json(dims, types, concrete) AS
    {'dims': TRY_CAST(TRY_CAST(dims AS JSON) AS BIGINT[][]),
     'types': TRY_CAST(TRY_CAST(types AS JSON) AS VARCHAR[]),
     'concrete': TRY_CAST(TRY_CAST(concrete AS JSON) AS VARCHAR[])};

CREATE OR REPLACE MACRO perf_shapes(args) AS
    perf_shapes_json(json_extract(args, '$."Input Dims"'), json_extract(args, '$."Input type"'),
                     json_extract(args, '$."Concrete Inputs"'));

-- the model of one op from its name and its parsed args (d: Input Dims, t: Input type,
-- c: Concrete Inputs)
CREATE OR REPLACE MACRO perf_model(op_name, d, t, c) AS
    CASE
        -- GEMM ------------------------------------------------------------------------------
        WHEN op_name = 'aten::mm'
            THEN _perf_gemm(1, d[1][1], d[2][2], d[1][2], false, perf_bpe(t[1]), perf_bpe(t[1]), t[1])
        WHEN op_name = 'aten::addmm'
            THEN _perf_gemm(1, d[2][1], d[3][2], d[2][2], true, perf_bpe(t[2]), perf_bpe(t[2]), t[2])
        WHEN op_name = 'aten::_scaled_mm'
            THEN _perf_gemm(1, d[1][1], d[2][2], d[1][2], len(d) = 3, perf_bpe(t[1]),
                            CASE WHEN perf_bpe(t[1]) = 1 THEN 2 ELSE perf_bpe(t[1]) END, t[1])
        WHEN op_name = 'aten::bmm'
            THEN _perf_gemm(d[1][1], d[1][2], d[2][3], d[1][3], false, perf_bpe(t[1]), perf_bpe(t[1]), t[1])
        WHEN op_name = 'aten::baddbmm'
            THEN _perf_gemm(d[2][1], d[2][2], d[3][3], d[2][3], true, perf_bpe(t[2]), perf_bpe(t[2]), t[2])
        -- not in TraceLens (its linear/matmul launch through mm/addmm/bmm): x (..., k) by
        -- w (n, k) [+ bias]; matmul of (..., m, k) by (..., k, n), leading dims as batches
        WHEN op_name = 'aten::linear'
            THEN _perf_gemm(1, perf_numel(list_slice(d[1], 1, len(d[1]) - 1)), d[2][1], d[1][-1],
                            len(d) >= 3 AND len(d[3]) > 0, perf_bpe(t[1]), perf_bpe(t[1]), t[1])
        WHEN op_name = 'aten::matmul' AND len(d[1]) >= 2 AND len(d[2]) >= 2
            THEN _perf_gemm(perf_numel(list_slice(d[1], 1, len(d[1]) - 2)), d[1][-2], d[2][-1], d[1][-1], false,
                            perf_bpe(t[1]), perf_bpe(t[1]), t[1])
        -- convolution: _perf_conv_op. Backward: input and weight gradients, each the forward's FLOPs
        WHEN op_name IN ('aten::convolution', 'aten::_convolution', 'aten::cudnn_convolution',
                         'aten::miopen_convolution')
            THEN _perf_conv_op(op_name, d, t, c)
        -- convolution_backward(grad_output, input, weight, bias_sizes, ...): the output's size is
        -- grad_output's (TraceLens recomputes it from the parameters: the same number).
        -- TraceLens adds the bias gradient's bytes as elements; here they are bytes (x bpe).
        WHEN op_name = 'aten::convolution_backward'
            THEN {'family': 'CONV_bwd',
                  'flops': 4.0 * perf_numel(d[1]) * perf_numel(list_slice(d[3], 2, len(d[3])))
                           + CASE WHEN len(d) > 3 AND len(d[4]) > 0 THEN perf_numel(d[1]) ELSE 0 END,
                  'bytes': (2.0 * (perf_numel(d[1]) + perf_numel(d[2]) + perf_numel(d[3]))
                            + CASE WHEN len(d) > 3 AND len(d[4]) > 0 THEN perf_numel(d[1]) + d[1][2]
                                   ELSE 0 END) * perf_bpe(t[2]),
                  'dtype': perf_dtype(t[2])}
        -- attention: _perf_sdpa_op
        WHEN op_name IN ('aten::_scaled_dot_product_flash_attention',
                         'aten::_scaled_dot_product_efficient_attention',
                         'aten::_scaled_dot_product_cudnn_attention',
                         'aten::_flash_attention_forward', 'flash_attn::_flash_attn_forward',
                         'aten::_scaled_dot_product_flash_attention_backward',
                         'aten::_scaled_dot_product_efficient_attention_backward',
                         'aten::_scaled_dot_product_cudnn_attention_backward',
                         'aten::_flash_attention_backward', 'flash_attn::_flash_attn_backward')
            THEN _perf_sdpa_op(op_name, d, t, c)
        -- elementwise: one FLOP per output element; read every input, write the output (a
        -- broadcast output has the larger input's size)
        WHEN op_name IN ('aten::relu', 'aten::relu_', 'aten::gelu', 'aten::silu', 'aten::silu_',
                         'aten::sigmoid', 'aten::tanh', 'aten::exp', 'aten::neg', 'aten::sqrt',
                         'aten::rsqrt', 'aten::clamp_min_', 'aten::clamp_min', 'aten::clamp',
                         'aten::abs', 'aten::log', 'aten::reciprocal', 'aten::pow')
            THEN {'family': 'elementwise_unary', 'flops': perf_numel(d[1]),
                  'bytes': 2.0 * perf_numel(d[1]) * perf_bpe(t[1]), 'dtype': perf_dtype(t[1])}
        WHEN op_name IN ('aten::add', 'aten::add_', 'aten::sub', 'aten::sub_', 'aten::mul',
                         'aten::mul_', 'aten::div', 'aten::div_', 'aten::gelu_backward',
                         'aten::silu_backward', 'aten::threshold_backward', 'aten::sigmoid_backward',
                         'aten::tanh_backward', 'aten::where', 'aten::maximum', 'aten::minimum')
            THEN {'family': 'elementwise_binary',
                  'flops': greatest(perf_numel(d[1]), perf_numel(d[2])),
                  'bytes': (perf_numel(d[1]) * perf_bpe(t[1])
                            + CASE WHEN len(d[2]) > 0 THEN perf_numel(d[2]) * coalesce(perf_bpe(t[2]), 0)
                                   ELSE 0 END
                            + greatest(perf_numel(d[1]), perf_numel(d[2])) * perf_bpe(t[1])),
                  'dtype': perf_dtype(t[1])}
        -- reductions: one FLOP per input element; read the input (the output is small)
        WHEN op_name IN ('aten::sum', 'aten::mean', 'aten::amax', 'aten::amin', 'aten::max',
                         'aten::min', 'aten::norm', 'aten::var', 'aten::std', 'aten::prod')
            THEN {'family': 'reduce', 'flops': perf_numel(d[1]),
                  'bytes': perf_numel(d[1]) * perf_bpe(t[1]), 'dtype': perf_dtype(t[1])}
        -- normalisation over the last dims: mean, variance, normalise, scale and shift, 5 FLOPs
        -- per element (rms: 4); read x and write y, plus the affine parameters. Backward: 2x the
        -- FLOPs; read x and dy, write dx.
        WHEN op_name IN ('aten::layer_norm', 'aten::native_layer_norm', 'aten::rms_norm',
                         'aten::_fused_rms_norm', 'aten::group_norm', 'aten::native_group_norm',
                         'aten::native_batch_norm', 'aten::_batch_norm_impl_index', 'aten::batch_norm')
            THEN {'family': 'norm_fwd',
                  'flops': CASE WHEN op_name LIKE '%rms_norm' THEN 4.0 ELSE 5.0 END * perf_numel(d[1]),
                  'bytes': (2.0 * perf_numel(d[1])
                            + CASE WHEN len(d) >= 3 THEN perf_numel(d[3]) ELSE 0 END
                            + CASE WHEN len(d) >= 4 THEN perf_numel(d[4]) ELSE 0 END) * perf_bpe(t[1]),
                  'dtype': perf_dtype(t[1])}
        WHEN op_name IN ('aten::native_layer_norm_backward', 'aten::_fused_rms_norm_backward',
                         'aten::native_group_norm_backward', 'aten::native_batch_norm_backward')
            THEN {'family': 'norm_bwd', 'flops': 10.0 * perf_numel(d[1]),
                  'bytes': 3.0 * perf_numel(d[1]) * perf_bpe(t[1]), 'dtype': perf_dtype(t[1])}
        -- softmax: max, subtract and exp, sum, divide (4 FLOPs per element); read x, write y.
        -- Backward: 3 FLOPs per element, read y and dy, write dx
        WHEN op_name IN ('aten::_softmax', 'aten::softmax', 'aten::_log_softmax', 'aten::log_softmax')
            THEN {'family': 'softmax_fwd', 'flops': 4.0 * perf_numel(d[1]),
                  'bytes': 2.0 * perf_numel(d[1]) * perf_bpe(t[1]), 'dtype': perf_dtype(t[1])}
        WHEN op_name IN ('aten::_softmax_backward_data', 'aten::_log_softmax_backward_data')
            THEN {'family': 'softmax_bwd', 'flops': 3.0 * perf_numel(d[1]),
                  'bytes': 3.0 * perf_numel(d[1]) * perf_bpe(t[1]), 'dtype': perf_dtype(t[1])}
        -- embedding(weight, indices): no FLOPs; read the indices and one weight row per index,
        -- write the rows
        WHEN op_name = 'aten::embedding'
            THEN {'family': 'embedding', 'flops': 0.0,
                  'bytes': perf_numel(d[2]) * perf_bpe(t[2])
                           + 2.0 * perf_numel(d[2]) * d[1][-1] * perf_bpe(t[1]),
                  'dtype': perf_dtype(t[1])}
    END;


