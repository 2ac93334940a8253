"""Steps from DeepSpeed's phases (issue 38 item 2): a DeepSpeed nsys capture has no ProfilerStep#N
ranges, only DeepSpeedEngine.forward/backward/_take_model_step. Each forward then starts a step,
so memory_by_phase, nvtx_phases and iteration_time answer as on the same capture with step ranges."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.metrics import find_metric, run_metric

runner = CliRunner()
DEEPSPEED = {"forward": "DeepSpeedEngine.forward", "backward": "DeepSpeedEngine.backward",
             "optimizer": "DeepSpeedEngine._take_model_step"}


def _deepspeed_shaped(folder):
    """The generated export as DeepSpeed's annotations leave it: no step ranges, phases renamed."""
    for path in folder.glob("*.sqlite"):
        con = sqlite3.connect(path)
        con.execute("DELETE FROM NVTX_EVENTS WHERE text LIKE 'ProfilerStep#%'")
        for old, new in DEEPSPEED.items():
            con.execute("UPDATE NVTX_EVENTS SET text = ? WHERE text = ?", [new, old])
        con.commit()
        con.close()


@pytest.fixture(scope="module")
def warehouses(tmp_path_factory):
    root = tmp_path_factory.mktemp("phase_steps")
    generate_job(root / "steps", JobSpec(world_size=2, iterations=3, layers=2, memory_usage=True))
    shutil.copytree(root / "steps", root / "deepspeed")
    _deepspeed_shaped(root / "deepspeed")
    dbs = {}
    for name in ("steps", "deepspeed"):
        dbs[name] = root / f"{name}.duckdb"
        result = runner.invoke(app, ["ingest", "-q", "--db", str(dbs[name]), str(root / name)])
        assert result.exit_code == 0, result.stderr
    return root, dbs


def _rows(db, metric, **params):
    con = tracewh.connect(db, read_only=True)
    try:
        return run_metric(con, find_metric(metric), {k: str(v) for k, v in params.items()}).to_pylist()
    finally:
        con.close()


def test_each_forward_starts_a_step(warehouses):
    """The steps are the forwards' starts, read from the raw export (session ns + utcEpochNs)."""
    root, dbs = warehouses
    con = tracewh.connect(dbs["deepspeed"], read_only=True)
    got = con.execute("SELECT rank, iteration, start_ns, end_ns, is_first, is_last "
                      "FROM training_steps(NULL) ORDER BY ALL").fetchall()
    iterations = con.execute("SELECT count(*) FROM iterations").fetchone()[0]
    con.close()
    assert iterations == 0  # nothing names a step: the phases make them
    for rank in (0, 1):
        raw = sqlite3.connect(root / "deepspeed" / f"rank{rank}.sqlite")
        epoch = raw.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]
        starts = [s + epoch for (s,) in raw.execute(
            "SELECT start FROM NVTX_EVENTS WHERE text = 'DeepSpeedEngine.forward' ORDER BY start")]
        last = raw.execute("SELECT max(end) FROM NVTX_EVENTS WHERE text LIKE 'DeepSpeedEngine.%'"
                           ).fetchone()[0] + epoch
        raw.close()
        ends = starts[1:] + [last]
        assert [r[1:] for r in got if r[0] == rank] == [
            (i + 1, s, e, i == 0, i == len(starts) - 1) for i, (s, e) in enumerate(zip(starts, ends))]


def test_memory_by_phase_answers_as_with_step_ranges(warehouses):
    """What the allocator held during each phase is the same with or without ProfilerStep ranges."""
    _, dbs = warehouses
    def key(r):
        return (r["rank"], r["iteration"], r["start_ns"], r["source"], r["measure"])
    def values(r):
        return (r["samples"], r["min_value"], r["mean_value"], r["max_value"])
    with_steps = {key(r): values(r) for r in _rows(dbs["steps"], "memory_by_phase", measure="%")}
    from_phases = {key(r): values(r) for r in _rows(dbs["deepspeed"], "memory_by_phase", measure="%")}
    assert with_steps and with_steps == from_phases
    assert {r["phase"] for r in _rows(dbs["deepspeed"], "memory_by_phase", measure="%")} == set(DEEPSPEED.values())


def test_nvtx_phases_through_the_cli(warehouses):
    """The phases per step, through the CLI: 2 ranks x 3 steps x 3 phases, _take_model_step too."""
    _, dbs = warehouses
    result = runner.invoke(app, ["query", "nvtx_phases", "--db", str(dbs["deepspeed"]), "--format", "csv"])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()[1:]
    assert len(lines) == 2 * 3 * 3
    assert sum("DeepSpeedEngine._take_model_step" in line for line in lines) == 6
