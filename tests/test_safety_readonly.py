"""Read-only queries: `tracewh sql` and `tracewh query` refuse writes, ATTACH, COPY, INSTALL/LOAD,
reading files and changing settings, checked with sqlglot before anything runs (tracewh.guard)
and enforced by DuckDB after (read-only connection, enable_external_access = false,
lock_configuration = true): each layer alone stops every case.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

import tracewh
from tracewh import guard, metrics
from tracewh.cli import app
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.guard import QueryRefused, check_query, warehouse_relations
from tracewh.session import lock_down

from test_ingest_rules import table_checksums

runner = CliRunner()
TARGET = "/tmp/tracewh-guard-test"  # where a statement that got through would leave a file

# statement -> words the refusal names. Each is stopped by sqlglot AND by DuckDB's settings.
DANGEROUS = {
    "INSERT INTO store.runs (run_id, created_at) VALUES ('x', now())": "INSERT writes",
    "DELETE FROM store.kernels": "DELETE writes",
    "UPDATE store.sources SET rows = 0": "UPDATE writes",
    "CREATE TABLE store.t AS SELECT 1": "CREATE writes",
    "DROP VIEW kernels": "DROP writes",
    "ALTER TABLE store.runs ADD COLUMN x INT": "ALTER writes",
    f"ATTACH '{TARGET}.duckdb' AS other": "ATTACH attaches",
    f"COPY (SELECT * FROM kernels) TO '{TARGET}.csv'": "COPY copies",
    f"COPY store.kernels FROM '{TARGET}.csv'": "COPY copies",
    f"EXPORT DATABASE '{TARGET}-dir'": "cannot check",
    "INSTALL httpfs": "INSTALL installs",
    f"LOAD '{TARGET}.duckdb_extension'": "LOAD loads",
    "SELECT * FROM read_csv('/etc/passwd')": "read_csv()",
    "SELECT * FROM read_csv_auto('/etc/passwd')": "read_csv_auto()",
    "SELECT * FROM '/etc/passwd'": "'/etc/passwd'",
    "SELECT * FROM read_parquet('/etc/passwd')": "read_parquet()",
    "SELECT * FROM read_json('/etc/passwd')": "read_json()",
    "SELECT * FROM read_text('/etc/passwd')": "read_text()",
    "SELECT * FROM read_blob('/etc/passwd')": "read_blob()",
    "SELECT * FROM glob('/etc/*')": "glob()",
    "SELECT * FROM sniff_csv('/etc/passwd')": "sniff_csv()",
    "SELECT name FROM kernels WHERE name IN (SELECT * FROM read_text('/etc/passwd'))": "read_text()",
    "SELECT * FROM query('SELECT * FROM read_text(''/etc/passwd'')')": "query()",
    "SET threads = 1": "SET changes settings",
    "SET enable_external_access = true": "SET changes settings",
    "SET lock_configuration = false": "SET changes settings",
    "RESET threads": "RESET changes settings",
    "PRAGMA threads = 1": "PRAGMA changes settings",
    "PRAGMA enable_profiling": "PRAGMA changes settings",
}
# Refused by sqlglot; harmless if they ran (DuckDB allows them on a read-only connection).
REFUSED_ONLY_BY_GUARD = {
    "CREATE TEMP TABLE t AS SELECT 1": "CREATE writes",
    "SET VARIABLE x = 1": "SET VARIABLE",
    "RESET VARIABLE x": "RESET changes settings",
    "CHECKPOINT": "CHECKPOINT",
    "BEGIN TRANSACTION": "TRANSACTION",
    "SELECT 1; SELECT 2": "2 statements",
    "SELECT * INTO t FROM kernels": "SELECT ... INTO",
    "EXPLAIN SELECT 1": "EXPLAIN is not a query",
    "CALL pragma_version()": "CALL",
}


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("readonly")
    generate_job(root / "job", JobSpec(world_size=2, iterations=2, layers=1, seed=9))
    path = root / "wh.duckdb"
    assert runner.invoke(app, ["ingest", str(root / "job"), "--db", str(path)]).exit_code == 0
    return path


@pytest.fixture(autouse=True)
def no_leftovers():
    def clean():
        for leftover in Path("/tmp").glob(Path(TARGET).name + "*"):
            if leftover.is_dir():
                for inner in leftover.iterdir():
                    inner.unlink()
                leftover.rmdir()
            else:
                leftover.unlink()
    clean()
    yield
    leaked = list(Path("/tmp").glob(Path(TARGET).name + "*"))
    clean()
    assert not leaked, f"a refused statement wrote {leaked}"


def sql(db: Path, statement: str):
    return runner.invoke(app, ["sql", statement, "--db", str(db), "--format", "csv"])


@pytest.mark.parametrize("statement", sorted({**DANGEROUS, **REFUSED_ONLY_BY_GUARD}))
def test_sql_refuses_with_one_clear_line(db, statement):
    before = table_checksums(db)
    result = sql(db, statement)
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    words = {**DANGEROUS, **REFUSED_ONLY_BY_GUARD}[statement]
    assert len(lines) == 1 and lines[0].startswith("Error: refused: ") and words in lines[0], lines
    assert "read-only SELECT" in lines[0]  # and what to do instead
    assert result.stdout == ""
    assert table_checksums(db) == before


@pytest.mark.parametrize("statement", sorted(DANGEROUS))
def test_duckdb_settings_alone_stop_it_when_the_guard_is_bypassed(db, statement, monkeypatch):
    """The sqlglot layer switched off: the read-only connection, enable_external_access = false
    and lock_configuration = true still refuse, and nothing leaks or changes."""
    monkeypatch.setattr(guard, "check_query", lambda *a, **k: None)
    monkeypatch.setattr(guard, "parse_one_statement", lambda *a, **k: None)
    before = table_checksums(db)
    result = sql(db, statement)
    assert result.exit_code == 1, result.stdout
    assert "refused" not in result.stderr  # DuckDB said no, not the guard
    assert result.stderr.startswith("Error: ") and len(result.stderr.strip().splitlines()) == 1
    assert table_checksums(db) == before


@pytest.mark.parametrize("statement", sorted(DANGEROUS))
def test_duckdb_settings_alone_on_a_plain_connection(db, statement):
    con = tracewh.connect(db, read_only=True)
    try:
        lock_down(con)
        with pytest.raises(duckdb.Error):
            con.execute(statement).fetchall()
    finally:
        con.close()


def test_guard_alone_refuses_on_an_unlocked_connection(db):
    """The other way round: without DuckDB's settings, the sqlglot check is what stops them."""
    con = tracewh.connect(db, read_only=True)
    try:
        relations, macros = warehouse_relations(con)
        for statement in {**DANGEROUS, **REFUSED_ONLY_BY_GUARD}:
            with pytest.raises(QueryRefused):
                check_query(statement, relations, macros)
    finally:
        con.close()


