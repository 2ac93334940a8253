"""tracewh beside TraceLens v1.0.0 (AMD-AGI/TraceLens), sheet by sheet, on every shared TraceLens
trace and the 8 PARAM DLRM ranks (issue 37).

TraceLens' numbers are recorded in tests/peer/tracelens_1.0.0.json by tests/peer/tracelens_numbers.py,
run in TraceLens' own venv (make .peers/tracelens); this test reads the file and needs no TraceLens.
TraceLens writes times in µs as floats; tracewh keeps integer ns, so a time may differ by the
rounding of each op's start and end: 2 ns per op. Other numbers agree within 0.1 %. Where the two
differ by definition, a parameter reproduces TraceLens and is used here: kernel_time=subtree
(op_efficiency); memset=compute, comm=tracelens, unlaunched=drop (temporal_breakdown).

One TraceLens defect is accounted for, not reproduced by default: on the MI300X ResNet trace ROCm
writes the memsets' flow events f/f, TraceLens loses their launch and drops the memsets (108; the
81 that ops launched ran 328 µs), so its times there lack exactly the memsets, which tracewh counts (temporal_breakdown's
memset=drop reproduces it; op_summary and op_efficiency are compared net of the memsets)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

import tracewh
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric

PEER = json.loads((Path(__file__).parent / "peer" / "tracelens_1.0.0.json").read_text())
DLRM = "kineto/param/dlrm_kineto/"
REL = 1e-3                                   # TraceLens' numbers within 0.1 %
NS_PER_OP = 2                                # times within 2 ns per op
MIB = 2**20                                  # TraceLens' "Data Moved (MB)"
# TraceLens' perf sheets -> op_efficiency's families (its other sheets model other op sets)
FAMILIES = {"GEMM": "GEMM", "CONV_fwd": "CONV_fwd", "CONV_bwd": "CONV_bwd", "SDPA_fwd": "SDPA_fwd",
            "SDPA_bwd": "SDPA_bwd"}


def run_rank(rel: str) -> tuple[str, int]:
    """The run and rank a recorded trace is ingested as."""
    if rel.startswith(DLRM):
        return "dlrm", int(rel[len(DLRM):].split("_")[0].removeprefix("worker"))
    return rel.removeprefix("kineto/tracelens/").split("__")[0].removesuffix(".json.gz").replace("/", "_"), 0


TRACES = sorted(PEER["traces"])
LOST_MEMSETS = "kineto/tracelens/mi300/resnet_act_checkpoint.json.gz"


@pytest.fixture(scope="module")
def warehouse(shared_data, tmp_path_factory):
    """Every recorded trace, ingested once (about 30 s)."""
    con = tracewh.connect(tmp_path_factory.mktemp("tracelens_peer") / "wh.duckdb")
    runs = defaultdict(list)
    for rel in TRACES:
        runs[run_rank(rel)[0]].append(shared_data / rel)
    for run, paths in runs.items():
        results = ingest_paths(con, paths, run=run, jobs=1)
        assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    yield con
    con.close()


@pytest.fixture(scope="module")
def answers(warehouse):
    """Each metric once over every run: (metric, params) -> {(run, rank): rows}."""
    cache: dict = {}

    def get(metric: str, **params) -> dict:
        key = (metric, tuple(sorted(params.items())))
        if key not in cache:
            by_rank = defaultdict(list)
            for r in run_metric(warehouse, find_metric(metric), params).to_pylist():
                by_rank[(r["run_id"], r["rank"])].append(r)
            cache[key] = by_rank
        return cache[key]
    return get


@pytest.fixture(scope="module")
def lost_memsets(warehouse):
    """rel -> launcher name -> (memsets, ns) TraceLens dropped (LOST_MEMSETS only)."""
    run, rank = run_rank(LOST_MEMSETS)
    rows = warehouse.execute("""
        SELECT o.name, count(*), sum(g.dur_ns) FROM gpu_op_launches g JOIN cpu_ops o ON o.op_id = g.cpu_op_id
        WHERE g.run_id = ? AND g.rank = ? AND g.op = 'memset' GROUP BY 1""", [run, rank]).fetchall()
    return defaultdict(dict, {LOST_MEMSETS: {name: (n, ns) for name, n, ns in rows}})


def close_ns(got_ns: float, want_us: float, ops: int) -> bool:
    return abs(got_ns - want_us * 1000) <= NS_PER_OP * max(ops, 1)


def canon(value) -> str:
    """Dims or types as one comparable text (TraceLens' lists, tracewh's JSON text)."""
    return json.dumps(json.loads(value) if isinstance(value, str) else value, separators=(",", ":"))


@pytest.mark.parametrize("rel", TRACES)
def test_op_summary_per_name(answers, lost_memsets, rel):
    want = PEER["traces"][rel]["ops_summary"]
    got = {r["name"]: r for r in answers("op_summary")[run_rank(rel)]}
    assert set(got) == set(want)
    for name, (count, direct_us, subtree_us) in want.items():
        row = got[name]
        lost = lost_memsets[rel].get(name, (0, 0))[1]
        assert row["calls"] == count, name
        assert close_ns(row["direct_gpu_ns"] - lost, direct_us, row["direct_kernels"]), (name, row, direct_us)
        assert close_ns(row["subtree_gpu_ns"] - lost, subtree_us, row["subtree_kernels"]), (name, row, subtree_us)
    assert sum(n for n, _ in lost_memsets[rel].values()) == (81 if rel == LOST_MEMSETS else 0)


@pytest.mark.parametrize("rel", TRACES)
def test_op_summary_per_shape(answers, lost_memsets, rel):
    """TraceLens groups by strides and concrete inputs too: its groups of one (name, dims, types)
    are added up."""
    want: dict = defaultdict(lambda: [0, 0.0, 0.0])
    for name, dims, types, count, direct_us, subtree_us in PEER["traces"][rel]["ops_unique_args"]:
        key = (name, canon(dims or []), canon(types or []))
        want[key][0] += count
        want[key][1] += direct_us
        want[key][2] += subtree_us
    got = {(r["name"], canon(r["input_dims"] or "[]"), canon(r["input_types"] or "[]")): r
           for r in answers("op_summary", per="shape")[run_rank(rel)]}
    assert set(got) == set(want)
    lost = defaultdict(int)  # per name, summed over its shapes: TraceLens lost them all
    for key, (count, direct_us, subtree_us) in want.items():
        row = got[key]
        assert row["calls"] == count, key
        lost[key[0]] += row["direct_gpu_ns"] - direct_us * 1000
        if key[0] not in lost_memsets[rel]:
            assert close_ns(row["direct_gpu_ns"], direct_us, row["direct_kernels"]), key
            assert close_ns(row["subtree_gpu_ns"], subtree_us, row["subtree_kernels"]), key
    for name, (memsets, ns) in lost_memsets[rel].items():
        assert abs(lost[name] - ns) <= NS_PER_OP * sum(r["direct_kernels"] for r in got.values()
                                                       if r["name"] == name), name


@pytest.mark.parametrize("rel", TRACES)
def test_gpu_kernel_summary(answers, rel):
    want = PEER["traces"][rel]["kernel_summary"]
    got = {r["name"]: r for r in answers("gpu_kernel_summary")[run_rank(rel)]}
    assert set(got) == set(want)
    for name, (count, sum_us) in want.items():
        assert got[name]["instances"] == count, name
        assert close_ns(got[name]["total_ns"], sum_us, count), name


@pytest.mark.parametrize("rel", TRACES)
def test_temporal_breakdown_as_tracelens_gpu_timeline(answers, rel):
    want = PEER["traces"][rel]["gpu_timeline"]
    [row] = answers("temporal_breakdown", memset="drop" if rel == LOST_MEMSETS else "compute",
                    comm="tracelens", unlaunched="drop")[run_rank(rel)]
    for ours, theirs in (("compute_ns", "computation_time"), ("exposed_comm_ns", "exposed_comm_time"),
                         ("exposed_mem_ns", "exposed_memcpy_time"), ("idle_ns", "idle_time"),
                         ("window_ns", "total_time")):
        assert row[ours] == pytest.approx(want[theirs] * 1e6, rel=REL, abs=1000), (ours, row, want)


def tracelens_shapes(rel: str) -> dict:
    """(sheet, name, dims, types, concrete) -> [count, GFLOPs, MiB, kernel µs]: TraceLens' rows of
    one such key (it also splits by strides) added up."""
    out: dict = {}
    for sheet, rows in PEER["traces"][rel]["perf"].items():
        if sheet not in FAMILIES:
            continue
        for name, dims, types, concrete, count, gflops, mib, kernel_us in rows:
            row = out.setdefault((sheet, name, canon(dims), canon(types), canon(concrete)),
                                 [0, gflops, mib, 0.0])
            row[0] += count
            row[3] += kernel_us
    return out


@pytest.mark.parametrize("rel", TRACES)
def test_op_efficiency_per_shape_as_tracelens_perf_sheets(answers, lost_memsets, rel):
    """Each GEMM, CONV and SDPA shape of TraceLens is one op_efficiency row of its family with the
    same instances, GFLOPs and bytes (0.1 %: a convolution's bias counts here, +1 FLOP per output
    element), and with kernel_time=subtree the same kernel time. The names differ where TraceLens
    models the outer op (aten::convolution for cudnn/miopen_convolution), so rows pair by family,
    GFLOPs and bytes."""
    got = [r for r in answers("op_efficiency", kernel_time="subtree")[run_rank(rel)]
           if r["family"] in FAMILIES.values()]
    want = tracelens_shapes(rel)
    lost = {FAMILIES["CONV_bwd"]: 0, FAMILIES["CONV_fwd"]: 0}
    family_of = {"aten::convolution_backward": "CONV_bwd", "aten::miopen_convolution": "CONV_fwd"}
    for name, (_, ns) in lost_memsets[rel].items():
        lost[family_of[name]] += ns
    unmatched = list(got)
    for (sheet, name, *_), (count, gflops, mib, kernel_us) in want.items():
        [row] = [r for r in unmatched if r["family"] == FAMILIES[sheet] and r["instances"] == count
                 and r["gflops"] == pytest.approx(gflops, rel=REL)
                 and r["bytes"] / MIB == pytest.approx(mib, rel=REL)][:1] or [None]
        assert row is not None, (sheet, name, count, gflops, mib)
        unmatched.remove(row)
        if lost.get(row["family"]) is not None and lost_memsets[rel]:
            lost[row["family"]] -= row["gpu_ns"] - kernel_us * 1000
        else:
            assert close_ns(row["gpu_ns"], kernel_us, row["kernels"]), (sheet, name, row, kernel_us)
    assert unmatched == []
    assert all(abs(ns) <= NS_PER_OP * 1000 for ns in lost.values()), lost


@pytest.mark.parametrize("rel", TRACES)
def test_op_efficiency_per_instance(answers, lost_memsets, rel):
    """Each op TraceLens and tracewh both model under one name (GEMMs, convolution_backward,
    ...), by its External id: GFLOPs, bytes and, with kernel_time=subtree, kernel time."""
    got = {(r["name"], r["external_id"]): r
           for r in answers("op_efficiency", kernel_time="subtree", per="instance")[run_rank(rel)]
           if r["family"] in FAMILIES.values()}
    theirs = [row for sheet, rows in PEER["traces"][rel]["instances"].items()
              if sheet in ("GEMM", "CONV", "SDPA") for row in rows]
    shared = {name for name, _ in got} & {row[0] for row in theirs}
    lost = defaultdict(float)
    for name, external_id, gflops, mib, kernel_us in theirs:
        if name not in shared:
            continue
        row = got.pop((name, external_id))
        assert row["gflops"] == pytest.approx(gflops, rel=REL), (name, external_id)
        assert row["bytes"] / MIB == pytest.approx(mib, rel=REL), (name, external_id)
        if name in lost_memsets[rel]:
            lost[name] += row["gpu_ns"] - kernel_us * 1000
        else:
            assert close_ns(row["gpu_ns"], kernel_us, row["kernels"]), (name, external_id, row, kernel_us)
    assert [key for key in got if key[0] in shared] == []  # every instance of a shared name paired
    for name, ns in lost.items():
        assert abs(ns - lost_memsets[rel][name][1]) <= NS_PER_OP * 1000, name


def test_dlrm_worker0_has_tracelens_22_gemm_shapes(answers):
    """Issue 37: the DLRM kernels carry the correlation id as External id; by the launch link
    op_efficiency finds TraceLens' 22 GEMM shapes on worker 0, with equal GFLOPs."""
    rel = next(t for t in TRACES if t.startswith(DLRM + "worker0_"))
    want = sorted((name, canon(dims), gflops)
                  for name, dims, _, _, _, gflops, _, _ in PEER["traces"][rel]["perf"]["GEMM"])
    got = sorted((r["name"], canon(r["input_dims"]), r["gflops"])
                 for r in answers("op_efficiency")[run_rank(rel)] if r["family"] == "GEMM")
    assert len(want) == 22 and [w[:2] for w in want] == [g[:2] for g in got]
    assert all(g[2] == pytest.approx(w[2], rel=1e-12) for w, g in zip(want, got))
