"""tracewh.open, the Python API for notebooks: the CLI's answers and mistakes, as frames; the
example notebook in examples/ runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import polars as pl
import pytest

import tracewh
from tracewh.metrics import find_metric, list_metrics
from tracewh.output import _flatten_nested
from tracewh.resources import sql_dir

ROOT = sql_dir().parent
SAMPLE_DB = ROOT / "sample_db" / "sample.duckdb"
NOTEBOOK = ROOT / "examples" / "notebook.ipynb"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["tracewh", *args, "--db", str(SAMPLE_DB)], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, "COLUMNS": "200"})


@pytest.fixture(scope="module")
def cli_csv() -> dict[str, subprocess.CompletedProcess]:
    """Every metric through the real CLI on the sample warehouse, as CSV (two at a time)."""
    names = [m.name for m in list_metrics(check=False)]
    with ThreadPoolExecutor(2) as pool:
        done = pool.map(lambda name: _cli("query", name, "--format", "csv"), names)
        return dict(zip(names, done))


def test_every_metric_answers_as_the_cli_does(cli_csv):
    wh = tracewh.open(SAMPLE_DB)
    answered = 0
    for name, cli in cli_csv.items():
        if cli.returncode != 0:  # a metric that needs a parameter: the same mistake, raised
            with pytest.raises(tracewh.TracewhError) as mistake:
                wh.query(name)
            assert str(mistake.value) in cli.stderr, name
            continue
        frame = wh.query(name)
        assert isinstance(frame, pl.DataFrame)
        show = find_metric(name).show  # what a narrow terminal keeps: columns of the answer
        assert show and set(show) <= set(frame.columns), (name, set(show) - set(frame.columns))
        assert _flatten_nested(frame).write_csv() == cli.stdout, name
        answered += 1
    assert answered >= 40  # of 48: most metrics answer on the sample without parameters


def test_parameters_frames_and_mistakes():
    wh = tracewh.open(SAMPLE_DB, frame="arrow")
    cli = _cli("query", "gpu_kernel_summary", "--param", "run=ddp_4ranks", "--param", "rank=2",
               "--param", "top=3", "--format", "csv")
    table = wh.query("gpu_kernel_summary", run="ddp_4ranks", rank=2, top=3)
    assert table.num_rows == 3 and set(table.column("rank").to_pylist()) == {2}
    assert _flatten_nested(pl.from_arrow(table)).write_csv() == cli.stdout
    assert wh.runs(frame="polars")["run_id"].to_list() == ["ddp_4ranks", "fsdp_4ranks_kineto"]
    catalogue = wh.metrics(frame="polars")
    assert catalogue.height == len(list(sql_dir().glob("metrics/*.sql")))
    query = "SELECT count(*) AS n FROM kernels WHERE run_id = 'ddp_4ranks' AND rank = 2"
    by_cli = int(_cli("sql", query, "--format", "csv").stdout.splitlines()[1])
    assert wh.sql(query).column("n")[0].as_py() == by_cli > 0
    assert wh.show("idle_gaps").startswith("-- metric: idle_gaps")
    for mistake, call in [
        ("no run 'ddp_4rank' in the warehouse - did you mean 'ddp_4ranks'",
         lambda: wh.query("idle_gaps", run="ddp_4rank")),
        ("no parameter 'rnak' - did you mean 'rank'", lambda: wh.query("gpu_trace", rnak=1)),
        ("window=90s/100s misses the capture", lambda: wh.query("gpu_trace", window="90s/100s")),
        ("frame='excel': use one of polars, arrow, pandas",
         lambda: wh.query("gpu_trace", frame="excel")),
    ]:
        with pytest.raises(tracewh.TracewhError, match=mistake.replace("(", r"\(")):
            call()
    with pytest.raises(tracewh.TracewhError, match="no warehouse here"):
        tracewh.open(ROOT / "no-such.duckdb")


def test_the_example_notebook_runs(tmp_path):
    """Its code cells, in order, as one script (what nbclient would run, without Jupyter)."""
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    script = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    script += ("\n\nassert runs.height == 2 and catalogue.height > 40"
               "\nassert breakdown.height == 4 and top.height == 5 * 1"
               "\nassert busy['rank'].to_list() == [0, 1, 2, 3]"
               "\nprint('ok')")
    (tmp_path / "notebook.py").write_text(script)
    ran = subprocess.run([sys.executable, str(tmp_path / "notebook.py")], cwd=ROOT,
                         capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == ("idle_gaps: no run 'ddp_4rank' in the warehouse - did you mean "
                          "'ddp_4ranks'? ('tracewh runs' lists the 2 there are)\nok\n"), ran.stdout
