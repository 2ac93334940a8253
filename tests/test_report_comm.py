"""The report's communication figures (issue 36 item 5) and the metric rows they draw.

comm_breakdown per_group (v2) and straggler_cause per_step (v2) are the rows behind the stacked
bars per process group and the rank x step lateness heatmap: each equals the metric's own finer
rows added up here, and on the generated 2-node job with one slow batch on rank 3 the heatmap's
cell for rank 3 and that step names data loading. Then the page in headless Chromium, and each
figure drawn from given rows (its bars and cells are the rows' values).
"""

from __future__ import annotations

import html
import json
import re
from collections import defaultdict

import pytest
from typer.testing import CliRunner

import tracewh
from test_report import CHROMIUM, PROBE, FakeMetrics, chromium, console_problems, figures
from tracewh.cli import app
from tracewh.generate.kineto import LINK_BYTES_PER_NS, KinetoJobSpec, generate_kineto_job
from tracewh.metrics import find_metric, run_metric

SLOW_BATCH = (3, 3)  # (rank, step)
FIGURES = ("comm_parts", "links", "lateness")


def rows(con, metric, **params):
    return run_metric(con, find_metric(metric), {k: str(v) for k, v in params.items()}).to_pylist()


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report_comm")
    truth = generate_kineto_job(folder / "job", KinetoJobSpec(
        world_size=4, gpus_per_node=2, subgroup_size=2, iterations=4,
        inter_node_gbps=LINK_BYTES_PER_NS / 4, slow_data_loader={SLOW_BATCH: 5_000_000}))
    db = folder / "wh.duckdb"
    result = CliRunner().invoke(app, ["ingest", "-q", "--db", str(db), "--run", "job",
                                      str(folder / "job")])
    assert result.exit_code == 0, result.stderr
    return db, truth, folder


def test_comm_breakdown_per_group_adds_up_its_rows(job):
    db, truth, _ = job
    with tracewh.connect(db, read_only=True) as con:
        fine = rows(con, "comm_breakdown", run="job", per_op="true")
        groups = rows(con, "comm_breakdown", run="job", per_group="true")
    want = defaultdict(lambda: defaultdict(int))
    steps = defaultdict(dict)  # group -> (rank, step) -> its duration, once
    for r in fine:
        for column in ("collectives", "duration_ns", "launch_ns", "wait_ns", "transfer_ns",
                       "launch_exposed_ns", "wait_exposed_ns", "transfer_exposed_ns"):
            want[r["process_group"]][column] += r[column]
        steps[r["process_group"]][r["rank"], r["iteration"]] = r["step_ns"]
    assert {r["process_group"] for r in groups} == set(want) == set(truth.link_gbps)
    for r in groups:
        assert r["rank"] is None and r["collective"] is None
        assert {c: r[c] for c in want[r["process_group"]]} == want[r["process_group"]]
        assert r["step_ns"] == sum(steps[r["process_group"]].values())
        assert r["wait_ns"] + r["transfer_ns"] + r["launch_ns"] == r["duration_ns"]
    # each group's collectives: as many as the generator launched on its ranks
    launched = defaultdict(int)
    for ops in truth.nccl_ops.values():
        for op in ops:
            launched[op.pg_name] += 1
    assert {r["process_group"]: r["collectives"] for r in groups} == launched


def test_straggler_cause_per_step_names_the_slow_batch(job):
    db, _, _ = job
    with tracewh.connect(db, read_only=True) as con:
        per_op = rows(con, "straggler_cause", run="job")
        per_step = rows(con, "straggler_cause", run="job", per_step="true")
    want = defaultdict(lambda: [0, 0])
    for r in per_op:
        want[r["iteration"], r["rank"]][0] += r["late_ns"]
        want[r["iteration"], r["rank"]][1] += 1
    assert {(r["iteration"], r["rank"]): [r["late_ns"], r["times_last"]] for r in per_step} == want
    rank, step = SLOW_BATCH
    slow = next(r for r in per_step if (r["rank"], r["iteration"]) == (rank, step))
    assert slow["cause"] == "data loading"
    assert slow["late_ns"] == max(r["late_ns"] for r in per_step)
    # the step's collectives on rank 3 each say data loading too
    causes = {r["cause"] for r in per_op if (r["rank"], r["iteration"]) == (rank, step)}
    assert causes == {"data loading"}


