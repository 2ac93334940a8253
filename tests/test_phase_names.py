"""The default phase names of nvtx_phases and memory_by_phase (the report's phase figures)."""

from __future__ import annotations

import re

import duckdb
import pytest

from tracewh.resources import sql_dir

NAMES = {  # name -> is it a phase by default
    "forward": True, "DeepSpeedEngine.forward": True, "Optimizer.step#AdamW.step": True,
    "optimizer_step": True, "## forward ##": True, "## backward ##": True,
    "## optimizer ##": True, "ProfilerStep#3": False, "my_backward_hook": False,
}


@pytest.mark.parametrize("metric", ["nvtx_phases", "memory_by_phase"])
def test_default_phases_include_torchrec_names(metric):
    text = (sql_dir() / "metrics" / f"{metric}.sql").read_text()
    default = re.search(r"getvariable\('phases'\) AS VARCHAR\),\s*'([^']+)'", text).group(1)
    con = duckdb.connect()
    got = {name: con.execute("SELECT regexp_matches(?, ?)", [name, default]).fetchone()[0]
           for name in NAMES}
    assert got == NAMES
