"""critical_path across ranks on generated jobs whose schedule the generator computed itself
(tracewh.generate.parallel's timed jobs): the path's edges and bound_by classes are asserted
exactly against the generator's own kernel and call times."""

from __future__ import annotations

import pytest

import tracewh
from tracewh.generate.parallel import GAP_NS, LATENCY_NS, LAUNCH_BOUND, STRAGGLER, generate_timed_job
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric

STAGES = 4


def ingest(tmp_path_factory, kind, **knobs):
    out = tmp_path_factory.mktemp(f"cp_{kind}")
    truth = generate_timed_job(out / "traces", kind, stages=STAGES, steps=2, **knobs)
    con = tracewh.connect(out / "wh.duckdb")
    results = ingest_paths(con, [out / "traces"], run=kind)
    assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    return con, truth


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    con, truth = ingest(tmp_path_factory, "pipeline")
    yield con, truth
    con.close()


@pytest.fixture(scope="module")
def launch_bound(tmp_path_factory):
    con, truth = ingest(tmp_path_factory, "launch_bound")
    yield con, truth
    con.close()


def query(con, **params):
    return run_metric(con, find_metric("critical_path"), params).to_pylist()


def expected_pipeline_path(truth, step):
    """The chain the pipeline's schedule made: rank 0's forward GEMM, each stage's recv released
    by the send before it, the last stage's forward and backward, back to rank 0's backward GEMM
    and its final synchronize. (rank, edge_type, bound_by, start, end) per edge."""
    ks = {r: [k for k in truth.kernels[r] if k["step"] == step] for r in truth.kernels}
    gemm = lambda r, phase: [k for k in ks[r] if k["key"] is None][phase]
    p2p = lambda r, collective, phase: next(k for k in ks[r] if k["collective"] == collective
                                            and k["key"].startswith(phase))
    edges = []

    def run(r, kernel, bound):
        if edges and edges[-1][0] == r and edges[-1][1] not in ("send_recv", "launch"):
            edges.append((r, "kernel_kernel", "gpu_kernel_kernel_overhead", edges[-1][4], kernel["start_ns"]))
        edges.append((r, "operator", bound, kernel["start_ns"], kernel["end_ns"]))

    def cross(sender, r, phase):
        send, recv = p2p(sender, "Send", phase), p2p(r, "Recv", phase)
        edges.append((sender, "kernel_kernel", "gpu_kernel_kernel_overhead", edges[-1][4], send["start_ns"]))
        edges.append((r, "send_recv", f"waiting for rank {sender}", send["start_ns"], send["start_ns"]))
        edges.append((r, "operator", "gpu_communication_bound", send["start_ns"], recv["end_ns"]))

    # its launch, weight 0: the next launch came before it started, so HTA's rule gives it neither
    # a launch delay nor a previous op; the launching call is the first of the step
    first = gemm(0, 0)
    edges.append((0, "launch", "gpu_kernel_launch_overhead", first["launch_ns"], first["start_ns"]))
    run(0, first, "gpu_compute_bound")
    for r in range(1, STAGES):
        cross(r - 1, r, "fwd")
        run(r, gemm(r, 0), "gpu_compute_bound")
    run(STAGES - 1, gemm(STAGES - 1, 1), "gpu_compute_bound")
    for r in range(STAGES - 2, -1, -1):
        cross(r + 1, r, "bwd")
        run(r, gemm(r, 1), "gpu_compute_bound")
    sync = [c for c in truth.calls[0] if c["step"] == step][-1]
    edges.append((0, "sync", "", edges[-1][4], sync["end_ns"] - 200))  # the sync event's end
    return edges


