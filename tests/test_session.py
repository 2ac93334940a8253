"""tracewh.Session: the one path a metric runs through (CLI and Python), guarded and closed."""

from __future__ import annotations

import duckdb
import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.errors import TracewhError
from tracewh.guard import QueryRefused
from tracewh.metrics import find_metric, run_metric
from tracewh.resources import sql_dir
from tracewh.warehouse import QueryStopped

SAMPLE = sql_dir().parent / "sample_db" / "traces"


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("session") / "sample.duckdb"
    assert CliRunner().invoke(app, ["ingest", "-q", str(SAMPLE), "--db", str(db)]).exit_code == 0
    return db


def test_query_gives_the_metric_rows_of_a_plain_connection(sample_db):
    con = tracewh.connect(sample_db, read_only=True)
    try:
        plain = run_metric(con, find_metric("gpu_kernel_summary"), {"rank": "0"})
    finally:
        con.close()
    with tracewh.Session(sample_db) as session:
        table = session.query("gpu_kernel_summary", rank=0)
        assert session.query("gpu_kernel_summary", {"rank": 0}).equals(table)
    assert table.equals(plain) and table.num_rows > 0
    assert set(table.column("rank").to_pylist()) == {0}


def test_mistakes_are_errors_naming_the_closest_run(sample_db):
    with tracewh.Session(sample_db) as session:
        assert session.runs() == ["ddp_4ranks", "fsdp_4ranks_kineto"]
        with pytest.raises(TracewhError, match="no run 'ddp_4rank' in the warehouse - did you "
                                               "mean 'ddp_4ranks'"):
            session.query("gpu_kernel_summary", run="ddp_4rank")
        with pytest.raises(TracewhError, match="no rank 9 in run 'ddp_4ranks'"):
            session.query("gpu_kernel_summary", run="ddp_4ranks", rank=9)
        with pytest.raises(TracewhError, match="nor a series"):
            session.check_runs(["ddp_4ranks", "nope"], series=True)


def test_a_session_is_locked_down_and_closed(sample_db, tmp_path):
    target = tmp_path / "out.csv"
    with tracewh.Session(sample_db, memory_limit="300MB") as session:
        assert session.sql("SELECT current_setting('memory_limit') AS m").column("m")[0].as_py() \
            in ("286.1 MiB", "300.0 MB")
        with pytest.raises(QueryRefused):
            session.sql(f"COPY (SELECT 1) TO '{target}'")
        with pytest.raises(duckdb.Error):  # DuckDB's own guard, under the statement checks
            session.con.execute(f"COPY (SELECT 1) TO '{target}'")
        with pytest.raises(duckdb.Error):
            session.con.execute("SET memory_limit = '8GB'")
        con = session.con
    assert session.con is None and not target.exists()
    with pytest.raises(duckdb.ConnectionException):
        con.execute("SELECT 1")


def test_a_query_past_its_timeout_is_stopped(sample_db):
    with tracewh.Session(sample_db, timeout=0.2) as session, pytest.raises(QueryStopped):
        session.sql("SELECT count(*) FROM range(10000000000) a")
