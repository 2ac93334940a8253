"""Names that mean one thing: the default phase names of nvtx_phases, memory_by_phase and
memory_timeline (the report's phase figures), and idle_pct."""

from __future__ import annotations

import re

import duckdb
import pytest

from tracewh.metrics import list_metrics
from tracewh.resources import sql_dir

NAMES = {  # name -> is it a phase by default
    "forward": True, "DeepSpeedEngine.forward": True, "Optimizer.step#AdamW.step": True,
    "optimizer_step": True, "## forward ##": True, "## backward ##": True,
    "## optimizer ##": True, "ProfilerStep#3": False, "my_backward_hook": False,
}


@pytest.mark.parametrize("metric", ["nvtx_phases", "memory_by_phase", "memory_timeline"])
def test_default_phases_include_torchrec_names(metric):
    """Each takes its phases from phase_ranges, whose default is phase_pattern's
    (sql/lib/phase_names.sql, one definition; stored per range at ingest)."""
    assert "phase_ranges(getvariable('phases'))" in (sql_dir() / "metrics" / f"{metric}.sql").read_text()
    con = duckdb.connect()
    con.execute((sql_dir() / "lib" / "phase_names.sql").read_text())
    got = {name: con.execute("SELECT regexp_matches(?, phase_pattern(NULL))", [name]).fetchone()[0]
           for name in NAMES}
    assert got == NAMES


def test_idle_pct_is_always_the_share_of_the_window(tmp_path):
    """idle_gaps' share of idle time has its own name: idle_pct is the share of the window in
    temporal_breakdown and scaling, so the same column name never means two things."""
    import tracewh
    from tracewh.generate.nsys import JobSpec, generate_job
    from tracewh.ingest import ingest_paths
    from tracewh.metrics import find_metric, run_metric

    generate_job(tmp_path / "job", JobSpec(world_size=2))
    con = tracewh.connect(tmp_path / "w.duckdb")
    ingest_paths(con, [tmp_path / "job"])
    gaps = run_metric(con, find_metric("idle_gaps")).to_pylist()
    assert "idle_pct" not in gaps[0]
    for rank in (0, 1):
        shares = [r["share_of_idle_pct"] for r in gaps if r["rank"] == rank]
        assert sum(shares) == pytest.approx(100)
    con.close()
    uses = sorted(m.name for m in list_metrics()
                  if re.search(r"\bAS idle_pct\b", m.body))
    assert uses == ["scaling", "temporal_breakdown"]
