"""`tracewh summary`: one screen per run whose numbers are those of the catalogue metrics."""

from __future__ import annotations

import csv
import io
from collections import defaultdict

import pytest
from typer.testing import CliRunner

from tracewh.cli import app
from tracewh.metrics import find_metric
from tracewh.resources import sql_dir

runner = CliRunner()
SAMPLE = sql_dir().parent / "sample_db" / "traces"
RUN = "ddp_4ranks"


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("summary") / "sample.duckdb"
    assert runner.invoke(app, ["ingest", "-q", str(SAMPLE), "--db", str(db)]).exit_code == 0
    return db


def metric(db, name: str) -> list[dict]:
    result = runner.invoke(app, ["query", name, "--db", str(db), "-p", f"run={RUN}", "-f", "csv"])
    return list(csv.DictReader(io.StringIO(result.stdout)))


def test_summary_numbers_are_the_metrics(sample_db):
    result = runner.invoke(app, ["summary", "--run", RUN, "--db", str(sample_db)],
                           env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.stderr
    lines = {line.split()[0]: line for line in result.stdout.splitlines()[1:] if line.strip()}
    assert result.stdout.splitlines()[0] == RUN

    across = [r for r in metric(sample_db, "iteration_time") if r["rank"] == ""][0]
    assert f"{float(across['median_ns']) / 1e6:.2f} ms median" in lines["Step"]
    assert f"over {across['iterations']} step(s) across ranks" in lines["Step"]

    breakdown = metric(sample_db, "temporal_breakdown")
    window = sum(int(r["window_ns"]) for r in breakdown)
    compute = 100 * sum(int(r["compute_ns"]) for r in breakdown) / window
    idlest = max(breakdown, key=lambda r: float(r["idle_pct"]))
    assert f"compute {compute:.1f}%" in lines["GPU"]
    assert f"most idle: rank {idlest['rank']}, {float(idlest['idle_pct']):.1f}%" in lines["GPU"]
    scaling = runner.invoke(app, ["query", "scaling", "--db", str(sample_db), "-p", f"runs={RUN}",
                                  "-f", "csv"])
    cause = list(csv.DictReader(io.StringIO(scaling.stdout)))[0]
    assert (f"idle mostly in host {cause['idle_cause']}, "
            f"{float(cause['idle_cause_pct']):.1f}%)") in lines["GPU"]
    versions = [f"{m} v{find_metric(m).version}" for m in ("temporal_breakdown", "scaling")]
    assert f"[{', '.join(versions)}]" in " ".join(result.stdout.split())
    # the next commands name the warehouse they were run on
    assert f"tracewh report --run {RUN} --out report/ --db {sample_db}" in " ".join(result.stdout.split())

    overlap = metric(sample_db, "comm_comp_overlap")
    whole = [r for r in overlap if r["rank"] == ""][0]
    least = min((r for r in overlap if r["rank"] != ""), key=lambda r: float(r["overlap_pct"]))
    assert f"{float(whole['overlap_pct']):.1f}% of communication hidden" in lines["Overlap"]
    assert f"(least: rank {least['rank']}, {float(least['overlap_pct']):.1f}%)" in lines["Overlap"]

    waits = metric(sample_db, "straggler")
    late = [r for r in waits if r["is_straggler"] == "true"][0]
    assert lines["Straggler"].split(":")[0].endswith(f"rank {late['rank']}")
    others = sum(int(r["total_wait_ns"]) for r in waits if r["rank"] != late["rank"])
    assert f"the others waited {others / 1e6:.2f} ms for the last rank" in lines["Straggler"]

    per_kernel = defaultdict(int)
    for row in metric(sample_db, "gpu_kernel_summary"):
        per_kernel[row["short_name"]] += int(row["total_ns"])
    top, total = max(per_kernel.items(), key=lambda kv: kv[1])
    first = result.stdout.split("Top kernels")[1].splitlines()[1].split()
    assert first[:3] == [f"{100 * total / sum(per_kernel.values()):.1f}%",
                         f"{total / 1e6:.2f}", "ms"]
    assert first[4] == top


def test_summary_of_an_unknown_run(sample_db):
    result = runner.invoke(app, ["summary", "--run", "ddp", "--db", str(sample_db)])
    assert result.exit_code == 1
    assert "no run 'ddp' in the warehouse - did you mean 'ddp_4ranks'?" in result.stderr


def test_summary_of_logs_and_of_a_run_without_steps(tmp_path):
    """A log-only run gets its timers' medians and TFLOP/s (log_phases), and no
    include_first_last advice when it has no steps at all."""
    db = tmp_path / "w.duckdb"
    log = sql_dir().parent / "tests" / "fixtures" / "logs" / "primus_megatron.log"
    assert runner.invoke(app, ["ingest", "-q", "--log", str(log), "--db", str(db)]).exit_code == 0
    result = runner.invoke(app, ["summary", "--db", str(db)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.stderr
    lines = {line.split()[0]: line for line in result.stdout.splitlines()[1:] if line.strip()}
    # iterations 2 and 3 after the warm-up: medians (31950.2 + 31990.0) / 2, (240.3 + 240.0) / 2
    assert "median over 2 step(s): iteration 31,970.1 ms; 240.2 TFLOP/s" in lines["Training"]
    assert "include_first_last" not in result.stdout
    assert "no steps found" in lines["Step"]
