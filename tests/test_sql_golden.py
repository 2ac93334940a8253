"""Golden files tests/sql/<metric>.test: hand-checked answers beside the query that gives them
and the rows it reads.

sqllogictest style, on a warehouse built from the file's own input records:

    input <table>                rows the warehouse holds (tests/metric_fixtures.py TABLES: run,
                                 rank, op, nccl, step, range, api): a line of column names, then
                                 tab-separated rows (NULL for none); times in ns after BASE
    statement ok                 SQL that must run (SET VARIABLE run = 'job', as in the shell)
    statement error <text>       SQL that must fail with <text> in its message
    query <types> [rowsort]      SQL, then `----`, then the expected rows, tab-separated
                                 (types: I integer, R real to 3 decimals, T text; NULL for NULL)

In a query, `metric` names the file's metric (sql/metrics/<metric>.sql, read with the variables
set so far). Lines starting with `#` are comments; records are separated by blank lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from metric_fixtures import build, runs_from_tables, table_rows
from tracewh.metrics import find_metric

GOLDEN = sorted((Path(__file__).parent / "sql").glob("*.test"))


def records(path: Path):
    """(line, kind, argument, sql, expected rows) for each record of a .test file."""
    lines = path.read_text().splitlines()
    block: list[str] = []
    start = 0
    for number, line in enumerate(lines + [""], start=1):
        if line.startswith("#"):
            continue
        if line.strip():
            start = start or number
            block.append(line)
            continue
        if block:
            head, body = block[0].split(maxsplit=1)[0], block[1:]
            argument = block[0][len(head):].strip()
            sql, expected = body, []
            if "----" in body:
                cut = body.index("----")
                sql, expected = body[:cut], body[cut + 1:]
            yield start, head, argument, "\n".join(sql), expected
        block, start = [], 0


def text(value, kind: str) -> str:
    if value is None:
        return "NULL"
    if kind == "R":
        return f"{value:.3f}"
    if kind == "I" and isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def with_metric(sql: str, metric) -> str:
    return sql.replace("FROM metric", f"FROM ({metric.query}\n) AS metric")


def warehouse(path: Path, folder: Path):
    """A warehouse holding exactly the rows of the file's input records."""
    tables = {argument: table_rows(sql.splitlines())
              for _, kind, argument, sql, _ in records(path) if kind == "input"}
    assert tables, f"{path.name}: no input records - a golden file carries the rows it reads"
    return build(folder / "w.duckdb", runs_from_tables(tables))


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_golden_file(path, tmp_path):
    metric = find_metric(path.stem)
    con = warehouse(path, tmp_path)
    try:
        for line, kind, argument, sql, expected in records(path):
            where = f"{path.name}:{line}"
            if kind == "input":
                continue
            if kind == "statement":
                statements = [with_metric(s, metric) for s in sql.split(";") if s.strip()]
                if argument == "ok":
                    for statement in statements:
                        con.execute(statement)
                else:
                    message = argument.removeprefix("error").strip()
                    with pytest.raises(Exception, match=message):
                        for statement in statements:
                            con.execute(statement).fetchall()
                continue
            assert kind == "query", f"{where}: unknown record {kind!r}"
            types, *options = argument.split()
            sql = with_metric(sql, metric)
            found = con.execute(sql).fetchall()
            assert all(len(row) == len(types) for row in found), f"{where}: {len(types)} types"
            got = ["\t".join(text(v, t) for v, t in zip(row, types)) for row in found]
            if "rowsort" in options:
                got, expected = sorted(got), sorted(expected)
            assert got == expected, where
    finally:
        con.close()
