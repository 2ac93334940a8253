"""Series (runs whose configurations differ in one field) in scaling, the chrome-trace export
and the report; runs that are no series are never compared silently."""

from __future__ import annotations

import json
import statistics

import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.metrics import find_metric, run_metric
from test_logs import TEMPLATE, _sweep

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, [*args])


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    """Two generated Kineto runs of one model at dp 2 and dp 4, and an unrelated third run."""
    folder = tmp_path_factory.mktemp("series")
    db = folder / "wh.duckdb"
    for run, ranks, seed, params in (("dp2", 2, 5, ("model=gpt", "dp=2")),
                                     ("dp4", 4, 6, ("model=gpt", "dp=4")),
                                     ("other", 2, 7, ("model=bert", "dp=8"))):
        assert invoke("generate", "kineto", str(folder / run), "--ranks", str(ranks),
                      "--iterations", "3", "--layers", "2", "--seed", str(seed)).exit_code == 0
        args = [a for p in params for a in ("--run-param", p)]
        result = invoke("ingest", "-q", "--db", str(db), str(folder / run), *args)
        assert result.exit_code == 0, result.stderr
    return db


def scaling(db, **params):
    con = tracewh.connect(db, read_only=True)
    try:
        return run_metric(con, find_metric("scaling"), params).to_pylist()
    finally:
        con.close()


def series_of(db, varied):
    con = tracewh.connect(db, read_only=True)
    (series_id,), = con.execute("SELECT DISTINCT series_id FROM series WHERE varied = ?",
                                [varied]).fetchall()
    con.close()
    return series_id


def test_scaling_says_when_runs_are_no_series(warehouse):
    rows = scaling(warehouse)
    assert [r["run_id"] for r in rows] == ["dp2", "other", "dp4"]
    assert {r["differs_in"] for r in rows} == {"dp, model"}
    assert all(r["sentence"].endswith("(not one series: the runs differ in dp, model)") for r in rows)


def test_scaling_of_a_series(warehouse):
    series_id = series_of(warehouse, "dp")
    rows = scaling(warehouse, series=series_id)
    assert [(r["run_id"], r["label"], r["differs_in"]) for r in rows] == [
        ("dp2", "dp=2", "dp"), ("dp4", "dp=4", "dp")]
    assert "not one series" not in " ".join(r["sentence"] for r in rows)
    assert rows[1]["sentence"].startswith("At dp=4, ") and rows[1]["baseline_run"] == "dp2"
    # the same breakdown as the two runs named by hand
    by_name = {r["run_id"]: r for r in scaling(warehouse, runs="dp2,dp4")}
    for row in rows:
        assert row["compute_pct"] == by_name[row["run_id"]]["compute_pct"]
        assert row["window_ns"] == by_name[row["run_id"]]["window_ns"]


def test_chrome_trace_of_a_series(warehouse, tmp_path):
    series_id = series_of(warehouse, "dp")
    out = tmp_path / "series.json"
    result = invoke("export", str(out), "--format", "chrome-trace", "--run", series_id,
                    "--db", str(warehouse))
    assert result.exit_code == 0, result.stderr
    events = json.loads(out.read_text())["traceEvents"]
    names = sorted(e["args"]["name"] for e in events if e["name"] == "process_name")
    assert names == ["dp=2: rank 0 (node0)", "dp=2: rank 1 (node0)", "dp=4: rank 0 (node0)",
                     "dp=4: rank 1 (node0)", "dp=4: rank 2 (node0)", "dp=4: rank 3 (node0)"]
    alone = 0
    for run in ("dp2", "dp4"):
        single = tmp_path / f"{run}.json"
        assert invoke("export", str(single), "--format", "chrome-trace", "--run", run,
                      "--db", str(warehouse)).exit_code == 0
        alone += len(json.loads(single.read_text())["traceEvents"])
    assert len(events) == alone  # every event of both runs, no other run's
    bad = invoke("export", str(out), "--format", "chrome-trace", "--run", "nope",
                 "--db", str(warehouse))
    assert bad.exit_code == 1 and "no run 'nope' in the warehouse (nor a series" in bad.stderr


def test_report_draws_a_series_of_logs(db_path, tmp_path):
    runs = _sweep(tmp_path / "sweep")
    assert invoke("ingest", "-q", "--db", str(db_path), "--log", str(tmp_path / "sweep"),
                  "--name-template", TEMPLATE).exit_code == 0
    from tracewh.report.figures_steps import fig_log_phases_series
    from tracewh.report.model import Item, Options, _Context, _Metrics
    from tracewh.session import Session

    series_id = series_of_tp(db_path)
    con = tracewh.connect(db_path, read_only=True)
    item = Item(key="k", title="t", section="s")
    ctx = _Context(_Metrics(Session.over(con)), Options((5.0, 3.0), ("png",), 100, "auto"), list(runs))
    fig = fig_log_phases_series(ctx, item, series_id)
    members = con.execute("SELECT run_id FROM series WHERE series_id = ? ORDER BY position",
                          [series_id]).fetchall()
    con.close()
    bars = fig.axes[0].patches  # forward bars of each configuration, then backward, then step
    for i, (run,) in enumerate(members):
        for j, timer in enumerate(("fwd", "bwd", "step")):
            kept = [round(v, 2) for v in runs[run][timer][1:]]
            assert bars[j * len(members) + i].get_width() == pytest.approx(statistics.median(kept))
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["tp=1", "tp=2", "tp=4"]
    assert [u.name for u in item.uses] == ["log_phases"]
    assert "No TFLOP/s line" in " ".join(item.notes)
    out = tmp_path / "report"
    result = invoke("report", "--out", str(out), "--db", str(db_path), "--formats", "svg")
    assert result.exit_code == 0, result.stderr
    assert (out / f"log_phases_{series_id}.svg").exists()


def series_of_tp(db):
    con = tracewh.connect(db, read_only=True)
    series_id = con.execute("SELECT series_id FROM series WHERE varied = 'tp' AND fixed LIKE "
                            "'%dp=1,%' AND fixed LIKE '%prefetch=0%' LIMIT 1").fetchall()[0][0]
    con.close()
    return series_id
