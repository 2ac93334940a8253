"""A memory limit that would bound nothing is a one-line error on every command, before any
warehouse is opened or made (issue 40, item 13): DuckDB reads a negative size as no limit at
all, and 2000TB is no bound on a machine of gigabytes (it used to end in `KeyError: 'PiB'`)."""

from __future__ import annotations

import os
import subprocess
import time
import sys

import pytest

from tracewh.resources import sql_dir

from peak_memory import run_cli_measured

TRACEWH = [sys.executable, "-m", "tracewh.cli"]
SAMPLE = sql_dir().parent / "sample_db"
NEGATIVE = "a size is positive, e.g. 1GB or 512MB"
TOO_BIG = "memory, so it would bound nothing; give at most that, e.g. 1GB"


def tracewh(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*TRACEWH, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200", **(env or {})})


@pytest.mark.parametrize("limit, said", [("-5GB", NEGATIVE), ("-1", NEGATIVE),
                                         ("2000TB", TOO_BIG)])
def test_queries_refuse_a_limit_that_bounds_nothing(limit, said):
    db = str(SAMPLE / "sample.duckdb")
    for args in (["query", "gpu_kernel_summary"], ["sql", "SELECT 1"]):
        done = tracewh(*args, "--db", db, f"--memory-limit={limit}")
        assert done.returncode != 0
        assert done.stderr.strip().splitlines() == [f"Error: --memory-limit '{limit}': " +
                                                    done.stderr.split(": ", 2)[2].strip()]
        assert said in done.stderr and "Traceback" not in done.stderr


def test_ingest_refuses_it_from_the_environment_and_makes_no_warehouse(tmp_path):
    db = tmp_path / "wh.duckdb"
    done = tracewh("ingest", str(SAMPLE / "traces/ddp_4ranks"), "--db", str(db),
                   env={"TRACEWH_MEMORY_LIMIT": "-1"})
    assert done.returncode != 0 and NEGATIVE in done.stderr, done.stderr
    assert list(tmp_path.iterdir()) == []


def test_export_refuses_it_and_writes_no_lake(tmp_path):
    done = tracewh("export", str(tmp_path / "lake"), "--db", str(SAMPLE / "sample.duckdb"),
                   env={"TRACEWH_MEMORY_LIMIT": "2000TB"})
    assert done.returncode != 0 and TOO_BIG in done.stderr, done.stderr
    assert not (tmp_path / "lake").exists()


def test_a_real_limit_still_answers():
    done = tracewh("sql", "SELECT current_setting('memory_limit') AS m", "--db",
                   str(SAMPLE / "sample.duckdb"), "--memory-limit=512MB", "--format", "csv")
    assert done.returncode == 0 and done.stdout.splitlines() == ["m", "488.2 MiB"], done.stderr


@pytest.mark.parametrize("query", ["SELECT len(list(range(3000000000)))",
                                   "SELECT length(repeat('x', 3000000000))"])
def test_a_query_allocating_outside_duckdbs_limit_stays_bounded(query):
    """Issue 40, item 3: these allocate outside DuckDB's buffer manager (4 GB of RSS in 8 s at
    a 1 GB limit, and --timeout did not stop them). The CLI's process is held to twice the
    limit plus 1 GiB and a stack per thread (session.bound_process_memory): one line, at once."""
    started = time.monotonic()
    done, peak_mb = run_cli_measured(["sql", query, "--db", str(SAMPLE / "sample.duckdb"),
                                      "--memory-limit=512MB", "--timeout", "3"])
    assert time.monotonic() - started < 30
    assert done.returncode == 1
    assert done.stderr.strip() == ("Error: the query needs more memory than --memory-limit (488 MiB) "
                              "allows - narrow it (WHERE, GROUP BY, LIMIT) or raise --memory-limit")
    assert peak_mb * 2**20 < 2 * 512e6 + 2**30  # the stated bound
