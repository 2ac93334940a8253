"""`tracewh generate` makes the scenarios from the command line (issue 38 item 5): a 1/2/4-node
series where communication grows with nodes and one where the data loader does, and `tracewh
query scaling` on each says the scaling study's two sentences with the generator's numbers.

The numbers are recomputed here from the generator's truth (the same spec written again in
Python, byte for byte the CLI's files) by a sweep over each rank's kernels, copies and the
host's data-loader spans, never from the warehouse."""

from __future__ import annotations

import csv
import io
from collections import Counter

import pytest
from typer.testing import CliRunner

from tracewh.cli import app
from tracewh.generate import truth as truths
from tracewh.generate.series import generate_series

SERIES = ("communication", "data-loader")


def cli(*args):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def series(tmp_path_factory):
    """cause -> (scaling rows by run, the generator's truth by run)"""
    found = {}
    for cause in SERIES:
        folder = tmp_path_factory.mktemp(cause)
        cli("generate", "series", folder / "traces", "--cause", cause)
        known = generate_series(folder / "again", cause)
        for run, truth in known.items():
            for path in truth.files:
                written = (folder / "traces" / run / path.name).read_bytes()  # traceName: its path
                assert written.replace(b"/traces/", b"/again/") == path.read_bytes()
        cli("ingest", "-q", "--db", folder / "wh.duckdb", folder / "traces")
        out = cli("query", "scaling", "--db", folder / "wh.duckdb", "--format", "csv").stdout
        found[cause] = {r["run_id"]: r for r in csv.DictReader(io.StringIO(out))}, known
    return found


def sweep(known):
    """Summed over the run's ranks: (GPU span, ns an AllReduce kernel runs with no compute
    kernel, ns with no GPU op at all, of that the data loader's share by truth.gap_causes)."""
    window, parts = 0, Counter()
    for rank, kernels in known.kernels.items():
        edges = []
        for k in kernels:
            label = "allreduce" if "AllReduce" in k.name else k.kind
            edges += [(k.start_ns, 1, label), (k.end_ns, -1, label)]
        for m in known.memcpy[rank] + known.memset[rank]:
            edges += [(m.start_ns, 1, "mem"), (m.end_ns, -1, "mem")]
        edges.sort(key=lambda e: e[0])
        window += edges[-1][0] - edges[0][0]
        live, prev = Counter(), edges[0][0]
        for t, step, label in edges:
            on = {x for x, n in live.items() if n > 0}
            if "allreduce" in on and "compute" not in on:
                parts["allreduce"] += t - prev
            if not on:
                parts["idle"] += t - prev
            live[label] += step
            prev = t
        if known.host:
            parts["data"] += truths.gap_causes(known.host[rank], known.gpu_busy[rank],
                                               30_000)["data"]
    return window, parts


def test_communication_grows_with_nodes_and_is_named_gradient_synchronization(series):
    rows, known = series["communication"]
    assert list(rows) == ["1node", "2nodes", "4nodes"]
    share = {}
    for run, truth in known.items():
        window, parts = sweep(truth)
        share[run] = parts["allreduce"] * 100 / window
        assert int(rows[run]["window_ns"]) == window
    assert share["1node"] < 5 < 50 < share["2nodes"] < share["4nodes"]  # what it was built for
    four = rows["4nodes"]
    assert four["bottleneck"] == "exposed NCCL AllReduce"
    assert float(four["bottleneck_pct"]) == pytest.approx(share["4nodes"], abs=1e-9)
    assert four["sentence"] == (
        f"At 4 nodes, {round(share['4nodes'])}% of the step time is spent in gradient "
        f"synchronization (exposed NCCL AllReduce), up from {round(share['1node'])}% at 1 node")
    assert four["differs_in"] == ""  # one series: nothing but the size differs


def test_a_data_loader_that_cannot_keep_up_is_named_with_the_utilization(series):
    rows, known = series["data-loader"]
    util, data = {}, {}
    for run, truth in known.items():
        window, parts = sweep(truth)
        util[run] = 100 - parts["idle"] * 100 / window
        data[run] = parts["data"] * 100 / parts["idle"]
        assert float(rows[run]["idle_pct"]) == pytest.approx(100 - util[run], abs=1e-9)
    assert util["4nodes"] < util["2nodes"] < util["1node"] and data["4nodes"] > 50
    four = rows["4nodes"]
    assert (four["bottleneck"], four["idle_cause"]) == ("idle GPU time", "data loading")
    assert four["sentence"] == (
        f"At 4 nodes, GPU utilization drops to {round(util['4nodes'])}% (from "
        f"{round(util['1node'])}% at 1 node) because the data loader cannot keep up: "
        f"{round(100 - util['4nodes'])}% of the step time is idle GPU time, "
        f"{round(data['4nodes'])}% of it while the host was loading data")


@pytest.mark.parametrize("args, says", [
    (["series", "--cause", "disk"], "cause 'disk': one of communication, data-loader"),
    (["series", "--nodes", "1,two"], "--nodes '1,two': node counts separated by commas"),
    (["series", "--nodes", "2,2"], "nodes (2, 2): distinct counts, each at least 1"),
    (["kineto", "--slow-loader", "3:9:5"], "the trace holds ProfilerStep#2 to #4"),
    (["kineto", "--slow-loader", "7:3:5"], "rank 7 is not among the 4 ranks"),
    (["kineto", "--data-loader-ms", "-1"], "--data-loader-ms -1.0: a duration, 0 or more"),
    (["parallel", "--job", "ring"], "--job 'ring': one of ddp, fsdp, zero2, tp_dp, pp, moe, moe_dropless"),
    (["timed", "--kind", "slow"], "--kind 'slow': one of pipeline, launch_bound, straggler"),
])
def test_a_scenario_asked_wrongly_is_refused_in_one_line(tmp_path, args, says):
    kind, *options = args
    result = CliRunner().invoke(app, ["generate", kind, str(tmp_path / "out"), *options])
    assert result.exit_code == 1 and says in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_the_nsys_scenarios_reach_the_files(tmp_path):
    """Each nsys scenario option ends in the rows it stands for."""
    import sqlite3

    cli("generate", "nsys", tmp_path, "--ranks", "2", "--iterations", "3", "--data-loader-ms",
        "1.5", "--checkpoint-every", "2", "--autograd-nvtx", "--nccl-payloads", "--memory-usage")
    with sqlite3.connect(tmp_path / "rank0.sqlite") as db:
        names = Counter(text for (text,) in db.execute(
            "SELECT coalesce(e.text, s.value) FROM NVTX_EVENTS e "
            "LEFT JOIN StringIds s ON s.id = e.textId"))
        loader = db.execute(
            "SELECT e.end - e.start FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId "
            "WHERE coalesce(e.text, s.value) LIKE '%DataLoader%'").fetchall()
        blobs = db.execute("SELECT count(*) FROM NVTX_EVENTS WHERE binaryData IS NOT NULL").fetchone()
        memory = db.execute("SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS").fetchone()
    assert sum(n for name, n in names.items() if name and name.startswith("aten::")) > 100
    assert len(loader) == 3 and min(d for (d,) in loader) >= 1_500_000
    assert blobs[0] > 0 and memory[0] > 0
