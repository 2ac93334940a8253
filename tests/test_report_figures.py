"""The report's figures as a reader sees them (issue 38 item 13), on a DeepSpeed-shaped capture
(phases DeepSpeedEngine.forward/backward/_take_model_step) and the sample's Kineto run: phase
labels whole and every phase in the legend, the memory timeline's peak label clear of the
title, a log axis with a labelled tick under its lowest point."""

from __future__ import annotations

import math
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tracewh
from tracewh import report as rep
from tracewh.cli import app
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.report import draw, figures_comm, figures_memory, figures_steps, model
from tracewh.session import Session

runner = CliRunner()
SAMPLE_TRACES = Path(__file__).resolve().parents[1] / "sample_db" / "traces"
DEEPSPEED = {"forward": "DeepSpeedEngine.forward", "backward": "DeepSpeedEngine.backward",
             "optimizer": "DeepSpeedEngine._take_model_step"}


def _context(db: Path, run: str):
    con = tracewh.connect(db, read_only=True)
    return con, model._Context(model._Metrics(Session.over(con)),
                               rep.Options((5, 3), ("svg",), 100), [run])


@pytest.fixture(scope="module")
def deepspeed(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ds_figures")
    generate_job(root / "ds", JobSpec(world_size=2, iterations=3, layers=2, memory_usage=True))
    for path in (root / "ds").glob("*.sqlite"):
        con = sqlite3.connect(path)
        for old, new in DEEPSPEED.items():
            con.execute("UPDATE NVTX_EVENTS SET text = ? WHERE text = ?", [new, old])
        con.commit()
        con.close()
    db = root / "wh.duckdb"
    result = runner.invoke(app, ["ingest", "-q", "--db", str(db), str(root / "ds")])
    assert result.exit_code == 0, result.stderr
    return db


def _legend(fig) -> list[str]:
    return [t.get_text().lstrip("\u200b") for legend in fig.legends for t in legend.get_texts()]


@pytest.mark.parametrize("figure", ["phases", "memory", "memory_timeline", "memory_free"])
def test_phase_labels_are_whole(deepspeed, tmp_path, figure):
    con, ctx = _context(deepspeed, "ds")
    draw_it = {"phases": figures_steps.fig_phases, "memory": figures_memory.fig_memory,
               "memory_timeline": figures_memory.fig_memory_timeline,
               "memory_free": figures_memory.fig_memory_free}[figure]
    try:
        item = rep.Item(f"{figure}_ds", figure, "7")
        fig = draw_it(ctx, item, "ds")
        draw._save(fig, item, tmp_path, ctx.options)
    finally:
        con.close()
    shown = _legend(fig) + [t.get_text() for ax in fig.axes for t in ax.get_yticklabels()]
    phases = [name.rpartition(".")[2] for name in DEEPSPEED.values()]
    for phase in phases:  # _take_model_step too, which matplotlib's legends drop by its '_'
        assert any(label.endswith(phase) for label in shown), (phase, shown)
    assert not any("…" in label for label in shown), shown
    said = " ".join([fig.axes[0].get_title(), fig.axes[0].get_xlabel()]
                    + [legend.get_title().get_text() for legend in fig.legends])
    assert "DeepSpeedEngine" in said  # the owner the labels share, said once
    svg = (tmp_path / f"{figure}_ds.svg").read_text()
    assert "_take_model_step" in svg


def test_memory_timeline_peak_label_clears_the_title(deepspeed, tmp_path):
    con, ctx = _context(deepspeed, "ds")
    try:
        fig = figures_memory.fig_memory_timeline(ctx, rep.Item("t", "t", "8"), "ds")
    finally:
        con.close()
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    top = fig.axes[0]
    title = top.title.get_window_extent(renderer)
    (label,) = [t for t in top.texts if t.get_text().endswith("M")]
    box = label.get_window_extent(renderer)
    assert box.y1 <= top.get_window_extent(renderer).y1 < title.y0  # inside its panel, under the title


def test_log_axis_has_a_labelled_tick_under_its_points(tmp_path):
    db = tmp_path / "wh.duckdb"
    assert runner.invoke(app, ["ingest", "-q", "--db", str(db), str(SAMPLE_TRACES)]).exit_code == 0
    con, ctx = _context(db, "fsdp_4ranks_kineto")
    try:
        item = rep.Item("bandwidth", "bandwidth", "4")
        fig = figures_comm.fig_bandwidth(ctx, item, "fsdp_4ranks_kineto")
        draw._save(fig, item, tmp_path, ctx.options)
    finally:
        con.close()
    ax = fig.axes[0]
    lowest = min(y for c in ax.collections for _, y in c.get_offsets())
    low, _ = ax.get_ylim()
    assert low <= lowest and low / 10 ** math.floor(math.log10(low)) in (1, 2, 5)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    labelled = [t.get_position()[1] for t in ax.get_yticklabels() + ax.get_yticklabels(minor=True)
                if t.get_text() and low <= t.get_position()[1] <= lowest]
    assert labelled, "no labelled tick at or under the lowest point"
