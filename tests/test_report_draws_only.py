"""`tracewh report` draws metric rows and computes nothing (issue 33): no sum over row values,
no ratio whose divisor is a row value, no running total of row values in the report's code.
Shares, totals and rates are metric columns (sql/metrics/*.sql); dividing by a unit (ns to ms)
or stacking bars is drawing and allowed."""

from __future__ import annotations

import ast
from pathlib import Path

import tracewh.report

SOURCES = sorted(Path(tracewh.report.__file__).parent.glob("*.py"))  # the report package


def _reads_a_row(node: ast.AST) -> bool:
    """node reads a metric row's value: row["column"] (a subscript by a column name)."""
    return any(isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant)
               and isinstance(n.slice.value, str) for n in ast.walk(node))


def arithmetic_on_rows(source: str) -> list[tuple[int, str]]:
    """(line, code) of each sum over row values, division by a row value or running total."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "sum" and any(map(_reads_a_row, node.args)):
            found.append(node)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv)) \
                and _reads_a_row(node.right):
            found.append(node)
        elif isinstance(node, ast.AugAssign) and _reads_a_row(node.value):
            found.append(node)
    return sorted((n.lineno, ast.get_source_segment(source, n)) for n in found)


def test_the_check_finds_what_the_roofline_figure_did_before():
    before = '''
for r in rows:
    total = families.setdefault(r["family"], [0.0, 0.0, 0.0])
    total[0] += r["gflops"] * 1e9 * r["instances"]
values = [100.0 * totals[rank][c] / (totals[rank]["iteration_ns"] or 1) for rank in ranks]
totals = {rank: sum(r[c] for r in rows if r["rank"] == rank) for rank in ranks}
ms = [r["gpu_ns"] / 1e6 for r in rows]
'''
    assert [line for line, _ in arithmetic_on_rows(before)] == [4, 5, 6]


def test_report_code_does_no_arithmetic_on_metric_rows():
    assert len(SOURCES) > 5
    for path in SOURCES:
        found = arithmetic_on_rows(path.read_text())
        assert not found, f"{path.name}: " + "; ".join(f"line {line}: {code}" for line, code in found)
