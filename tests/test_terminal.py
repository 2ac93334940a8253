"""The real CLI in a real terminal (tmux, 80 and 200 columns): what a person sees."""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import subprocess
import sys
import time
import uuid

import pytest
from typer.testing import CliRunner

from tracewh.cli import app
from tracewh.metrics import list_metrics
from tracewh.resources import sql_dir

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
runner = CliRunner()
SAMPLE = sql_dir().parent / "sample_db"
SRC = sql_dir().parent / "src"


class Terminal:
    """`tracewh ARGS` running in a tmux pane `width` columns wide."""

    done = "__tracewh_exit_"

    def __init__(self, width: int, *args: str, pipe: str = ""):
        self.tmux = ["tmux", "-L", f"tracewh-test-{uuid.uuid4().hex[:8]}"]
        command = " ".join([sys.executable, "-m", "tracewh.cli", *map(_quote, args)]) + pipe
        env = {**os.environ, "PYTHONPATH": str(SRC)}
        env.pop("COLUMNS", None)
        env.pop("LINES", None)
        subprocess.run([*self.tmux, "new-session", "-d", "-x", str(width), "-y", "50",
                        f"{command}; echo {self.done}$?; sleep 60"], env=env, check=True)

    def text(self) -> str:
        """The pane and its scrollback, long lines joined."""
        return subprocess.run([*self.tmux, "capture-pane", "-p", "-J", "-S", "-"],
                              capture_output=True, text=True).stdout

    def wait_for(self, pattern: str, timeout: float = 60) -> re.Match:
        deadline = time.monotonic() + timeout
        while not (found := re.search(pattern, self.text())):
            assert time.monotonic() < deadline, f"no {pattern!r} on screen:\n{self.text()}"
            time.sleep(0.2)
        return found

    def finish(self, timeout: float = 60) -> tuple[str, int]:
        """What the command showed, and its exit code."""
        try:
            code = int(self.wait_for(rf"{self.done}(\d+)", timeout).group(1))
            return self.text().split(self.done)[0], code
        finally:
            subprocess.run([*self.tmux, "kill-server"], capture_output=True)


def screen(width: int, *args: str, timeout: float = 60, pipe: str = "") -> str:
    """What `tracewh ARGS` shows in a terminal `width` columns wide (scrollback included);
    `pipe`: shell text after the command, e.g. ' | cat'."""
    return Terminal(width, *args, pipe=pipe).finish(timeout)[0]


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\\''") + "'"


def table_rows(text: str) -> list[list[str]]:
    """The cells of each line of a drawn table (header first)."""
    return [[cell.strip() for cell in line.strip().strip("┃│").split("┃" if "┃" in line else "│")]
            for line in text.splitlines() if line.startswith(("┃", "│"))]


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("terminal") / "sample.duckdb"
    result = runner.invoke(app, ["ingest", "-q", str(SAMPLE / "traces"), "--db", str(db)])
    assert result.exit_code == 0, result.output
    return db


@pytest.mark.parametrize("width", [80, 200])
def test_metrics_list_names_every_metric(width):
    rows = table_rows(screen(width, "metrics", "list"))
    # at 80 columns the summary keeps the room (the catalogue's `show`), not the version
    assert rows[0] == (["metric", "summary"] if width == 80 else
                       ["metric", "version", "summary", "params", "grain"])
    assert [row[0] for row in rows[1:]] == sorted(m.name for m in list_metrics())
    summaries = {m.name: m.summary for m in list_metrics(check=False)}
    shown = {row[0]: row[rows[0].index("summary")] for row in rows[1:]}
    assert all(summaries[name].startswith(cell.rstrip("…")) for name, cell in shown.items())
    assert min(len(cell) for name, cell in shown.items() if len(summaries[name]) > 60) >= 50
    assert all(len(line) <= width for line in screen(width, "metrics", "list").splitlines())


