"""op_efficiency on the real TraceLens traces (H100 / MI300X pairs, B200): every GEMM and attention
shape's GFLOPs, bytes, kernel time and TFLOP/s recomputed here from the raw trace JSON with the
standard library (cpu_op "Input Dims"/"Input type"/"Concrete Inputs", kernels joined by External
id) and TraceLens' PerfModel formulas written out by hand. TraceLens v1.0.0's own numbers for these
traces are compared in test_metrics_peer_tracelens.py."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict

import pytest

from conftest import TRACELENS
from tracewh.metrics import find_metric, run_metric

BPE = {"c10::BFloat16": 2, "c10::Half": 2, "float": 4, "double": 8}
TRACES = {run: TRACELENS[run] for run in ("h100_bert", "mi300_bert", "h100_vit", "mi300_vit", "b200")}


def hand_model(name: str, dims: list, types: list, concrete: list) -> tuple[float, float] | None:
    """(FLOPs, bytes) of one op, TraceLens' formulas (GEMM.flops_func/bytes_func, SDPA)."""
    if name == "aten::addmm":
        (m, k), n = dims[1], dims[2][1]
        return 2 * m * n * k + m * n, (m * k + k * n + m * n + n) * BPE[types[1]]
    if name == "aten::mm":
        (m, k), n = dims[0], dims[1][1]
        return 2 * m * n * k, (m * k + k * n + m * n) * BPE[types[0]]
    if name == "aten::bmm":
        (b, m, k), n = dims[0], dims[1][2]
        return b * 2 * m * n * k, b * (m * k + k * n + m * n) * BPE[types[0]]
    if name in ("aten::_scaled_dot_product_flash_attention", "aten::_flash_attention_forward",
                "aten::_scaled_dot_product_efficient_attention"):
        q, k, v = dims[:3]
        if name == "aten::_flash_attention_forward":  # (B, N, H, d) -> (B, H, N, d)
            q, k, v = ([x[0], x[2], x[1], x[3]] for x in (q, k, v))
        causal = concrete[{"aten::_scaled_dot_product_flash_attention": 4,
                           "aten::_flash_attention_forward": 8}.get(name, 6)] == "True"
        b, hq, nq, dqk = q
        hkv, nkv, dv = k[1], k[2], v[3]
        flops = b * hq * (2 * nq * nkv * dqk + 2 * nq * nkv * dv) / (2 if causal else 1)
        elems = b * nq * hq * dqk + b * nkv * hkv * dqk + b * nkv * hkv * dv + b * nq * hq * dv
        return flops, elems * BPE[types[0]]
    return None


def hand_numbers(path) -> dict:
    """(name, dims) -> [FLOPs, bytes, instances, kernel ns, kernels] from the raw file."""
    events = json.loads(gzip.open(path).read())["traceEvents"]
    ops, kernel_ns, kernels = {}, defaultdict(int), defaultdict(int)
    for e in events:
        args = e.get("args") or {}
        if e.get("cat") == "cpu_op" and "Input Dims" in args:
            ops[args["External id"]] = (e["name"], args)
        elif e.get("cat") == "kernel" and "External id" in args:
            kernel_ns[args["External id"]] += round(e["dur"] * 1000)
            kernels[args["External id"]] += 1
    found = {}
    for ext, ns in kernel_ns.items():
        if ext not in ops:
            continue
        name, args = ops[ext]
        model = hand_model(name, args["Input Dims"], args["Input type"], args.get("Concrete Inputs", []))
        if model is None:
            continue
        key = (name, json.dumps(args["Input Dims"]).replace(" ", ""))
        row = found.setdefault(key, [model[0], model[1], 0, 0, 0])
        row[2] += 1
        row[3] += ns
        row[4] += kernels[ext]
    return found


@pytest.fixture(scope="module")
def warehouse(tracelens_warehouse):
    return tracelens_warehouse


@pytest.mark.parametrize("run", TRACES)
def test_gemm_and_attention_shapes_match_the_hand_computation(warehouse, shared_data, run):
    want = hand_numbers(shared_data / "kineto" / "tracelens" / TRACES[run])
    got = {}  # rows of one shape that differ only in Concrete Inputs are added up
    for r in run_metric(warehouse, find_metric("op_efficiency"), {"run": run}).to_pylist():
        if r["family"] in ("GEMM", "SDPA_fwd"):
            row = got.setdefault((r["name"], r["input_dims"].replace(" ", "")),
                                 {"gflops": r["gflops"], "bytes": r["bytes"], "instances": 0,
                                  "gpu_ns": 0, "flops": 0.0})
            row["instances"] += r["instances"]
            row["gpu_ns"] += r["gpu_ns"]
            row["flops"] += r["tflops_per_s"] * r["gpu_ns"] * 1e3
    assert set(got) == set(want)
    assert any(name in ("aten::mm", "aten::addmm", "aten::bmm") for name, _ in want)
    for key, (flops, nbytes, instances, ns, kernels) in want.items():
        row = got[key]
        assert row["gflops"] == pytest.approx(flops / 1e9, rel=1e-12), key
        assert row["bytes"] == pytest.approx(nbytes, rel=1e-12), key
        assert row["instances"] == instances, key
        # ingest takes end - start of the rounded ns times; rounding dur may differ by 1 ns
        assert abs(row["gpu_ns"] - ns) <= kernels, key
        assert row["flops"] / row["gpu_ns"] / 1e3 == pytest.approx(flops * instances / ns / 1e3,
                                                                  rel=max(1e-9, kernels / ns)), key


def test_attention_in_both_layouts_counts_the_same_flops(warehouse):
    """_scaled_dot_product_flash_attention (B, H, N, d) wraps _flash_attention_forward (B, N, H, d):
    the same call, so the same FLOPs and bytes."""
    rows = warehouse.execute("""
        WITH o AS MATERIALIZED (SELECT name, external_id, start_ns, perf_shapes(args) AS s FROM cpu_ops
                                WHERE run_id = 'h100_vit' AND name LIKE '%flash_attention%')
        SELECT name, perf_model(name, s.dims, s.types, s.concrete) AS m FROM o ORDER BY start_ns
    """).fetchall()
    outer = [m for name, m in rows if name == "aten::_scaled_dot_product_flash_attention"]
    inner = [m for name, m in rows if name == "aten::_flash_attention_forward"]
    assert len(outer) == len(inner) > 0 and outer == inner


def test_mfu_states_the_share_its_models_cover(warehouse):
    rows = run_metric(warehouse, find_metric("mfu"), {}).to_pylist()
    by_run = {r["run_id"]: r for r in rows}
    assert by_run["h100_vit"]["device"] == "H100 SXM" and by_run["h100_vit"]["counted_mfu_pct"] > 0
    assert 0 < by_run["h100_vit"]["covered_gpu_pct"] <= 100
    # the MI300X pair's GPU is a virtual function ("AMD Instinct MI300X VF", 0 in the trace's
    # deviceProperties, 2 on its kernels): the list's only GPU, with MI300X peaks (bf16)
    assert (by_run["mi300_vit"]["device"], by_run["mi300_vit"]["peak_tflops"]) == ("MI300X", 1307.4)
    assert by_run["mi300_vit"]["covered_gpu_pct"] > 0
