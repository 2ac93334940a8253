"""Which kernels the performance models put at an op (issue 37), on a generated MIOpen-style trace:
a convolution with bias whose bias add (aten::add_, a child of aten::miopen_convolution) launches a
kernel of its own, on an "AMD Instinct MI300X VF" whose deviceProperties number it 0 while its
kernels say device 2. Its FLOPs and kernel time are written out here by hand."""

from __future__ import annotations

import json

import pytest

import tracewh
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric

T0 = 1_700_000_000_000_000  # µs
# input (2, 3, 8, 8), weight (4, 3, 3, 3), bias (4), stride 1, no padding: output (2, 4, 6, 6)
OUT = 2 * 4 * 6 * 6
CONV_FLOPS = OUT * (2 * 3 * 3 * 3 + 1)              # the bias once: one add per output element
CONV_BYTES = (2 * 3 * 8 * 8 + 4 * 3 * 3 * 3 + 4 + OUT) * 2  # bf16
CONV_US, BIAS_US = 40, 7                            # the two kernels' durations
MI300X_BF16, MI300X_TBPS = 1307.4, 5.3              # device_peaks, dense


def _trace(kernel_external_ids: str) -> dict:
    """The convolution (External id 10) and its bias add_ (11), each launching one kernel
    (correlation ids 500, 501). kernel_external_ids: 'op' (the launching op's, as PyTorch writes
    them now) or 'correlation' (the correlation id, as the PARAM DLRM traces carry it)."""
    def op(name, ext, ts, dur, dims, types, concrete):
        return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 7, "tid": 7, "ts": ts, "dur": dur,
                "args": {"External id": ext, "Input Dims": dims, "Input type": types,
                         "Concrete Inputs": concrete}}

    def launch(corr, ext, ts, kernel, kts, kdur):
        kernel_ext = ext if kernel_external_ids == "op" else corr
        return [{"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 7, "tid": 7,
                 "ts": ts, "dur": 2, "args": {"External id": kernel_ext, "correlation": corr}},
                {"ph": "X", "cat": "kernel", "name": kernel, "pid": 2, "tid": 0, "ts": kts,
                 "dur": kdur, "args": {"External id": kernel_ext, "correlation": corr,
                                       "device": 2, "stream": 0}}]

    bf16 = "c10::BFloat16"
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 7, "tid": 7,
         "ts": T0, "dur": 200, "args": {}},
        op("aten::miopen_convolution", 10, T0 + 10, 50,
           [[2, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], [], [], []], [bf16, bf16, bf16] + [""] * 6,
           ["", "", "", "[0, 0]", "[1, 1]", "[1, 1]", "1", "False", "False"]),
        *launch(500, 10, T0 + 15, "igemm_fwd_gtcx3_nhwc_bf16", T0 + 100, CONV_US),
        op("aten::add_", 11, T0 + 30, 20, [[2, 4, 6, 6], [1, 4, 1, 1], []], [bf16, bf16, "Scalar"],
           ["", "", "1"]),
        *launch(501, 11, T0 + 35, "SubTensorOpWithScalar1d", T0 + 150, BIAS_US),
    ]
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "AMD Instinct MI300X VF"}],
            "traceEvents": events}


@pytest.fixture(scope="module", params=["op", "correlation"])
def warehouse(request, tmp_path_factory):
    out = tmp_path_factory.mktemp("miopen")
    (out / "traces").mkdir()
    (out / "traces" / "rank0.pt.trace.json").write_text(json.dumps(_trace(request.param)))
    con = tracewh.connect(out / "wh.duckdb")
    results = ingest_paths(con, [out / "traces"], run="miopen", jobs=1)
    assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    yield con
    con.close()


def test_a_miopen_convolution_counts_its_bias_once(warehouse):
    """The add_ is the convolution's bias, which its model already counts: no row of its own, and
    its kernel's time is the convolution's. The kernels reach their ops by the launch link, also
    when their External id is the correlation id."""
    rows = run_metric(warehouse, find_metric("op_efficiency"), {}).to_pylist()
    assert [(r["name"], r["family"], r["instances"], r["kernels"]) for r in rows] == [
        ("aten::miopen_convolution", "CONV_fwd", 1, 2)]
    conv = rows[0]
    assert conv["gflops"] == CONV_FLOPS / 1e9 and conv["bytes"] == CONV_BYTES
    assert conv["gpu_ns"] == (CONV_US + BIAS_US) * 1000
    assert conv["tflops_per_s"] == pytest.approx(CONV_FLOPS / ((CONV_US + BIAS_US) * 1000) / 1e3, rel=1e-12)


def test_an_mi300x_virtual_function_gets_mi300x_peaks(warehouse):
    assert warehouse.execute("SELECT device_id, name FROM devices").fetchall() == [
        (2, "AMD Instinct MI300X VF")]
    conv = run_metric(warehouse, find_metric("op_efficiency"), {}).to_pylist()[0]
    assert (conv["device"], conv["peak_tflops"], conv["peak_tbps"], conv["reason"]) == (
        "MI300X", MI300X_BF16, MI300X_TBPS, None)
    mfu = run_metric(warehouse, find_metric("mfu"), {}).to_pylist()
    assert [(r["iteration"], r["counted_tflop"], r["peak_tflops"]) for r in mfu] == [
        (1, CONV_FLOPS / 1e12, MI300X_BF16)]


def test_tracelens_peaks_are_its_arch_table(warehouse):
    """peaks=tracelens: TraceLens v1.0.0's Agent/Analysis/utils/arch/MI300X.json ("max achievable"
    matrix_bf16 708 TFLOP/s, mem_bw_gbps 5300) for a convolution; a GPU not in that table has none."""
    metric = find_metric("op_efficiency")
    [conv] = run_metric(warehouse, metric, {"peaks": "tracelens"}).to_pylist()
    assert (conv["device"], conv["peak_tflops"], conv["peak_tbps"]) == ("MI300X", 708.0, 5.3)
    [other] = run_metric(warehouse, metric, {"peaks": "tracelens", "device": "NVIDIA H100 80GB HBM3"}).to_pylist()
    assert other["peak_tflops"] is None and "not in TraceLens' arch table" in other["reason"]
    with pytest.raises(Exception, match="peaks must be datasheet or tracelens"):
        run_metric(warehouse, metric, {"peaks": "vendor"})