@pytest.mark.parametrize("statement, expected", [
    ("SELECT count(*) AS n FROM kernels", "n"),
    ("WITH k AS (SELECT rank FROM kernels) SELECT count(DISTINCT rank) AS ranks FROM k", "ranks\n2"),
    ("SELECT count(*) AS n FROM store.sources", "n\n2"),
    ("SELECT count(*) AS n FROM main.sources", "n\n2"),
    ("SELECT * FROM range(2) t(i)", "i\n0\n1"),
    ("DESCRIBE kernels", "column_name"),
    ("SUMMARIZE runs", "column_name"),
    ("SELECT count(*) > 0 AS ok FROM duckdb_views()", "ok\ntrue"),
    ("SELECT count(*) AS n FROM information_schema.tables", "n"),
])
def test_read_only_queries_still_run(db, statement, expected):
    result = sql(db, statement)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(expected)


def test_views_and_variables_work_after_lock_down(db):
    """External access off: every view still answers (they read only tables); settings locked:
    SET VARIABLE (how the metric runner binds parameters) still works."""
    con = tracewh.connect(db, read_only=True)
    try:
        lock_down(con)
        views = [v for (v,) in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal "
            "AND database_name = current_database()").fetchall()]
        assert "kernels" in views
        for view in views:
            con.execute(f'SELECT * FROM "{view}" LIMIT 5').fetchall()
        con.execute("SET VARIABLE rank = 1")
        assert con.execute("SELECT count(*) FROM kernels WHERE rank = getvariable('rank')"
                           ).fetchall()[0][0] > 0
        con.execute("RESET VARIABLE rank")
        with pytest.raises(duckdb.Error, match="locked"):
            con.execute("SET enable_external_access = true")
    finally:
        con.close()


