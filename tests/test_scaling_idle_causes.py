"""scaling's bottleneck sentence names the host cause of idle GPU time (version 7): on a series
of generated Kineto runs with a slow data loader the truth says most idle time is data loading,
and the sentence says so with its share; on the same series without one, and on the slow series
when the loader is not recognised (data_pattern), no cause is named."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.generate import truth
from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job
from tracewh.metrics import find_metric, run_metric

LOADER_NS = 4_000_000
RUNS = {  # run -> (data loader ns, world size)
    "slow2": (LOADER_NS, 2), "slow4": (LOADER_NS, 4), "fast2": (0, 2), "fast4": (0, 4)}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    """Two series over dp (2 and 4 ranks): one whose steps wait for the data loader, one without."""
    folder = tmp_path_factory.mktemp("scaling_causes")
    db, known = folder / "wh.duckdb", {}
    for run, (loader_ns, ranks) in RUNS.items():
        # sync_stalls: the host truth is recorded for the fast runs too
        known[run] = generate_kineto_job(folder / run, KinetoJobSpec(
            world_size=ranks, iterations=4, layers=2, seed=ranks, data_loader_ns=loader_ns, sync_stalls=True))
        result = CliRunner().invoke(app, ["ingest", "-q", "--db", str(db), "--run", run, str(folder / run),
                                          "--run-param", "model=gpt", "--run-param", f"dp={ranks}",
                                          "--run-param", f"loader={'slow' if loader_ns else 'fast'}"])
        assert result.exit_code == 0, result.stderr
    con = tracewh.connect(db, read_only=True)
    yield con, known
    con.close()


CAUSE_NAMES = {"sync": "sync wait", "launch": "launching", "data": "data loading", "os": "os call"}


def scaling_of(con, run, **params):
    (series,), = con.execute("SELECT series_id FROM series WHERE varied = 'dp' AND run_id = ?", [run]).fetchall()
    return {r["run_id"]: r for r in run_metric(con, find_metric("scaling"), {"series": series, **params}).to_pylist()}


def idle_truth(known, unrecognised=()):
    """The run's idle GPU time (gaps between busy islands, summed over ranks), its GPU time
    (each rank's span) and the idle time per host cause in gaps >= 30 us, from the generator
    (the host activities of the `unrecognised` categories count as other)."""
    idle = window = 0
    causes = dict.fromkeys((*truth.GAP_CAUSES, "other"), 0)
    for rank, busy in known.gpu_busy.items():
        idle += sum(hi - lo for lo, hi in truth.idle_gaps(busy))
        window += max(hi for _, hi in busy) - min(lo for lo, _ in busy)
        host = [(c if c not in unrecognised else "other", lo, hi) for c, lo, hi in known.host[rank]]
        for cause, ns in truth.gap_causes(host, busy, 30_000).items():
            causes[cause] += ns
    return idle, window, causes


def test_a_slow_data_loader_is_named_with_its_share(warehouse):
    con, known = warehouse
    rows = scaling_of(con, "slow4")
    assert list(rows) == ["slow2", "slow4"]
    for run, row in rows.items():
        idle, window, causes = idle_truth(known[run])
        assert row["idle_pct"] == pytest.approx(idle * 100 / window)
        share = causes["data"] * 100 / idle
        assert share > 50  # what the job was built to show
        assert (row["idle_cause"], row["idle_cause_pct"]) == ("data loading", pytest.approx(share))
        assert row["bottleneck"] == "idle GPU time"
        assert row["sentence"].endswith(f"% of the step time is idle GPU time, {round(share)}% of it "
                                        "while the host was loading data")
    slow2, slow4 = (100 - rows[run]["idle_pct"] for run in ("slow2", "slow4"))
    assert rows["slow4"]["sentence"].startswith(
        f"At dp=4, GPU utilization drops to {round(slow4)}% (from {round(slow2)}% at dp=2) because the "
        f"data loader cannot keep up: {round(100 - slow4)}% of the step time is idle GPU time, ")


def assert_no_cause_named(rows, known, unrecognised=()):
    for run, row in rows.items():
        idle, _, causes = idle_truth(known[run], unrecognised)
        cause, ns = max(((c, ns) for c, ns in causes.items() if c != "other"), key=lambda c: c[1])
        assert ns * 100 / idle <= 50  # no host cause explains most of the idle time
        assert (row["idle_cause"], row["idle_cause_pct"]) == (CAUSE_NAMES[cause], pytest.approx(ns * 100 / idle))
        assert "while the host" not in row["sentence"]


def test_no_cause_is_named_without_one(warehouse):
    con, known = warehouse
    rows = scaling_of(con, "fast4")
    assert list(rows) == ["fast2", "fast4"]
    assert_no_cause_named(rows, known)


def test_no_cause_is_named_when_the_loader_is_not_recognised(warehouse):
    """The slow series again, with a data_pattern the loader's op does not match: idle time is
    still the bottleneck, but what the host did then is none of the causes."""
    con, known = warehouse
    rows = scaling_of(con, "slow4", data_pattern="^no such op$")
    assert {row["bottleneck"] for row in rows.values()} == {"idle GPU time"}
    assert_no_cause_named(rows, known, unrecognised=("data",))