@pytest.mark.parametrize("width", [80, 200])
@pytest.mark.parametrize("metric, telling", [
    ("gpu_trace", ["rank", "start_rel", "dur", "name"]),
    ("pipeline_bubble", ["rank", "iteration", "bubble_pct", "run_bubble_pct"]),
    ("gpu_kernel_summary", ["time_pct", "total", "instances", "short_name"]),
    ("temporal_breakdown", ["rank", "iteration", "compute_pct", "exposed_comm_pct", "idle_pct"]),
])
def test_a_narrow_terminal_keeps_the_columns_the_metric_names(sample_db, metric, telling,
                                                              width):
    """The metric's `-- show:` decides what gives way, not the columns' widths."""
    shown = screen(width, "query", metric, "--db", str(sample_db), "--max-rows", "3")
    header = table_rows(shown)[0]
    assert set(telling) <= set(header), header
    assert all(len(line) <= width for line in shown.splitlines() if line.startswith(("┃", "│")))


@pytest.mark.parametrize("width", [80, 200])
def test_piped_output_fits_the_terminal_it_ends_in(sample_db, width):
    """`tracewh query ... | less` in a terminal: rows as wide as the terminal, not 400 columns
    wrapped; with nowhere to fit (no terminal, as in make or CI) nothing is squeezed."""
    args = ["query", "gpu_trace", "--db", str(sample_db), "--max-rows", "3"]
    shown = screen(width, *args, pipe=" | cat")
    drawn = [line for line in shown.splitlines() if line.startswith(("┃", "│", "┏"))]
    assert drawn and all(len(line) <= width for line in drawn)
    assert "name" in table_rows(shown)[0]
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    alone = subprocess.run([sys.executable, "-m", "tracewh.cli", *args], capture_output=True,
                           text=True, stdin=subprocess.DEVNULL, env={**env, "PYTHONPATH": str(SRC)})
    assert max(len(line) for line in alone.stdout.splitlines()) > 300  # every column, whole


@pytest.mark.parametrize("width", [80, 200])
def test_no_number_is_cut(sample_db, width):
    args = ["query", "gpu_kernel_summary", "--db", str(sample_db), "-p", "run=ddp_4ranks",
            "-p", "rank=1", "--max-rows", "8"]
    shown = screen(width, *args)
    raw = list(csv.DictReader(io.StringIO(runner.invoke(app, [*args, "-f", "csv"]).stdout)))[:8]
    rows = table_rows(shown)
    header, body = rows[0], rows[1:]
    assert shown.splitlines()[0].strip() == "gpu_kernel_summary v2"
    # the metric's `-- show:`: at 80 columns the run gives way before the rank
    assert header[:4] == (["rank", "time_pct", "total", "instances"] if width == 80 else
                          ["run_id", "rank", "time_pct", "total"])
    assert len(body) == 8
    for cells, expected in zip(body, raw):
        row = dict(zip(header, cells))
        assert row["rank"] == "1"
        assert row["instances"] == f"{int(expected['instances']):,}"
        assert row["time_pct"] == f"{float(expected['time_pct']):.2f}"
        total_ns = int(expected["total_ns"])  # a few ms each: shown as '12.68 ms', never cut
        assert row["total"] == f"{total_ns / 1e6:,.2f} ms"
        for name, cell in row.items():
            assert "…" not in cell or name in ("name", "short_name"), (name, cell)
    if width == 80:
        assert "(left out to fit 80 columns: " in shown and "all with --format csv)" in shown
    else:
        assert "left out" not in shown and "kind" in header


def test_units_as_nsys_timeunit(sample_db):
    args = ["query", "gpu_kernel_summary", "--db", str(sample_db), "-p", "rank=0",
            "--max-rows", "3"]
    raw = list(csv.DictReader(io.StringIO(runner.invoke(app, [*args, "-f", "csv"]).stdout)))
    for units, scale in [("ns", 1), ("us", 1e3)]:
        rows = table_rows(screen(200, *args, "--units", units))
        column = "total_ns" if units == "ns" else f"total ({units})"
        at = rows[0].index(column)
        assert [r[at] for r in rows[1:]] == [
            f"{int(r['total_ns']):,}" if units == "ns" else f"{int(r['total_ns']) / scale:,.2f}"
            for r in raw[:3]]


