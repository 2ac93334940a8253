"""What `tracewh report` prints, and the metric parameters it passes on."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import tracewh
from tracewh import report as rep


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


def test_report_params_reach_the_metrics_that_take_them():
    con = tracewh.connect(":memory:")
    metrics = rep._Metrics(con, {"phases": "## backward ##", "run": "ignored"})
    _, use = metrics.run("nvtx_phases", run="job")
    assert use.params == {"run": "job", "phases": "## backward ##"}
    _, use = metrics.run("comm_comp_overlap", run="job")  # declares no phases
    assert use.params == {"run": "job"}
    with pytest.raises(rep.ReportError, match="--param nosuch: no metric of the report takes it"):
        rep.build_report(con, Path("/nonexistent-never-made"), params={"nosuch": "1"})
    con.close()
