"""op_summary: TraceLens' ops_summary / ops_unique_args (kernel launchers, direct and subtree kernel
time) on a generated job whose kernels are known, and on the real TraceLens traces against a
recomputation written here from the raw trace JSON with the standard library. TraceLens itself
cannot be installed here (PyPI's `tracelens` is an unrelated package)."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path

import pytest

import tracewh
from conftest import TRACELENS
from tracewh.generate.kineto import HIDDEN, TOKENS, KinetoJobSpec, generate_kineto_job
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric

LAYERS, ITERATIONS = 2, 3
# runs where some launcher's subtree holds kernels beyond its own (aten::miopen_convolution,
# aten::upsample_nearest1d, vllm::unified_attention_with_output, aten::mse_loss, ...)
SUBTREE_WIDER = {"mi300_vit", "h100_timesformer", "b200", "mi300_resnet"}


def _rows(con, **params) -> list[dict]:
    return run_metric(con, find_metric("op_summary"), params).to_pylist()


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    out = tmp_path_factory.mktemp("ops")
    truth = generate_kineto_job(out / "traces", KinetoJobSpec(
        world_size=2, iterations=ITERATIONS, layers=LAYERS, seed=5))
    con = tracewh.connect(out / "wh.duckdb")
    results = ingest_paths(con, [out / "traces"], jobs=1)
    assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    yield con, truth
    con.close()


def test_gemm_launchers_by_hand(job):
    """aten::addmm launches one nvjet_tst_192x192 kernel per layer and iteration; aten::mm one of
    three GEMM kernels (forward, and dgrad/wgrad of both GEMMs: 5 per layer and iteration)."""
    con, truth = job
    rows = {r["name"]: r for r in _rows(con, rank=0)}
    kernels = truth.kernels[0]
    addmm = [k for k in kernels if k.name.startswith("nvjet_tst_192x192")]
    mm = [k for k in kernels if k.name.startswith(("nvjet_tst_192x208", "nvjet_tst_256x128",
                                                    "nvjet_tst_128x256"))]
    assert len(addmm) == LAYERS * ITERATIONS and len(mm) == 5 * LAYERS * ITERATIONS
    for name, launched in (("aten::addmm", addmm), ("aten::mm", mm)):
        row = rows[name]
        assert row["calls"] == row["direct_kernels"] == row["subtree_kernels"] == len(launched)
        assert row["direct_gpu_ns"] == row["subtree_gpu_ns"] == sum(k.end_ns - k.start_ns for k in launched)


def test_shares_cover_every_non_nccl_gpu_op_once(job):
    """Each launcher's kernels run one after another on its stream, so the direct times add up to
    every non-NCCL kernel, memcpy and memset; NCCL kernels launch no row; the shares add up to 100."""
    con, truth = job
    rows = _rows(con, rank=1)
    kernels = [k for k in truth.kernels[1] if "nccl" not in k.name.lower()]
    mem = truth.memcpy[1] + truth.memset[1]
    assert sum(r["direct_gpu_ns"] for r in rows) == (sum(k.end_ns - k.start_ns for k in kernels)
                                                     + sum(m.end_ns - m.start_ns for m in mem))
    assert sum(r["direct_kernels"] for r in rows) == len(kernels) + len(mem)
    assert not [r for r in rows if "nccl" in r["name"].lower() or r["name"] == "record_param_comms"]
    assert sum(r["pct_of_gpu_time"] for r in rows) == pytest.approx(100, rel=1e-12)
    assert rows[-1]["cumulative_pct"] == pytest.approx(100, rel=1e-12)
    assert [r["direct_gpu_ns"] for r in rows] == sorted((r["direct_gpu_ns"] for r in rows), reverse=True)


def test_per_shape_splits_by_input_dims_and_types(job):
    con, _ = job
    by_name = {r["name"]: r for r in _rows(con, rank=0)}
    shapes = [r for r in _rows(con, rank=0, per="shape") if r["name"] == "aten::addmm"]
    assert len(shapes) == 1
    assert json.loads(shapes[0]["input_dims"]) == [[HIDDEN], [TOKENS, HIDDEN], [HIDDEN, HIDDEN], [], []]
    assert json.loads(shapes[0]["input_types"])[:3] == ["c10::BFloat16"] * 3
    assert shapes[0]["direct_gpu_ns"] == by_name["aten::addmm"]["direct_gpu_ns"]
    assert by_name["aten::addmm"]["input_dims"] is None


def test_one_iteration_keeps_its_launchers(job):
    con, truth = job
    first = truth.iterations[0][0][0]
    one = {r["name"]: r for r in _rows(con, rank=0, iteration_from=first, iteration_to=first)}
    assert one["aten::addmm"]["calls"] == LAYERS and one["aten::mm"]["calls"] == 5 * LAYERS


def test_window_keeps_the_launchers_of_the_steps_it_covers(job):
    """window (relative to the rank's source, as nsys --filter-time) around the second step keeps
    the launchers iteration_from/to keeps for it, and the same as its UTC bounds."""
    con, truth = job
    number, start, end = truth.iterations[0][1]
    (origin,) = con.execute("SELECT DISTINCT s.origin_ns FROM sources s JOIN ranks USING (file_id) "
                            "WHERE rank = 0").fetchone()
    window = f"{start - origin}/{end - origin}"
    calls = lambda rows: {r["name"]: (r["calls"], r["direct_gpu_ns"]) for r in rows}  # noqa: E731
    got = calls(_rows(con, rank=0, window=window))
    assert got == calls(_rows(con, rank=0, iteration_from=number, iteration_to=number))
    assert got == calls(_rows(con, rank=0, start_ns=start, end_ns=end))
    assert got["aten::addmm"][0] == LAYERS
    assert sum(c for c, _ in got.values()) * ITERATIONS == sum(c for c, _ in calls(_rows(con, rank=0)).values())


# --- the real TraceLens traces ---------------------------------------------------------------

def _busy(spans: list[tuple[int, int]]) -> int:
    total, reach = 0, None
    for start, end in sorted(spans):
        if reach is None or start > reach:
            total, reach = total + end - start, end
        elif end > reach:
            total, reach = total + end - reach, end
    return total


def recompute(path: Path) -> dict[str, dict]:
    """Per launcher name: calls, direct and subtree GPU ns and op counts, from the raw JSON.
    A GPU op's launch call is the host call with its correlation id; the ops around the call are
    the cpu_ops of its thread with start <= call start < end (ProfilerStep#N marks an iteration,
    not an op); the innermost is the launcher (an op named execute hands it to the next one
    out), else the call itself; every op around the call counts the GPU op in its subtree."""
    events = json.loads(gzip.open(path).read())["traceEvents"]
    ops, calls, gpu = defaultdict(list), {}, []
    for e in events:
        cat, args = e.get("cat"), e.get("args") or {}
        if e.get("ph") != "X":
            continue
        if cat == "cpu_op" and not e["name"].startswith("ProfilerStep#"):
            ops[(e["pid"], e["tid"])].append(e)
        elif cat in ("cuda_runtime", "cuda_driver") and "correlation" in args:
            known = calls.get(args["correlation"])
            if known is None or e["ts"] < known["ts"]:
                calls[args["correlation"]] = e
        elif cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            gpu.append(e)
    direct, subtree, host, names = defaultdict(list), defaultdict(list), {}, {}
    for g in gpu:
        call = calls.get((g.get("args") or {}).get("correlation"))
        if call is None:
            continue
        span = (round(g["ts"] * 1000), round((g["ts"] + g["dur"]) * 1000))
        around = sorted((o for o in ops[(call["pid"], call["tid"])]
                         if o["ts"] <= call["ts"] < o["ts"] + o["dur"]),
                        key=lambda o: (o["ts"], -o["dur"]))
        for o in around:
            subtree[id(o)].append(span)
        if around and around[-1]["name"] == "execute" and len(around) > 1:
            around.pop()
        launcher = around[-1] if around else call
        if not around:
            subtree[id(call)].append(span)
        names[id(launcher)], host[id(launcher)] = launcher["name"], round(launcher["dur"] * 1000)
        if "nccl" not in g["name"].lower():
            direct[id(launcher)].append(span)
    out: dict[str, dict] = {}
    for key, spans in direct.items():
        row = out.setdefault(names[key], defaultdict(int))
        row["calls"] += 1
        row["direct_kernels"] += len(spans)
        row["direct_gpu_ns"] += _busy(spans)
        row["subtree_kernels"] += len(subtree[key])
        row["subtree_gpu_ns"] += _busy(subtree[key])
        row["host_ns"] += host[key]
    return out


@pytest.mark.parametrize("run", TRACELENS)
def test_real_traces_match_the_recomputation_from_the_json(tracelens_warehouse, shared_data, run):
    want = recompute(shared_data / "kineto" / "tracelens" / TRACELENS[run])
    got = {r["name"]: r for r in _rows(tracelens_warehouse, run=run)}
    assert set(got) == set(want)
    assert any(w["subtree_gpu_ns"] > w["direct_gpu_ns"] for w in want.values()) == (run in SUBTREE_WIDER)
    for name, w in want.items():
        g = got[name]
        assert (g["calls"], g["direct_kernels"], g["subtree_kernels"]) == \
            (w["calls"], w["direct_kernels"], w["subtree_kernels"]), name
        # ns times are rounded from the file's µs one event at a time: 1 ns per op either way
        for column, ops in (("direct_gpu_ns", "direct_kernels"), ("subtree_gpu_ns", "subtree_kernels"),
                            ("host_ns", "calls")):
            assert abs(g[column] - w[column]) <= w[ops], (name, column)
