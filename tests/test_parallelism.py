"""The parallelism metric: generated DDP, FSDP, ZeRO-2, TP x DP, pipeline and MoE jobs are
labelled as what the generator built, runs take tp/dp/pp/ep/zero_stage from them (inferred),
and the real traces of ../shared/data are described with their evidence."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.generate.parallel import JOBS, generate_parallel_job, job
from tracewh.metrics import find_metric, run_metric

runner = CliRunner()

# (process group, collective) -> pattern, calls per rank and iteration (forward, backward,
# optimizer), as the generator's schemes launch them: 4 layers, 4 ranks (pipeline: 2)
EXPECTED = {
    "ddp": {("0", "AllReduce"): ("DDP / ZeRO-1", 0, 2, 0)},           # a bucket every 2 layers
    "fsdp": {("0", "AllGather"): ("FSDP / ZeRO-3", 4, 4, 0),          # each layer, both passes
             ("0", "ReduceScatter"): ("FSDP / ZeRO-3", 0, 4, 0)},
    "zero2": {("0", "ReduceScatter"): ("ZeRO-2", 0, 2, 0),
              ("0", "AllGather"): ("ZeRO-2", 0, 0, 1)},
    "tp_dp": {("1", "AllReduce"): ("tensor parallel", 4, 4, 0),
              ("2", "AllReduce"): ("tensor parallel", 4, 4, 0),
              ("3", "AllReduce"): ("DDP / ZeRO-1", 0, 2, 0),
              ("4", "AllReduce"): ("DDP / ZeRO-1", 0, 2, 0)},
    "pp": {("0", "Send"): ("pipeline parallel", 0.5, 0.5, 0),          # stage 0 in fwd, 1 in bwd
           ("0", "Recv"): ("pipeline parallel", 0.5, 0.5, 0)},
    "moe": {("1", "AllToAll"): ("expert parallel", 8, 8, 0),           # dispatch + combine
            ("0", "AllReduce"): ("DDP / ZeRO-1", 0, 2, 0)},
    "moe_dropless": {("1", "AllToAll"): ("expert parallel", 8, 8, 0),  # all_to_allv
                     ("0", "AllReduce"): ("DDP / ZeRO-1", 0, 2, 0)},
}
# what runs infers: (tp, dp, pp, ep, zero_stage)
INFERRED = {"ddp": (None, 4, None, None, None), "fsdp": (None, 4, None, None, 3),
            "zero2": (None, 4, None, None, 2), "tp_dp": (2, 2, None, None, None),
            "pp": (None, None, 2, None, None), "moe": (None, 4, None, 4, None),
            "moe_dropless": (None, 4, None, 4, None)}


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("parallel")
    for kind in JOBS:
        generate_parallel_job(folder / "traces" / kind, kind)
    db = folder / "wh.duckdb"
    result = runner.invoke(app, ["ingest", "--quiet", "--db", str(db), str(folder / "traces")])
    assert result.exit_code == 0, result.stderr
    return db


@pytest.mark.parametrize("kind", JOBS)
def test_generated_jobs_are_labelled(generated, kind):
    con = tracewh.connect(generated, read_only=True)
    got = run_metric(con, find_metric("parallelism"), {"run": kind}).to_pylist()
    runs = con.execute("SELECT tp, dp, pp, ep, zero_stage, config_sources FROM runs WHERE run_id = ?",
                       [kind]).fetchall()
    con.close()
    assert {(r["process_group"], r["collective"]): (
        r["pattern"], r["forward_per_iteration"], r["backward_per_iteration"],
        r["optimizer_per_iteration"]) for r in got} == EXPECTED[kind]
    assert all(r["evidence"].startswith(r["collective"]) and str(r["group_size"]) in r["evidence"]
               for r in got)
    *sizes, sources = runs[0]
    assert tuple(sizes) == INFERRED[kind]
    assert set(sources.values()) == {"inferred"}
    tp, dp, pp = ((size or 1) for size in sizes[:3])
    assert tp * dp * pp <= job(kind).world_size


def test_ring_exchange_between_replicas_is_no_pipeline(tmp_path):
    """The nsys generator's 4-rank job reduces gradients over all 4 ranks in backward and swaps
    a SendRecv with its ring neighbours in forward: dp 4, not dp 4 and pp 4 on 4 ranks; and
    pipeline_bubble, with no pp anywhere, says its bubble is only GPU time without compute."""
    generate_job(tmp_path / "ddp", JobSpec(world_size=4, iterations=3, layers=2))
    db = tmp_path / "wh.duckdb"
    assert runner.invoke(app, ["ingest", "-q", "--db", str(db), str(tmp_path / "ddp")]).exit_code == 0
    con = tracewh.connect(db, read_only=True)
    got = {r["collective"]: r for r in run_metric(con, find_metric("parallelism"), {}).to_pylist()}
    sizes = con.execute("SELECT tp, dp, pp, world_size FROM runs").fetchall()
    con.close()
    assert got["AllReduce"]["pattern"] == "DDP / ZeRO-1"
    assert got["Send"]["pattern"] == got["Recv"]["pattern"] == "unclassified"
    assert "replicas, not pipeline stages" in got["Send"]["evidence"]
    assert sizes == [(None, 4, None, 4)]
    result = runner.invoke(app, ["query", "pipeline_bubble", "--db", str(db), "--format", "csv"])
    assert result.exit_code == 0, result.stderr
    notes = {line.rsplit(",", 1)[-1] for line in result.stdout.splitlines()[1:]}
    assert len(notes) == 1 and "bubble_pct is only GPU time without compute" in notes.pop()


def test_pipeline_bubble_reads_the_runs_pp(tmp_path):
    """The generated 2-stage pipeline: stages from the inferred pp (2); --run-param pp=4 beats it;
    the ideal bubble with 4 microbatches is (p-1)/(m+p-1)."""
    generate_parallel_job(tmp_path / "pp", "pp")
    for pp, stages in ((None, 2), ("4", 4)):
        db = tmp_path / f"wh{pp}.duckdb"
        extra = ["--run-param", f"pp={pp}"] if pp else []
        assert runner.invoke(app, ["ingest", "-q", "--db", str(db), str(tmp_path / "pp"), *extra]).exit_code == 0
        con = tracewh.connect(db, read_only=True)
        got = run_metric(con, find_metric("pipeline_bubble"), {"microbatches": "4"}).to_pylist()
        con.close()
        assert got and {(r["stages"], r["note"]) for r in got} == {(stages, None)}
        assert got[0]["ideal_bubble_pct"] == pytest.approx((stages - 1) * 100 / (4 + stages - 1))


def test_what_users_say_beats_the_inference(generated, tmp_path):
    """--run-param is trusted above what the trace shows."""
    db = tmp_path / "wh.duckdb"
    generate_parallel_job(tmp_path / "tp", "tp_dp")
    assert runner.invoke(app, ["ingest", "-q", "--db", str(db), str(tmp_path / "tp"),
                               "--run-param", "tp=8"]).exit_code == 0
    con = tracewh.connect(db, read_only=True)
    got = con.execute("SELECT tp, dp, config_sources['tp'], config_sources['dp'] FROM runs").fetchall()
    con.close()
    assert got == [(8, 2, "run-param", "inferred")]


def test_real_traces_say_what_they_see(shared_data, tmp_path):
    """DLRM (8 ranks, PyTorch 2023): AllToAll of embeddings plus the gradient AllReduce; HTA's
    DDP sample: AllReduce of 25 MB buckets in backward; nsys-ai's two ranks: Send/Recv."""
    db = tmp_path / "wh.duckdb"
    result = runner.invoke(app, ["ingest", "-q", "--db", str(db),
                                 str(shared_data / "kineto/param/dlrm_kineto"),
                                 str(shared_data / "kineto/hta/nccl_parser_config"),
                                 str(shared_data / "nsys/nsys-ai/mfu_2gpu_before.sqlite")])
    assert result.exit_code == 0, result.stderr
    con = tracewh.connect(db, read_only=True)
    got = {(r["run_id"], r["collective"]): r
           for r in run_metric(con, find_metric("parallelism"), {}).to_pylist()}
    con.close()
    all_to_all, all_reduce = got["dlrm_kineto", "AllToAll"], got["dlrm_kineto", "AllReduce"]
    assert all_to_all["pattern"] == "expert parallel" and all_to_all["group_size"] == 8
    assert all_to_all["calls_per_iteration"] == 5 and all_to_all["forward_per_iteration"] == 1
    assert all_reduce["pattern"] == "DDP / ZeRO-1"
    assert (all_reduce["calls_per_iteration"], all_reduce["backward_per_iteration"]) == (3, 3)
    assert "ranks [0, 1, 2, 3, 4, 5, 6, 7]" in all_reduce["evidence"]
    ddp = got["nccl_parser_config", "AllReduce"]
    assert (ddp["pattern"], ddp["backward_per_iteration"], ddp["median_bytes"]) == (
        "DDP / ZeRO-1", 5, 26_255_360)
    assert got["nccl_parser_config", "Broadcast"]["pattern"] == "DDP / ZeRO-1"  # buffers
    assert got["nsys-ai", "Send"]["pattern"] == "pipeline parallel"
    con = tracewh.connect(db, read_only=True)
    sizes = con.execute("SELECT run_id, tp, dp, pp, world_size FROM runs ORDER BY run_id").fetchall()
    con.close()
    # tp x dp x pp within the ranks (expert parallelism is carved out of dp, as in Megatron)
    assert [(run, tp, dp, pp) for run, tp, dp, pp, _ in sizes] == [
        ("dlrm_kineto", None, 8, None), ("nccl_parser_config", None, 2, None), ("nsys-ai", None, None, 2)]
