"""`tracewh views [NAME]`: the views, and a view's columns with their types and meaning."""

from __future__ import annotations

import csv
import io

from typer.testing import CliRunner

from tracewh.cli import app
from tracewh.resources import sql_dir

runner = CliRunner()


def test_views_lists_every_public_view(tmp_path):
    result = runner.invoke(app, ["views", "-f", "csv"])
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    files = sorted(p.stem for p in (sql_dir() / "views").glob("*.sql") if not p.stem.startswith("_"))
    assert [r["view"] for r in rows] == files
    assert dict((r["view"], r["what it holds"]) for r in rows)["devices"] == \
        "One row per GPU seen in a source"


def test_a_views_columns_types_and_meaning(tmp_path):
    # no warehouse at --db: the types come from an empty one in memory
    result = runner.invoke(app, ["views", "nccl_ops", "--db", str(tmp_path / "none.duckdb"),
                                 "-f", "csv"])
    assert result.exit_code == 0, result.stderr
    rows = {r["column"]: r for r in csv.DictReader(io.StringIO(result.stdout))}
    assert rows["in_nelems"]["type"] == "BIGINT"
    assert rows["in_nelems"]["meaning"] == 'elements sent (Kineto "In msg nelems")'
    assert rows["protocol"]["meaning"] == "LL, LL128, SIMPLE"
    assert not (tmp_path / "none.duckdb").exists()


def test_an_unknown_view_says_which_it_may_be():
    result = runner.invoke(app, ["views", "kernel"])
    assert result.exit_code == 1
    assert "no view 'kernel' - did you mean 'kernels'?" in result.stderr
