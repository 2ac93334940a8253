"""One guard for `tracewh sql` and for a metric file run by `tracewh query FILE.sql` (issue 40,
items 2 and 4): functions that read files, settings or other SQL are refused in LATERAL too,
and nesting too deep to check is one line on both paths, never a RecursionError traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tracewh.resources import sql_dir

TRACEWH = [sys.executable, "-m", "tracewh.cli"]
DB = str(sql_dir().parent / "sample_db" / "sample.duckdb")
HEADER = ("-- metric: {name}\n-- version: 1\n-- summary: a user's metric\n-- unit: ns\n"
          "-- grain: run_id\n-- params:\n-- uses:\n")
LATERALS = {
    "lateral_query_table": ("SELECT s.* FROM runs, LATERAL query_table('store.sources') s", "query_table"),
    "lateral_query": ("SELECT q.* FROM runs, LATERAL query('SELECT 42') q", "query"),
    "lateral_settings": ("SELECT d.* FROM runs, LATERAL duckdb_settings() d", "duckdb_settings"),
}
DEEP = {
    "parens_50": "SELECT " + "(" * 50 + "1" + ")" * 50 + " AS x FROM runs",
    "parens_1000": "SELECT " + "(" * 1000 + "1" + ")" * 1000 + " AS x FROM runs",
    "coalesce_60": "SELECT " + "coalesce(" * 60 + "1" + ")" * 60 + " AS x FROM runs",
    "case_80": "SELECT " + "CASE WHEN true THEN " * 80 + "1" + " END" * 80 + " AS x FROM runs",
    "subqueries_150": "SELECT x FROM " + "(SELECT 1 AS x FROM " * 150 + "runs" + ")" * 150,
}


def tracewh(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*TRACEWH, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200"})


def metric_file(tmp_path, name: str, query: str):
    path = tmp_path / f"{name}.sql"
    path.write_text(HEADER.format(name=name) + query + "\n")
    return path


@pytest.mark.parametrize("name", sorted(LATERALS))
def test_lateral_table_functions_are_refused_on_both_paths(tmp_path, name):
    query, function = LATERALS[name]
    done = tracewh("query", str(metric_file(tmp_path, name, query)), "--db", DB)
    assert done.returncode != 0
    assert done.stderr.strip() == (f"Error: {tmp_path / name}.sql:8: reads table function "
                                   f"{function}(); a metric reads only the public views")
    done = tracewh("sql", query, "--db", DB)
    assert done.returncode != 0
    assert done.stderr.strip().startswith(f"Error: refused: reads table function {function}()")


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_nesting_is_one_line_on_both_paths(tmp_path, name):
    query = DEEP[name]
    done = tracewh("query", str(metric_file(tmp_path, name, query)), "--db", DB)
    said = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr and len(said) <= 1, done.stderr
    if done.returncode != 0:  # sqlglot may read a shallow one; the deep ones are refused
        assert said[0].startswith(f"Error: {tmp_path / name}.sql:8: nested too deeply to check")
    done = tracewh("sql", query, "--db", DB)
    said = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr and len(said) <= 1, done.stderr
    if done.returncode != 0:
        assert said[0].startswith("Error: refused: nested too deeply to check")
    assert name in ("parens_50", "coalesce_60", "case_80") or done.returncode != 0