@pytest.mark.parametrize("instance", [0, 1])
def test_a_pipeline_step_ends_on_the_send_recv_chain(pipeline, instance):
    con, truth = pipeline
    path = query(con, run="pipeline", ranks="all", instance=instance)
    got = [(e["rank"], e["edge_type"], e["bound_by"], e["start_ns"], e["end_ns"]) for e in path]
    want = expected_pipeline_path(truth, instance + 1)
    assert got == want
    # every stage crossed, each crossing at the send from the stage before (forward) or after
    crossings = [(e["rank"], e["bound_by"]) for e in path if e["edge_type"] == "send_recv"]
    assert crossings == ([(r, f"waiting for rank {r - 1}") for r in range(1, STAGES)]
                         + [(r, f"waiting for rank {r + 1}") for r in range(STAGES - 2, -1, -1)])
    step = query(con, run="pipeline", ranks="all", instance=instance, per="step")[0]
    assert step["end_rank"] == 0 and step["ranks_crossed"] == list(range(STAGES))
    assert step["path_ns"] == want[-1][3] - want[1][3] == sum(e[4] - e[3] for e in want[1:-1])
    # the classes: per stage its GEMMs, two transfers of 20 us but the ends, the 1 us gaps
    classes = {c["bound_by"]: c["dur_ns"] for c in
               query(con, run="pipeline", ranks="all", instance=instance, per="class")}
    gemms = sum(100_000 + 10_000 * r + 200_000 + 20_000 * r for r in range(STAGES))
    assert classes["gpu_compute_bound"] == gemms
    assert classes["gpu_communication_bound"] == 2 * (STAGES - 1) * 20_000
    assert classes["gpu_kernel_kernel_overhead"] == (4 * (STAGES - 1) + 1) * GAP_NS


def test_each_stage_alone_has_no_send_recv_edge(pipeline):
    con, _ = pipeline
    for rank in range(STAGES):
        path = query(con, run="pipeline", rank=rank, instance=0)
        assert {e["rank"] for e in path} == {rank}
        assert "send_recv" not in {e["edge_type"] for e in path}


@pytest.mark.parametrize("rank", [0, 2, 3])
def test_the_path_crosses_to_the_launch_bound_rank(launch_bound, rank):
    con, truth = launch_bound
    for instance in (0, 1):
        path = query(con, run="launch_bound", ranks="all", rank=rank, instance=instance)
        tiny = [k for k in truth.kernels[LAUNCH_BOUND] if k["step"] == instance + 1][:-2]
        launches = [e for e in path if e["edge_type"] == "launch"]
        # every tiny kernel waited for its launch, on the launch-bound rank, as generated
        assert [(e["rank"], e["bound_by"], e["start_ns"], e["end_ns"]) for e in launches] == [
            (LAUNCH_BOUND, "gpu_kernel_launch_overhead", k["launch_ns"], k["start_ns"]) for k in tiny]
        assert all(e["dur_ns"] == LATENCY_NS for e in launches)
        computes = [(e["start_ns"], e["end_ns"]) for e in path
                    if e["rank"] == LAUNCH_BOUND and e["bound_by"] == "gpu_compute_bound"]
        assert computes == [(k["start_ns"], k["end_ns"]) for k in tiny]
        # the path reaches it at the AllReduce, the only crossing
        crossing = [(e["rank"], e["edge_type"], e["bound_by"]) for e in path
                    if e["edge_type"] in ("rendezvous", "send_recv")]
        assert crossing == [(rank, "rendezvous", f"waiting for rank {LAUNCH_BOUND}")]
        step = query(con, run="launch_bound", ranks="all", rank=rank, instance=instance, per="step")[0]
        assert step["ranks_crossed"] == sorted({rank, LAUNCH_BOUND})
        assert step["top_class"] == "gpu_kernel_launch_overhead"


def test_the_launch_bound_rank_alone_is_launch_bound(launch_bound):
    con, _ = launch_bound
    top = {r: query(con, run="launch_bound", rank=r, instance=0, per="step")[0]["top_class"]
           for r in range(STAGES)}
    # alone, the others see only their long AllReduce (the wait inside it), as HTA would
    assert top == {0: "gpu_communication_bound", 1: "gpu_kernel_launch_overhead",
                   2: "gpu_communication_bound", 3: "gpu_communication_bound"}