def test_every_metric_runs_on_a_locked_connection(db):
    con = tracewh.connect(db, read_only=True)
    try:
        lock_down(con)
        for metric in metrics.list_metrics():
            metrics.run_metric(con, metric, {})
    finally:
        con.close()


def test_query_binds_parameters_after_the_lock(db):
    result = runner.invoke(app, ["query", "gpu_kernel_summary", "--db", str(db), "--param",
                                 "rank=1", "--format", "csv"])
    assert result.exit_code == 0, result.stderr
    ranks = {line.split(",")[3] for line in result.stdout.splitlines()[1:]}
    assert ranks == {"1"}


METRIC_HEADER = """\
-- metric: {name}
-- version: 1
-- summary: tries something a metric may not do
-- grain: rank
-- params: none
-- uses: none
"""
BAD_METRICS = {
    "attach": (f"ATTACH '{TARGET}.duckdb' AS other;", "not ATTACH"),
    "copy": (f"COPY (SELECT 1) TO '{TARGET}.csv';", "not COPY"),
    "install": ("INSTALL httpfs;", "not INSTALL"),
    "load": ("LOAD httpfs;", "not COMMAND"),
    "set": ("SET threads = 1;", "not SET"),
    "pragma": ("PRAGMA threads = 1;", "not PRAGMA"),
    "delete": ("DELETE FROM kernels;", "not DELETE"),
    "read_csv": ("SELECT * FROM read_csv('/etc/passwd');", "read_csv()"),
    "read_text": ("SELECT * FROM read_text('/etc/passwd');", "read_text()"),
    "file": ("SELECT * FROM '/etc/passwd';", "'/etc/passwd'"),
    "glob": ("SELECT * FROM glob('/etc/*');", "glob()"),
    "store": ("SELECT * FROM store.kernels;", "never store.* tables"),
    "two": ("SELECT 1 AS rank; SELECT 2 AS rank;", "one statement"),
}


@pytest.mark.parametrize("case", sorted(BAD_METRICS))
def test_query_refuses_a_metric_file_that_is_not_read_only(db, tmp_path, case):
    body, words = BAD_METRICS[case]
    path = tmp_path / f"bad_{case}.sql"
    path.write_text(METRIC_HEADER.format(name=path.stem) + body + "\n")
    result = runner.invoke(app, ["query", str(path), "--db", str(db)])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and words in lines[0], lines


@pytest.mark.parametrize("case", ["read_csv", "read_text", "file", "glob"])
def test_duckdb_settings_stop_a_metric_whose_check_is_bypassed(db, tmp_path, case, monkeypatch):
    monkeypatch.setattr(metrics, "_check_query", lambda *a, **k: None)
    body, _ = BAD_METRICS[case]
    path = tmp_path / f"bad_{case}.sql"
    path.write_text(METRIC_HEADER.format(name=path.stem) + body + "\n")
    result = runner.invoke(app, ["query", str(path), "--db", str(db)])
    assert result.exit_code == 1 and "failed" in result.stderr, result.stderr
    assert "root:" not in result.stdout  # /etc/passwd was not read
