"""What `tracewh report` prints, and the metric parameters it passes on."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import tracewh
from tracewh import report as rep
from tracewh.report import figures_runs
from tracewh.report.draw import _RC, _save
from tracewh.report.model import _Context, _Metrics
from tracewh.session import Session


def test_left_out_figures_are_one_line_per_figure_and_reason():
    runs = [f"run{i}" for i in range(19)]
    items = []
    for run in runs:
        for title, reason in [("Overlap per rank", "comm_comp_overlap found no communication "
                                                  "kernels in this run"),
                              ("Memory by phase", f"no samples cover {run}'s GPUs")]:
            items.append(rep.Item(key=f"{title}_{run}", title=f"{title}: {run}", section="s",
                                  run_id=run, skipped=reason))
    items.append(rep.Item(key="scaling", title="Scaling", section="s", skipped="one run only"))
    report = rep.Report(Path("out"), Path("out/index.html"), items, runs, 1.0)
    printed = io.StringIO()
    rep.print_summary(report, printed)
    assert printed.getvalue().splitlines() == [
        "left out Overlap per rank (19 runs: run0, run1, run2, ...): comm_comp_overlap found no "
        "communication kernels in this run",
        "left out Memory by phase (19 runs: run0, run1, run2, ...): no samples cover RUN's GPUs",
        "left out Scaling: one run only",
        "wrote out/index.html: 0 figure(s), 39 left out, in 1.0 s",
    ]


class _NoRows:
    """A session that answers every metric with no rows: what matters is what it is asked."""

    def query(self, metric, params):
        import pyarrow as pa

        return pa.table({})


def test_report_params_reach_the_metrics_that_take_them():
    con = tracewh.connect(":memory:")
    metrics = _Metrics(_NoRows(), {"phases": "## backward ##", "run": "ignored"})
    _, use = metrics.run("nvtx_phases", run="job")
    assert use.params == {"run": "job", "phases": "## backward ##"}
    _, use = metrics.run("comm_comp_overlap", run="job")  # declares no phases
    assert use.params == {"run": "job"}
    with pytest.raises(rep.ReportError, match="--param nosuch: no metric of the report takes it"):
        rep.build_report(Session.over(con), Path("/nonexistent-never-made"),
                         params={"nosuch": "1"})
    con.close()


def scaling_rows(count: int) -> list[dict]:
    """The scaling metric's rows for `count` runs with long names, as a 10-run sweep has."""
    return [{"run_id": f"llama3_8b_fsdp_{2 ** (i % 6)}nodes_seq{1024 * (i + 1)}", "label": None,
             "step_ns": 1_000_000 * (i + 1), "window_ns": 10 ** 9, "compute_pct": 60.0,
             "exposed_comm_pct": 20.0, "exposed_mem_pct": 5.0, "exposed_other_pct": 0.0,
             "idle_pct": 15.0, "sentence": None, "exposed_by_collective": None}
            for i in range(count)]


class Rows:
    def __init__(self, rows):
        self.rows = rows

    def run(self, name, **params):
        return self.rows, rep.MetricUse(name, 1, params)


@pytest.mark.parametrize("draw", ["fig_scaling", "fig_breakdown_runs"])
def test_ten_runs_fit_their_figure(tmp_path, draw):
    import matplotlib

    ctx = _Context(Rows(scaling_rows(10)), rep.Options(formats=("png",), dpi=100), [])
    item = rep.Item(draw, draw, "2")
    with matplotlib.rc_context(_RC):  # the report's fonts
        fig = getattr(figures_runs, draw)(ctx, item)
        _save(fig, item, tmp_path, ctx.options)  # drawn as the PNG is
    box = fig.bbox
    texts = [t for legend in fig.legends for t in legend.get_texts()]
    texts += [label for ax in fig.axes for label in ax.get_yticklabels() if label.get_visible()]
    for text in texts:  # every legend entry and run label whole inside the figure
        extent = text.get_window_extent()
        assert box.x0 - 1 <= extent.x0 and extent.x1 <= box.x1 + 1, text.get_text()
        assert box.y0 - 1 <= extent.y0 and extent.y1 <= box.y1 + 1, text.get_text()
    labels = sorted((t.get_window_extent() for ax in fig.axes for t in ax.get_yticklabels()
                     if t.get_visible() and t.get_text()), key=lambda e: e.y0)
    for below, above in zip(labels, labels[1:]):  # y labels do not overlap
        assert below.y1 <= above.y0 + 0.5


def test_the_missing_nccl_size_hint_names_the_profiler(shared_data, tmp_path):
    from typer.testing import CliRunner

    from tracewh.cli import app
    from tracewh.metrics import find_metric, run_metric
    from tracewh.resources import sql_dir

    db = tmp_path / "w.duckdb"
    runner = CliRunner()
    for path in (shared_data / "kineto" / "param" / "dlrm_kineto",
                 sql_dir().parent / "sample_db" / "traces" / "ddp_4ranks"):
        assert runner.invoke(app, ["ingest", "-q", str(path), "--db", str(db)]).exit_code == 0
    con = tracewh.connect(db, read_only=True)
    notes = {(r["run_id"], r["note"]) for r in
             run_metric(con, find_metric("collective_bandwidth")).to_pylist()}
    con.close()
    assert notes == {
        ("dlrm_kineto", "message size unknown: full_bytes is NULL (this Kineto trace records no "
                        "NCCL sizes; PyTorch 2.2+ writes them in the kernels' args)"),
        ("ddp_4ranks", "message size unknown: full_bytes is NULL (nsys exports carry NCCL sizes "
                       "only with --include-blobs)")}