def test_mistake_is_one_red_line_not_an_empty_table(sample_db):
    shown = screen(80, "query", "gpu_kernel_summary", "--db", str(sample_db), "-p",
                   "run=ddp_4rank")
    assert "┃" not in shown and "Traceback" not in shown
    assert "Error: gpu_kernel_summary: no run 'ddp_4rank' in the warehouse - did you mean " \
           "'ddp_4ranks'?" in shown.replace("\n", "")


def test_summary_fits_80_columns(sample_db):
    shown = screen(80, "summary", "--run", "ddp_4ranks", "--db", str(sample_db))
    lines = [line.rstrip() for line in shown.rstrip().splitlines()]
    assert lines[0] == "ddp_4ranks" and all(len(line) <= 80 for line in lines)
    assert len(lines) <= 24  # one screen
    kernels = shown.split("[gpu_kernel_summary v2]")[1].splitlines()[1:6]
    for line in kernels:  # share, time and count whole; only the name is cut
        assert re.match(r"^ +\d+\.\d% +[\d.,]+ (ns|us|ms|s) +[\d,]+x  \S", line), line


def test_ctrl_c_during_ingest_says_what_is_stored(tmp_path):
    from tracewh.generate.nsys import JobSpec, generate_job

    # 0.6 MB files, written in batches of 8 MB (13 files): 48 files are 4 batches
    generate_job(tmp_path / "job", JobSpec(world_size=48, iterations=20, layers=8))
    db = tmp_path / "w.duckdb"
    terminal = Terminal(120, "ingest", str(tmp_path / "job"), "--db", str(db), "--jobs", "1")
    terminal.wait_for(r"ingest .* [1-9]\d*/48")  # the progress bar: a file is stored
    subprocess.run([*terminal.tmux, "send-keys", "C-c"], check=True)
    shown, code = terminal.finish()
    assert code == 130 and "Traceback" not in shown, shown
    stored = int(re.search(r"Error: interrupted: (\d+) file\(s\) stored, each complete; the "
                           r"file\(s\) being written were left out\. Run the same command again: "
                           r"stored files are skipped, the rest load", shown).group(1))
    assert 1 <= stored < 48
    assert runner.invoke(app, ["check", "--db", str(db)]).exit_code == 0
    again = runner.invoke(app, ["ingest", str(tmp_path / "job"), "--db", str(db)])
    assert again.exit_code == 0 and f"{stored} already present" in again.stderr
    assert f"ingested {48 - stored} file(s)" in again.stderr


def test_help_reads_at_80_columns():
    shown = screen(80, "--help")
    assert "<bool>" not in shown and all(len(line.rstrip()) <= 80 for line in shown.splitlines())
    commands = shown.split("Commands:")[1].split()
    for name in ("ingest", "query", "sql", "runs", "views", "summary", "metrics"):
        assert name in commands, name
    ingest = " ".join(screen(80, "ingest", "--help").split())  # lines joined, as read
    assert "Load Nsight Systems SQLite exports (and .nsys-rep reports), PyTorch profiler " \
           "(Kineto) traces and sampled time series (--series) into the warehouse." in ingest
    assert "--quiet No progress bar" in ingest  # a flag shows no '<bool>'
    query = screen(80, "query", "--help")
    assert "<table|csv|json|parquet|markdown>" in query  # a choice list is never split
    assert "'tracewh metrics show" in query
    assert "      tracewh query gpu_kernel_summary --param rank=0 --format csv\n" in query


@pytest.mark.parametrize("width", [80, 200])
def test_generate_a_series_in_a_terminal(tmp_path, width):
    shown = screen(width, "generate", "series", "--help")
    assert all(len(line.rstrip()) <= width for line in shown.splitlines())
    assert "--cause" in shown and "data-loader" in shown
    shown, code = Terminal(width, "generate", "series", str(tmp_path / "s"), "--nodes",
                           "1,2").finish()
    assert code == 0, shown
    wrote = [line for line in shown.splitlines() if line.startswith("wrote ")]
    assert len(wrote) == 2 + 4 and f"wrote {tmp_path}/s/2nodes/" in wrote[-1]
    assert f"next: tracewh ingest {tmp_path}/s --db series.duckdb" in shown
