"""The synthetic Kineto traces look like real torch 2.13 ones and contain exactly what KinetoTruth says."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path

import pytest

from tracewh.generate.kineto import KinetoJobSpec, KinetoTruth, generate_kineto_job

BASE = 1_790_857_026_000_000_000
SPEC = KinetoJobSpec(world_size=4, iterations=4, layers=3, seed=0, gzip=False, base_time_ns=BASE)
# names a generated file may use although the (re-serialized, stripped) b200 trace lacks them: where the
# real corpus shows them. "Seq" is only in kineto 2026 (pytorch/kineto#1294/#1296), no real file has it yet.
EXTRA_NAMES = {
    "gpu_memset": "kineto/hta/nccl_parser_config/nccl_data.json.gz",
    "Comms Id": "kineto/hta/large_integer_trace/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz",
    "Seq": None,
}
FILE_NAME = re.compile(r"^(?P<host>[\w.-]+)_(?P<pid>\d+)\.(?P<time_ns>\d{19})\.pt\.trace\.json(\.gz)?$")


def _load(path: Path, **kw) -> dict:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f, **kw)


def _ns(value) -> int:
    """A relative µs value (parsed as Decimal) -> integer ns."""
    return int(value * 1000)


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> KinetoTruth:
    return generate_kineto_job(tmp_path_factory.mktemp("kineto"), SPEC)


@pytest.fixture(scope="module")
def traces(job) -> dict[int, dict]:
    """rank -> the parsed file, floats as Decimal (exact ns)."""
    return {job.file_rank[p]: _load(p, parse_float=Decimal) for p in job.files}


@pytest.fixture(scope="module")
def real(shared_data) -> dict[str, dict]:
    kineto = shared_data / "kineto"
    return {"b200": _load(kineto / "tracelens/b200/eager_trace.json.gz"),
            "torch213": _load(kineto / "generated/rank-0.json")}


def _by_cat(trace: dict, cat: str) -> list[dict]:
    return [e for e in trace["traceEvents"] if e.get("cat") == cat]


# ---- format -----------------------------------------------------------------------------------


def test_files_named_like_tensorboard_trace_handler(job, traces):
    assert len(job.files) == SPEC.world_size
    for path in job.files:
        m = FILE_NAME.match(path.name)
        assert m, path.name
        rank = job.file_rank[path]
        assert m["host"] == job.hostnames[rank] and int(m["pid"]) == job.pids[rank]
        assert f"rank{rank}" not in path.name
        info = traces[rank]["distributedInfo"]
        assert (info["rank"], info["world_size"], info["backend"]) == (rank, 4, "nccl")
        assert info["nccl_version"] and info["pg_config"][0]["ranks"] == [0, 1, 2, 3]
        assert traces[rank]["traceName"] == job.trace_names[path] == str(path)


def test_top_level_keys_in_the_real_newest_order(traces, real):
    for trace in traces.values():
        keys = list(trace)
        assert keys[:2] == ["schemaVersion", "deviceProperties"]
        assert keys[-4:] == ["displayTimeUnit", "baseTimeNanoseconds", "traceEvents", "traceName"]
        # the middle is kineto's metadata unordered_map (the two real files disagree): keys seen in the
        # real newest files, in the b200 file's order where both have them
        assert set(keys) <= set(real["b200"]) | set(real["torch213"])
        assert [k for k in keys if k in real["b200"]] == [k for k in real["b200"] if k in trace]
        assert len(trace["deviceProperties"]) == SPEC.gpus_per_node
        assert set(trace["deviceProperties"][0]) == set(real["b200"]["deviceProperties"][0])
        assert trace["baseTimeNanoseconds"] == BASE and trace["displayTimeUnit"] == "ms"


def test_pretty_printed_like_kineto(job, real, shared_data):
    """Every structural line of a generated file has a shape seen in the real torch 2.13 file."""

    def shapes(text: str) -> set[str]:
        out, args_line = set(), False
        for line in text.split("\n"):
            if args_line:  # the one-line args content differs per event kind
                args_line = False
                continue
            args_line = line.endswith('"args": {')
            shape = re.sub(r'"(?:[^"\\]|\\.)*"', "S", line)
            out.add(re.sub(r"-?\d+(?:\.\d+)?", "N", shape))
        return out

    real_text = (shared_data / "kineto/generated/rank-0.json").read_text()
    ours = job.files[0].read_text()
    header_end = ours.index('"traceEvents": [')
    assert shapes(ours[header_end:]) <= shapes(real_text[real_text.index('"traceEvents": ['):])
    assert ours.startswith(' {\n    "schemaVersion": 1,\n    "deviceProperties": [')
    assert ours.endswith('\n  }\n  ],"traceName": "%s" }' % job.files[0])


def test_ts_and_dur_have_exactly_three_decimals(job):
    text = job.files[1].read_text()
    values = re.findall(r'"(ts|dur)": ([^,\n]+)', text)
    assert len(values) > 1000
    bad = [v for v in values if not re.fullmatch(r"\d+\.\d{3}", v[1])]
    assert not bad, bad[:5]


def test_names_exist_in_real_traces(traces, real, shared_data):
    allowed_cats, allowed_args, allowed_ph = set(), set(), set()
    for ref in real.values():
        for e in ref["traceEvents"]:
            allowed_cats.add(e.get("cat"))
            allowed_ph.add(e["ph"])
            allowed_args.update(e.get("args", {}))
    for name, source in EXTRA_NAMES.items():
        if source:
            with gzip.open(shared_data / source, "rt") as f:
                assert f'"{name}"' in f.read(), (name, source)
    for trace in traces.values():
        events = trace["traceEvents"]
        assert {e.get("cat") for e in events} - allowed_cats <= set(EXTRA_NAMES)
        assert {e["ph"] for e in events} <= allowed_ph
        assert {k for e in events for k in e.get("args", {})} - allowed_args <= set(EXTRA_NAMES)
        for kernel in _by_cat(trace, "kernel")[:1]:  # full kernel args as on B200
            b200_kernel = next(e for e in real["b200"]["traceEvents"] if e.get("cat") == "kernel"
                               and "External id" in e["args"])
            assert list(kernel["args"]) == list(b200_kernel["args"])


# ---- content = truth --------------------------------------------------------------------------


def test_event_counts_equal_truth(job, traces):
    for rank, trace in traces.items():
        counts = Counter((e["ph"], e.get("cat")) for e in trace["traceEvents"])
        assert counts == job.event_counts[rank]
        assert counts[("X", "kernel")] == len(job.kernels[rank])
        assert counts[("X", "gpu_memcpy")] == len(job.memcpy[rank])
        assert counts[("X", "gpu_memset")] == len(job.memset[rank])
        assert counts[("X", "cuda_runtime")] == job.runtime_calls[rank]
        assert counts[("X", "cuda_driver")] == job.driver_calls[rank]
        assert counts[("X", "cpu_op")] == job.cpu_ops[rank]
        assert counts[("X", "user_annotation")] == len(job.user_annotations[rank])
        assert counts[("X", "gpu_user_annotation")] == len(job.gpu_annotations[rank])
        assert sum(e["args"]["bytes"] for e in _by_cat(trace, "gpu_memcpy")) == job.memcpy_bytes(rank)
        assert sum(e["args"]["bytes"] for e in _by_cat(trace, "gpu_memset")) == job.memset_bytes(rank)


def test_kernels_equal_truth(job, traces):
    for rank, trace in traces.items():
        base = trace["baseTimeNanoseconds"]
        ours = sorted((e["name"], base + _ns(e["ts"]), base + _ns(e["ts"]) + _ns(e["dur"]), e["pid"], e["tid"],
                       e["args"]["correlation"], e["args"]["External id"]) for e in _by_cat(trace, "kernel"))
        assert ours == sorted(k[:7] for k in job.kernels[rank])
        assert {k.kind for k in job.kernels[rank] if k.name.startswith("nccl")} == {"comm"}
    summary = job.kernel_summary(0)
    assert sum(s["instances"] for s in summary.values()) == len(job.kernels[0])


def test_every_gpu_op_has_its_launch_and_flows(traces):
    for trace in traces.values():
        events = trace["traceEvents"]
        launches = {e["args"]["correlation"]: e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver")}
        flows = defaultdict(set)
        for e in events:
            if e.get("cat") == "ac2g":
                flows[e["id"]].add(e["ph"])
        for e in events:
            if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
                launch = launches[e["args"]["correlation"]]
                assert launch["args"]["External id"] == e["args"]["External id"]
                assert launch["ts"] < e["ts"]
                assert flows[e["args"]["correlation"]] == {"s", "f"}
        assert len(set(launches)) == len(launches)  # correlation ids unique per file


def test_iterations_and_annotations(job, traces):
    for rank, trace in traces.items():
        base = trace["baseTimeNanoseconds"]
        steps = sorted((int(e["name"].split("#")[1]), base + _ns(e["ts"]), base + _ns(e["ts"]) + _ns(e["dur"]))
                       for e in _by_cat(trace, "user_annotation") if e["name"].startswith("ProfilerStep#"))
        assert steps == job.iterations[rank]
        assert [n for n, *_ in steps] == list(range(SPEC.first_step, SPEC.first_step + SPEC.iterations))
        gpu_steps = [e for e in _by_cat(trace, "gpu_user_annotation") if e["name"].startswith("ProfilerStep#")]
        assert {(e["pid"], e["tid"]) for e in gpu_steps} == {(job.devices[rank], 7), (job.devices[rank], 40)}
        # every GPU op launched in an iteration starts after its ProfilerStep started
        for k in job.kernels[rank]:
            n, start, _ = job.iterations[rank][k.iteration - SPEC.first_step]
            assert k.iteration == n and k.start_ns > start


def test_collectives(job, traces):
    by_key = defaultdict(dict)
    for rank, trace in traces.items():
        kernels = [e for e in _by_cat(trace, "kernel") if e["name"].startswith("nccl")]
        params = {e["args"]["External id"]: e for e in _by_cat(trace, "cpu_op") if e["name"] == "record_param_comms"}
        assert len(kernels) == len(job.nccl_ops[rank]) == 2 * SPEC.iterations
        for k in kernels:
            a, p = k["args"], params[k["args"]["External id"]]["args"]
            for key in ("Collective name", "dtype", "In msg nelems", "Out msg nelems", "Group size",
                        "Process Group Name", "Process Group Description", "Process Group Ranks", "Seq", "Comms Id"):
                assert a[key] == p[key], key
            assert "Rank" not in a and p["Rank"] == rank
            by_key[(a["Process Group Name"], a["Seq"])][rank] = (a["Collective name"], a["Comms Id"])
        for op in job.nccl_ops[rank]:
            assert rank in op.pg_ranks and op.group_size == len(op.pg_ranks)
            assert op.bytes == (op.in_bytes if op.collective == "AllReduce" else op.out_bytes)
    # the same collective has the same (pg, Seq) on each member and nowhere else
    for (pg, seq), members in by_key.items():
        assert len(set(members.values())) == 1
        ranks = next(op.pg_ranks for op in job.nccl_ops[min(members)] if op.pg_name == pg and op.seq == seq)
        assert sorted(members) == list(ranks)
    assert {pg for pg, _ in by_key} == {"0", "1", "2"}
    assert any(op.comms_id > 2**63 - 1 for ops in job.nccl_ops.values() for op in ops)
    # Seq alone is ambiguous across process groups on purpose
    assert len({seq for _, seq in by_key}) < len(by_key)


def test_comm_overlaps_compute(job):
    for rank in range(SPEC.world_size):
        comm = sum(k.end_ns - k.start_ns for k in job.kernels[rank] if k.kind == "comm")
        assert 0 < job.comm_overlap_ns[rank] < comm
    # an AllReduce ends within a few µs on every rank (no skew here)
    ends = defaultdict(list)
    for ops in job.nccl_ops.values():
        for op in ops:
            ends[(op.pg_name, op.seq)].append(op.end_ns)
    assert max(max(v) - min(v) for v in ends.values()) <= 3_000


# ---- variants ---------------------------------------------------------------------------------


def test_deterministic(job, tmp_path):
    again = generate_kineto_job(tmp_path, SPEC)
    assert [p.name for p in again.files] == [p.name for p in job.files]
    assert all(a.read_bytes().replace(bytes(tmp_path), b"") == b.read_bytes().replace(bytes(b.parent), b"")
               for a, b in zip(again.files, job.files))


def test_gzip_round_trips(job, traces, tmp_path):
    truth = generate_kineto_job(tmp_path, KinetoJobSpec(**{**SPEC.__dict__, "gzip": True}))
    for path in truth.files:
        assert path.name.endswith(".pt.trace.json.gz") and FILE_NAME.match(path.name)
        assert path.read_bytes()[:2] == b"\x1f\x8b"
        data = _load(path, parse_float=Decimal)
        rank = truth.file_rank[path]
        assert data["traceName"].startswith("/tmp/tmp")  # export_chrome_trace gzips a temp file
        assert data["traceEvents"] == traces[rank]["traceEvents"]


def test_clock_skew_and_per_file_base(job, traces, tmp_path):
    skew = {1: 2_500_000, 3: -1_234_567}
    base1 = BASE - 7_889_238 * 10**9  # rank 1's process started in the previous trimonth
    spec = KinetoJobSpec(**{**SPEC.__dict__, "clock_skew_ns": skew, "base_time_overrides": {1: base1}})
    truth = generate_kineto_job(tmp_path, spec)
    for rank in range(SPEC.world_size):
        data = _load(truth.rank_file[rank], parse_float=Decimal)
        assert data["baseTimeNanoseconds"] == (base1 if rank == 1 else BASE)
        shift = skew.get(rank, 0)
        assert [k.start_ns - shift for k in truth.kernels[rank]] == [k.start_ns for k in job.kernels[rank]]
        first = next(e for e in data["traceEvents"] if e.get("cat") == "kernel")
        ref = next(e for e in traces[rank]["traceEvents"] if e.get("cat") == "kernel")
        assert data["baseTimeNanoseconds"] + _ns(first["ts"]) == BASE + _ns(ref["ts"]) + shift
    assert truth.clock_skew_ns == {0: 0, 1: 2_500_000, 2: 0, 3: -1_234_567}


def test_target_size(tmp_path):
    spec = KinetoJobSpec(world_size=2, iterations=2, target_bytes_per_rank=3_000_000, gpus_per_node=2)
    truth = generate_kineto_job(tmp_path, spec)
    sizes = [p.stat().st_size for p in truth.files]
    assert all(abs(s - 3_000_000) < 150_000 for s in sizes), sizes
    assert truth.hostnames == {0: "node0", 1: "node0"} and truth.devices == {0: 0, 1: 1}


# ---- host causes: cuda_sync events, python frames, phase annotations ---------------------------

HOST_SPEC = KinetoJobSpec(world_size=2, iterations=2, layers=2, seed=4, sync_stalls=True, python_frames=True,
                          phase_annotations=True, profile_memory=True)


@pytest.fixture(scope="module")
def host_job(tmp_path_factory) -> KinetoTruth:
    return generate_kineto_job(tmp_path_factory.mktemp("kineto_host"), HOST_SPEC)


def test_syncs_and_frames_laid_out_as_in_real_traces(host_job, real, shared_data):
    """cuda_sync events as HTA's alexnet trace (PyTorch 2.x) has them, inside the call that waited;
    python_function frames as the b200 trace (with_stack=True) has them, nested by parent id;
    [memory] events as the H100 timesformer trace (profile_memory=True) has them."""
    alexnet = _load(shared_data / "kineto/hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz")
    timesformer = _load(next((shared_data / "kineto/tracelens/pairs/h100").glob("facebook_timesformer*")))
    real_memory = next(e for e in timesformer["traceEvents"] if e.get("name") == "[memory]")
    real_syncs = {e["name"]: e for e in _by_cat(alexnet, "cuda_sync")}
    real_frames = {e["name"].startswith("nn.Module: "): e for e in _by_cat(real["b200"], "python_function")}
    for path in host_job.files:
        rank, trace = host_job.file_rank[path], _load(path, parse_float=Decimal)
        assert Counter((e["ph"], e.get("cat")) for e in trace["traceEvents"]) == host_job.event_counts[rank]
        calls = {e["args"]["correlation"]: e for e in trace["traceEvents"] if e.get("cat") == "cuda_runtime"}
        flows = Counter((e["id"], e["ph"]) for e in _by_cat(trace, "ac2g"))
        syncs = _by_cat(trace, "cuda_sync")
        assert {e["name"] for e in syncs} == set(real_syncs) == {"Stream Sync", "Context Sync", "Stream Wait Event"}
        for e in syncs:
            ref, call = real_syncs[e["name"]], calls[e["args"]["correlation"]]
            assert list(e["args"]) == list(ref["args"]) and e["args"]["cuda_sync_kind"] == e["name"]
            assert (e["pid"], e["tid"]) == (host_job.devices[rank], e["args"]["stream"] if ref["tid"] != -1 else -1)
            assert call["name"] == {"Stream Sync": "cudaStreamSynchronize", "Context Sync": "cudaDeviceSynchronize",
                                    "Stream Wait Event": "cudaStreamWaitEvent"}[e["name"]]
            assert call["ts"] < e["ts"] and e["ts"] + e["dur"] < call["ts"] + call["dur"]
            assert call["args"]["External id"] == e["args"]["External id"]
            assert flows[e["args"]["correlation"], "s"] == flows[e["args"]["correlation"], "f"] == 1
        frames = {e["args"]["Python id"]: e for e in _by_cat(trace, "python_function")}
        for e in frames.values():
            assert list(e["args"]) == list(real_frames[e["name"].startswith("nn.Module: ")]["args"])
            parent = frames.get(e["args"]["Python parent id"])
            if parent is None:  # the caller is outside the trace: the model, the loss
                assert e["name"] in ("nn.Module: Model_0", "torch/nn/functional.py(3858): mse_loss")
                continue
            assert parent["ts"] < e["ts"] and e["ts"] + e["dur"] < parent["ts"] + parent["dur"]
            if parent["name"].startswith("nn.Module: "):
                assert e["name"] == "torch/nn/modules/module.py(1779): _call_impl"
        # each layer's aten::linear runs inside its Linear module
        linears = [f for f in frames.values() if f["name"].startswith("nn.Module: Linear_")]
        for op in (e for e in _by_cat(trace, "cpu_op") if e["name"] == "aten::linear"):
            assert sum(f["ts"] < op["ts"] and op["ts"] + op["dur"] < f["ts"] + f["dur"] for f in linears) == 1
        memory = [e for e in trace["traceEvents"] if e.get("name") == "[memory]"]
        assert len(memory) == len(host_job.memory[rank]) == 2 * 4 * HOST_SPEC.layers * HOST_SPEC.iterations
        for e in memory:
            assert [k for k in e if k != "args"] == [k for k in real_memory if k != "args"]
            assert list(e["args"]) == list(real_memory["args"]) and e["args"]["Device Type"] == 1
        phases = Counter(e["name"] for e in _by_cat(trace, "user_annotation") if e["name"].startswith("## "))
        assert phases == {f"## {p} ##": HOST_SPEC.iterations for p in ("forward", "backward", "optimizer")}
