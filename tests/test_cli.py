"""The command line, end to end on the shipped sample: exit codes, stdout data, stderr talk."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.resources import sql_dir

runner = CliRunner()
SAMPLE = sql_dir().parent / "sample_db"


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("cli") / "sample.duckdb"
    result = runner.invoke(app, ["ingest", str(SAMPLE / "traces"), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "ingested 8 file(s)" in result.stderr
    done = re.search(r"([0-9.]+) MB in ([0-9.]+) s \(([0-9.,]+) MB/s\)", result.stderr)
    megabytes, seconds, rate = (float(g.replace(",", "")) for g in done.groups())
    assert megabytes == round(sum(p.stat().st_size for p in (SAMPLE / "traces").rglob("*")
                                  if p.is_file()) / 1e6, 1)
    # the seconds, MB and MB/s are each printed rounded to 0.1
    assert ((megabytes - 0.05) / (seconds + 0.05) - 0.05 <= rate
            <= (megabytes + 0.05) / max(seconds - 0.05, 1e-3) + 0.05)
    assert "runs: ddp_4ranks, fsdp_4ranks_kineto" in result.stderr
    return db


def test_every_command_has_help():
    for command in ["ingest", "query", "sql", "runs", "remove", "shell", "metrics", "generate"]:
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0 and "Usage" in result.output, command


def test_ingest_help_shows_the_defaults():
    # typer's rich help once swallowed "[default: ...]" written into the help text as markup
    result = runner.invoke(app, ["ingest", "--help"], env={"COLUMNS": "250"})
    assert result.exit_code == 0
    for default in ["(./tracewh.duckdb or $TRACEWH_DB)", "(cores)", "(256MB per file held",
                    "(detected)", "(UTC)"]:
        assert f"default: {default}" in " ".join(result.output.split()), default  # as read


@pytest.mark.parametrize("args, env, expected", [
    (["--jobs", "2"], {}, 768),                       # 2 files decoding, 1 being written
    (["--jobs", "1"], {}, 512),
    ([], {}, 256 * ((os.cpu_count() or 1) + 1)),       # a job per core
    (["--jobs", "2", "--memory-limit", "300MB"], {}, 300),
    (["--jobs", "2"], {"TRACEWH_MEMORY_LIMIT": "1GB"}, 1000),
])
def test_ingest_sets_the_memory_limit_per_file_held(tmp_path, monkeypatch, args, env, expected):
    import tracewh.ingest

    seen = []

    def ingest_paths(con, paths, **_):  # what DuckDB was told, read where the files would load
        seen.append(con.execute("SELECT current_setting('memory_limit')").fetchone()[0])
        return []

    monkeypatch.setattr(tracewh.ingest, "ingest_paths", ingest_paths)
    monkeypatch.delenv("TRACEWH_MEMORY_LIMIT", raising=False)
    result = runner.invoke(app, ["ingest", str(SAMPLE / "traces"), "--db", str(tmp_path / "w.duckdb"),
                                 *args], env=env)
    assert result.exit_code == 0, result.output
    number, unit = seen[0].split()  # DuckDB reports the limit in binary units
    assert round(float(number) * {"MiB": 2**20, "GiB": 2**30}[unit] / 1e6) == expected


def test_table_prints_brackets_in_data_as_written(sample_db):
    # rich reads "[...]" as markup: NVTX names such as "[layer 1] forward" lost their bracket
    # part, and a "[/x]" in a cell stopped the command with a MarkupError
    result = runner.invoke(app, ["sql", "SELECT '[layer 1] forward' AS \"[name]\", 'a [/x] b' AS y",
                                 "--db", str(sample_db)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "[name]" in result.stdout and "[layer 1] forward" in result.stdout
    assert "a [/x] b" in result.stdout


def test_error_names_a_bracketed_path_whole(tmp_path):
    missing = tmp_path / "trace[node 0].json"
    result = runner.invoke(app, ["ingest", str(missing), "--db", str(tmp_path / "w.duckdb")],
                           env={"COLUMNS": "400"})
    assert result.exit_code == 1
    assert f"Error: {missing}: no such file" in result.stderr


def test_query_csv_matches_the_kernels_view(sample_db):
    result = runner.invoke(app, ["query", "gpu_kernel_summary", "--db", str(sample_db),
                                 "--param", "rank=2", "--param", "run=ddp_4ranks", "--format", "csv"])
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    con = tracewh.connect(sample_db, read_only=True)
    expected = dict(con.execute("SELECT name, count(*) FROM kernels WHERE rank = 2 AND run_id = 'ddp_4ranks' "
                                "GROUP BY name").fetchall())
    assert {r["name"]: int(r["instances"]) for r in rows} == expected
    assert {r["metric"] for r in rows} == {"gpu_kernel_summary"} and {r["version"] for r in rows} == {"2"}


def test_query_json_parquet_markdown(sample_db, tmp_path):
    base = ["query", "gpu_kernel_summary", "--db", str(sample_db), "--param", "top=3",
            "--param", "run=ddp_4ranks"]
    as_json = json.loads(runner.invoke(app, [*base, "--format", "json"]).stdout)
    assert len(as_json) == 12  # 3 names x 4 ranks
    out = tmp_path / "k.parquet"
    assert runner.invoke(app, [*base, "--format", "parquet", "--output", str(out)]).exit_code == 0
    assert pl.read_parquet(out).height == 12
    markdown = runner.invoke(app, [*base, "--format", "markdown"]).stdout
    assert markdown.startswith("| metric | version | run_id | rank |") and markdown.count("\n") == 14


def test_bad_parameter_and_unknown_metric_are_one_line_errors(sample_db):
    result = runner.invoke(app, ["query", "gpu_kernel_summary", "--db", str(sample_db), "--param", "rank=x"])
    assert result.exit_code == 1 and result.stderr.startswith("Error:") and "rank" in result.stderr
    result = runner.invoke(app, ["query", "no_such_metric", "--db", str(sample_db)])
    assert result.exit_code == 1 and "no_such_metric" in result.stderr


@pytest.mark.parametrize("fault, said", [
    (MemoryError(), "Error: tracewh query: out of memory beyond --memory-limit (a result too "
                    "large to hand on: ask fewer rows, e.g. a top or a window, or raise "
                    "--memory-limit)\n"),
    (OSError(), "Error: tracewh query: OSError\n")])  # an error that says nothing
def test_a_fault_without_words_is_one_line_too(sample_db, monkeypatch, fault, said):
    """(run_diff with top=0 on 500,000 kernel names at --memory-limit 512MB raised both)"""
    def fail(*args, **kwargs):
        raise fault

    monkeypatch.setattr(tracewh.session.Session, "query", fail)
    result = runner.invoke(app, ["query", "gpu_kernel_summary", "--db", str(sample_db)])
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", said)


def test_sql_and_runs(sample_db):
    result = runner.invoke(app, ["sql", "SELECT count(DISTINCT rank) AS n FROM kernels", "--db",
                                 str(sample_db), "--format", "csv"])
    assert result.stdout == "n\n4\n"
    result = runner.invoke(app, ["runs", "--db", str(sample_db), "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [(r["run_id"], r["ranks"], r["world_size"], r["sources"]) for r in rows] == [
        ("ddp_4ranks", "4", "4", "4"), ("fsdp_4ranks_kineto", "4", "4", "4")]


def test_remove_a_run_removes_exactly_its_rows(sample_db, tmp_path):
    db = tmp_path / "copy.duckdb"
    shutil.copy(sample_db, db)

    def per_run(path):
        con = tracewh.connect(path, read_only=True)
        tables = [t for (t,) in con.execute(  # the tables whose rows belong to a run
            "SELECT table_name FROM duckdb_columns() WHERE schema_name = 'store' "
            "AND column_name = 'run_id' ORDER BY 1").fetchall()]
        out = {t: con.execute(f"SELECT run_id, count(*), sum(hash(x)) FROM store.{t} AS x "
                              "GROUP BY run_id ORDER BY run_id").fetchall() for t in tables}
        con.close()
        return out

    before = per_run(db)
    result = runner.invoke(app, ["remove", "--db", str(db), "--run", "ddp_4ranks"])
    assert result.exit_code == 0, result.stderr
    after = per_run(db)
    for table, rows in before.items():
        assert after[table] == [r for r in rows if r[0] != "ddp_4ranks"], table
    assert any(r[0] == "ddp_4ranks" for rows in before.values() for r in rows)


def test_metrics_list_and_check():
    listed = runner.invoke(app, ["metrics", "list", "--format", "csv"])
    assert {"gpu_kernel_summary", "gpu_trace"} <= {r["metric"] for r in csv.DictReader(io.StringIO(listed.stdout))}
    assert runner.invoke(app, ["metrics", "check"]).exit_code == 0


def test_shipped_sample_warehouse_matches_its_traces(sample_db, tmp_path):
    """sample_db/sample.duckdb is the warehouse of sample_db/traces (rebuild with make sample)."""
    copy = tmp_path / "shipped.duckdb"  # opening may upgrade its views: never touch the original
    shutil.copy(SAMPLE / "sample.duckdb", copy)
    shipped = tracewh.connect(copy, read_only=True)
    fresh = tracewh.connect(sample_db, read_only=True)
    query = "SELECT sha256, rows FROM sources ORDER BY sha256"
    assert shipped.execute(query).fetchall() == fresh.execute(query).fetchall()


def test_shell_opens_the_duckdb_cli_read_only(sample_db, tmp_path):
    stub = tmp_path / "duckdb"  # a stand-in shell that records how it was started
    stub.write_text(f'#!/bin/sh\necho "$@" > {tmp_path / "args"}\n')
    stub.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.path.dirname(sys.executable)}"}
    done = subprocess.run([sys.executable, "-m", "tracewh.cli", "shell", "--db", str(sample_db)],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "args").read_text().split() == ["-readonly", str(sample_db)]


def test_shell_without_duckdb_says_how_to_get_it(sample_db, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))  # nor beside this Python
    result = runner.invoke(app, ["shell", "--db", str(sample_db)])
    assert result.exit_code == 1 and "pip install duckdb-cli" in result.stderr


@pytest.mark.skipif(not (Path(sys.executable).parent / "duckdb").exists(),
                    reason="no duckdb CLI in this environment")
def test_shell_found_in_tracewhs_environment_not_activated(sample_db, tmp_path):
    # PATH without the environment's bin folder: the shell beside tracewh's Python is used
    done = subprocess.run([sys.executable, "-m", "tracewh.cli", "shell", "--db", str(sample_db)],
                          env={**os.environ, "PATH": str(tmp_path)}, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "not on PATH" not in done.stderr, done.stderr


def test_make_demo_installs_tracewh_alone():
    """`make demo` builds the venv with tracewh's own dependencies; the test, Spark and bench
    extras (pyspark: ~450 MB) come with `make test` (measured: see the issue 38 note)."""
    import re

    makefile = (sql_dir().parent / "Makefile").read_text()
    rules = dict(re.findall(r"^([^\s:#=]+):([^\n=]*)$", makefile, re.M))
    base = rules["$(BIN)/tracewh"]
    assert "$(EXTRAS)" not in rules["demo"] and "$(BIN)/tracewh" in rules["demo"]
    assert "pip install --quiet -e .\n" in makefile.split("$(BIN)/tracewh:" + base)[1]
    assert "$(EXTRAS)" in rules["test"] and "'.[test,spark,bench]'" in makefile
