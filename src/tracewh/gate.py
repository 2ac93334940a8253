"""`tracewh diff --fail-on`: thresholds on breakdown_diff's measures, for a CI gate.

A spec is comma-separated clauses `MEASURE>CHANGE` or `MEASURE<CHANGE`:

    step_time>+5%            the step time rose by more than 5 %
    exposed_comm>+0.5ms      exposed communication rose by more than 0.5 ms per rank and step
    overlap<-10%             the share of communication hidden under compute fell by over 10 %
    collective:allreduce>+5% a section's item: collective, kernel, idle (host_wait, ...)

A MEASURE names one row of breakdown_diff: a section whose only item it is (step, overlap), or
an item in snake case (`exposed_communication`, `host_wait`), a unique prefix allowed
(`exposed_comm`), or `SECTION:ITEM` for any row, kernels included. CHANGE is relative (%) or
absolute in the measure's unit (ns, with us/ms/s; overlap in percentage points). The rows and
their numbers are breakdown_diff's; this only compares them with the thresholds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import TracewhError

_CLAUSE = re.compile(r"^\s*([A-Za-z0-9_:.#\-]+?)\s*([<>])\s*([+-]?\d+(?:\.\d+)?)\s*(%|ns|us|ms|s)?\s*$")
_SCALE = {None: 1, "ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


@dataclass(frozen=True)
class Clause:
    text: str
    measure: str
    above: bool  # '>': fail when the change is above the threshold; '<': below
    threshold: float
    relative: bool  # threshold in % of the base value


@dataclass(frozen=True)
class Verdict:
    clause: Clause
    row: dict
    change: float | None  # diff_pct (relative) or diff; None: the measure is missing in a run
    failed: bool

    def line(self) -> str:
        c, row = self.clause, self.row
        name = f"{row['section']}: {row['item']}"
        percent = str(row["item"]).endswith("(%)")
        moved = f"{_value(row['base_value'], percent)} -> {_value(row['test_value'], percent)}"
        if self.change is None:
            moved += ", nothing to compare"
        elif row["diff_pct"] is not None:
            moved += f" ({row['diff_pct']:+.1f}%)"
        return f"{'FAIL' if self.failed else 'ok'} {c.text}: {name} {moved}"


def parse_fail_on(spec: str) -> list[Clause]:
    clauses = []
    for text in (t.strip() for t in spec.split(",")):
        if not text:
            continue
        found = _CLAUSE.match(text)
        if not found:
            raise TracewhError(f"--fail-on {text!r}: expected MEASURE>CHANGE or MEASURE<CHANGE, "
                               "e.g. step_time>+5% or exposed_comm>+0.5ms")
        measure, op, number, unit = found.groups()
        value = float(number) * (1 if unit == "%" else _SCALE[unit])
        clauses.append(Clause(text, measure.lower(), op == ">", value, unit == "%"))
    if not clauses:
        raise TracewhError("--fail-on: no threshold given, e.g. 'step_time>+5%'")
    return clauses


def judge(clauses: list[Clause], rows: list[dict]) -> list[Verdict]:
    """Each clause against its breakdown_diff row; a measure that names no row (or several) is
    a TracewhError listing what there is."""
    verdicts = []
    for clause in clauses:
        row = _row_of(clause, rows)
        change = row["diff_pct"] if clause.relative else row["diff"]
        failed = change is not None and (change > clause.threshold if clause.above
                                         else change < clause.threshold)
        verdicts.append(Verdict(clause, row, change, failed))
    return verdicts


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_")


def _row_of(clause: Clause, rows: list[dict]) -> dict:
    section, _, item = clause.measure.rpartition(":")
    by_section = {}
    for row in rows:
        by_section.setdefault(row["section"], []).append(row)
    if section:
        candidates = [r for r in by_section.get(section, []) if _key(r["item"]).startswith(_key(item))]
    else:
        alone = by_section.get(item, [])
        candidates = alone if len(alone) == 1 else \
            [r for r in rows if r["section"] != "kernel" and _key(r["item"]) == _key(item)] or \
            [r for r in rows if r["section"] != "kernel" and _key(r["item"]).startswith(_key(item))]
    if len(candidates) == 1:
        return candidates[0]
    known = sorted({_key(r["item"]) for r in rows if r["section"] != "kernel"}
                   | {s for s, rs in by_section.items() if len(rs) == 1 and s != "step"})
    if not candidates:
        from .mistakes import did_you_mean

        raise TracewhError(f"--fail-on {clause.text!r}: no measure {clause.measure!r}"
                           f"{did_you_mean(clause.measure, known)} (measures: "
                           f"{', '.join(known)}; or SECTION:ITEM, e.g. kernel:NAME)")
    raise TracewhError(f"--fail-on {clause.text!r}: {clause.measure!r} names "
                       f"{len(candidates)} measures ("
                       + ", ".join(f"{r['section']}:{_key(r['item'])}" for r in candidates[:5])
                       + "): give more of the name")


def _value(value, percent: bool) -> str:
    from .output import Units, duration

    if value is None:
        return "none"
    return f"{value:.1f}%" if percent else duration(value, Units.auto)
