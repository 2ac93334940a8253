"""Each metric declares the columns it gives (`-- columns:` in its header, issue 33 item 7), so a
reader of the lake, a Spark job or `metrics show` knows them without running SQL. The declaration
is held to two independent records: what DuckDB binds for the query over the shipped sample's
views, and the column types of every answer recorded in the golden digests (every parameter set
on four warehouses, tests/metric_outputs.py)."""

from __future__ import annotations

import re

import pytest

from metric_outputs import load_golden
from tracewh.metrics import MetricError, bind_values, list_metrics, load_metric
from tracewh.resources import sql_dir
from tracewh.warehouse import open_read_only

SAMPLE = sql_dir().parent / "sample_db" / "sample.duckdb"
METRICS = list_metrics()

# What an Arrow type of a recorded answer is in DuckDB's words: an ENUM of names reaches Arrow
# as a dictionary of strings, and is declared VARCHAR (a reader sees text).
ARROW_TO_DUCKDB = {
    "string": "VARCHAR", "int32": "INTEGER", "int64": "BIGINT", "double": "DOUBLE",
    "bool": "BOOLEAN", "decimal128(38, 0)": "HUGEINT",
    "list<l: int32>": "INTEGER[]", "list<l: string>": "VARCHAR[]",
}


def _duckdb_type(arrow: str) -> str:
    return "VARCHAR" if arrow.startswith("dictionary<values=string") else ARROW_TO_DUCKDB[arrow]


def test_every_metric_declares_its_columns():
    undeclared = [m.name for m in METRICS if not m.columns]
    assert not undeclared


@pytest.fixture(scope="module")
def sample():
    con = open_read_only(SAMPLE)
    yield con
    con.close()


@pytest.mark.parametrize("metric", METRICS, ids=lambda m: m.name)
def test_declared_columns_are_what_duckdb_binds(metric, sample):
    values = bind_values(metric, {})
    for name, value in values.items():
        if value is None:
            sample.execute(f'RESET VARIABLE "{name}"')
        else:
            sample.execute(f'SET VARIABLE "{name}" = ?', [value])
    try:
        bound = sample.execute(f"DESCRIBE ({metric.query})").fetchall()
    finally:
        for name in values:
            sample.execute(f'RESET VARIABLE "{name}"')
    got = [(name, "VARCHAR" if kind.startswith("ENUM(") else kind) for name, kind, *_ in bound]
    assert got == list(metric.columns)


def test_declared_columns_are_those_of_every_recorded_answer():
    declared = {m.name: list(m.columns) for m in METRICS}
    checked = 0
    for warehouse, answers in load_golden().items():
        for key, answer in answers.items():
            if not isinstance(answer, dict) or "types" not in answer:
                continue  # an answer recorded as an error
            metric = key.split("/")[0]
            got = [(c, _duckdb_type(t)) for c, t in zip(answer["columns"], answer["types"])]
            assert got == declared[metric], f"{warehouse} {key}"
            checked += 1
    assert checked > 400  # every metric, most parameter sets, four warehouses


HEADER = "-- metric: bad\n-- version: 1\n-- summary: s\n-- grain: run_id\n-- params: none\n" \
         "-- uses: kernels\n"


@pytest.mark.parametrize("columns, message", [
    ("run_id varchar", r"bad.sql:7: cannot read column 'run_id varchar' - write `name TYPE`"),
    ("run_id VARCHAR, run_id BIGINT", r"bad.sql:7: column run_id is declared twice"),
    ("rank INTEGER", r"bad.sql:4: `-- grain:` names run_id, not among `-- columns:`"),
])
def test_a_wrong_columns_line_is_refused_where_it_is(tmp_path, columns, message):
    path = tmp_path / "bad.sql"
    path.write_text(HEADER + f"-- columns: {columns}\nSELECT run_id FROM kernels\n")
    with pytest.raises(MetricError, match=message):
        load_metric(path)


def test_types_with_arguments_and_lists_are_read_whole(tmp_path):
    path = tmp_path / "ok.sql"
    path.write_text(HEADER.replace("bad", "ok") + "-- columns: run_id VARCHAR, share DECIMAL(18, 3), "
                    "ranks INTEGER[], at TIMESTAMP WITH TIME ZONE\nSELECT run_id FROM kernels\n")
    assert load_metric(path).columns == (("run_id", "VARCHAR"), ("share", "DECIMAL(18, 3)"),
                                         ("ranks", "INTEGER[]"),
                                         ("at", "TIMESTAMP WITH TIME ZONE"))


def test_metrics_show_prints_the_columns():
    from tracewh.cli import app
    from typer.testing import CliRunner

    shown = CliRunner().invoke(app, ["metrics", "show", "straggler"]).output
    assert re.search(r"^-- columns: run_id VARCHAR, rank INTEGER, collectives BIGINT, ", shown,
                     re.M)