# --- what_if straggler_on_time against the same job generated without the straggler --------------

@pytest.mark.parametrize("loader_ns", [300_000, 1_000_000, 5_000_000])
def test_straggler_on_time_gives_the_step_without_the_straggler(tmp_path_factory, loader_ns):
    con, slow = ingest(tmp_path_factory, "straggler", loader_ns=loader_ns)
    on_time = generate_timed_job(tmp_path_factory.mktemp("cp_on_time"), "straggler", stages=STAGES,
                                 steps=2, loader_ns=0)
    try:
        for rank in range(STAGES):
            rows = run_metric(con, find_metric("what_if"), dict(
                run="straggler", ranks="all", rank=rank, scenario="straggler_on_time")).to_pylist()
            for r in rows:
                start, end = slow.steps[rank][r["instance"]]
                assert r["step_ns"] == end - start
                start, end = on_time.steps[rank][r["instance"]]
                if rank == STRAGGLER:  # its own path does not wait for anyone: no gain
                    assert r["gain_ns"] == 0
                else:
                    assert abs(r["new_step_ns"] - (end - start)) <= 0.01 * (end - start)
                    # the path crossed to the straggler and holds its loader
                    path = query(con, run="straggler", ranks="all", rank=rank, instance=r["instance"])
                    assert sum(e["dur_ns"] for e in path if e["bound_by"] == "data_loading") == loader_ns
                    assert {e["rank"] for e in path if e["bound_by"] == "data_loading"} == {STRAGGLER}
    finally:
        con.close()


# --- the path as flow arrows in the Chrome trace ------------------------------------------------

def test_the_chrome_trace_draws_the_path_across_ranks(tmp_path_factory, tmp_path):
    import json

    from typer.testing import CliRunner

    from tracewh.cli import app

    con, truth = ingest(tmp_path_factory, "pipeline")
    db = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
                     ).fetchone()[0]
    con.close()

    def export(*extra):
        out = tmp_path / f"trace{len(extra)}.json"
        result = CliRunner().invoke(app, ["export", str(out), "--format", "chrome-trace", "--run",
                                          "pipeline", "--db", db, *extra])
        assert result.exit_code == 0, result.output
        return json.loads(out.read_text())["traceEvents"]

    assert not [e for e in export() if e.get("cat") == "critical_path"]  # opt-in
    events = export("--critical-path")
    flows = [e for e in events if e.get("cat") == "critical_path"]
    starts = {e["id"]: e for e in flows if e["ph"] == "s"}
    ends = {e["id"]: e for e in flows if e["ph"] == "f"}
    assert starts.keys() == ends.keys() and all(e["bp"] == "e" for e in flows)
    # per step: the six sends the path crossed, rank to rank, then the last GPU op -> rank 0's
    # synchronize; each arrow starts at its send kernel's start and ends inside the recv kernel
    hops = [(starts[i]["pid"], ends[i]["pid"], ends[i]["args"]["bound_by"]) for i in sorted(starts)]
    one_step = [(r, r + 1, f"waiting for rank {r}") for r in range(STAGES - 1)] + \
               [(r, r - 1, f"waiting for rank {r}") for r in range(STAGES - 1, 0, -1)] + [(0, 0, "")]
    assert hops == one_step * 2
    slices = [e for e in events if e["ph"] == "X"]

    def inside(flow, begins):
        return [x for x in slices if x["pid"] == flow["pid"] and x["tid"] == flow["tid"]
                and (x["ts"] == flow["ts"] if begins else x["ts"] < flow["ts"] <= x["ts"] + x["dur"])]
    for i in sorted(starts):
        if ends[i]["args"]["bound_by"]:
            assert [x["name"] for x in inside(starts[i], True)] == [x["name"] for x in inside(ends[i], False)] \
                == ["ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"]
        else:  # the sync: from the last GEMM's end to the synchronize call, each 1 ns inside
            assert "cudaStreamSynchronize" in [x["name"] for x in inside(ends[i], False)]