@pytest.fixture(scope="module")
def page(job):
    db, _, folder = job
    out = folder / "report"
    result = CliRunner().invoke(app, ["report", "--db", str(db), "--out", str(out), "--run", "job",
                                      "--formats", "png,svg", "--dpi", "80"])
    assert result.exit_code == 0, result.output
    return out


def test_the_page_draws_the_three_figures_with_their_metrics(page):
    items = figures(page)
    for stem, name in (("comm_parts", "comm_breakdown"), ("links", "link_efficiency"),
                       ("lateness", "straggler_cause")):
        metric = f"{name} v{find_metric(name).version}"
        body = items[f"{stem}_job"]
        assert "<img" in body and f"metric: {metric}" in body, body[-600:]
        assert (page / f"{stem}_job.png").is_file() and (page / f"{stem}_job.svg").is_file()
    assert "per_group=true" in items["comm_parts_job"] and "per_step=true" in items["lateness_job"]


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")
def test_the_page_opens_in_headless_chromium(page, tmp_path):
    probe = page / "probe.html"
    probe.write_text((page / "index.html").read_text().replace("</body>", PROBE + "</body>"))
    try:
        dumped = chromium(probe, tmp_path / "profile", "--dump-dom")
    finally:
        probe.unlink()
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    result = json.loads(html.unescape(re.search(r'data-probe="([^"]*)"', dumped.stdout)[1]))
    shown = {i["id"]: i for i in result["images"]}
    for stem in FIGURES:
        image = shown[f"{stem}_job"]
        assert image["complete"] and image["width"] > 0 and image["shown"] > 200, image
    assert console_problems(dumped.stderr) == []


# --- each figure draws the rows it is given ---------------------------------------------------

def context(metric_rows):
    from tracewh import report as rep
    from tracewh.report import model

    return model._Context(FakeMetrics(metric_rows), rep.Options(formats=("png",), dpi=50), ["r"])


def test_stacked_bars_are_the_rows_parts_and_exposed_parts():
    from tracewh import report as rep
    from tracewh.report.figures_comm import fig_comm_parts

    group = dict(run_id="r", process_group="0", collectives=4, duration_ns=9_000_000,
                 launch_ns=1_000_000, wait_ns=5_000_000, transfer_ns=3_000_000,
                 launch_exposed_ns=0, wait_exposed_ns=2_000_000, transfer_exposed_ns=3_000_000,
                 ends_early=0)
    item = rep.Item("comm_parts_r", "c", "4")
    fig = fig_comm_parts(context({"comm_breakdown": [group]}), item, "r")
    bars = [(round(p.get_x(), 6), round(p.get_width(), 6), p.get_hatch())
            for p in fig.axes[0].patches if p.get_width() > 0]
    # ms: wait 0-5 (2 exposed), transfer 5-8 (all exposed), launch 8-9 (none exposed)
    assert bars == [(0, 5, None), (0, 2, "////"), (5, 3, None), (5, 3, "////"), (8, 1, None)]
    assert item.uses[0].params == {"run": "r", "per_group": "true"}


def test_lateness_cells_are_the_rows_late_time_and_cause():
    from tracewh import report as rep
    from tracewh.report.figures_comm import fig_lateness

    per_step = [dict(run_id="r", iteration=2, rank=1, late_ns=3_000_000, cause="GPU work"),
                dict(run_id="r", iteration=3, rank=0, late_ns=8_000_000, cause="data loading")]
    per_rank = [dict(run_id="r", rank=k) for k in (0, 1, 2)]

    class Metrics(FakeMetrics):
        def run(self, name, **params):
            found, use = super().run(name, **params)
            return (per_rank if params.get("per_rank") else found), use

    ctx = context({"straggler_cause": per_step})
    ctx.metrics = Metrics({"straggler_cause": per_step})
    fig = fig_lateness(ctx, rep.Item("lateness_r", "l", "5"), "r")
    mesh = fig.axes[0].collections[0]
    cells = mesh.get_array()
    assert cells.shape == (3, 2) and cells.mask.sum() == 4  # 3 ranks x 2 steps, 2 drawn
    assert (cells[1, 0], cells[0, 1]) == (3, 8)  # ms
    assert sorted(t.get_text() for t in fig.axes[0].texts) == ["3\nGPU", "8\ndata"]
