#!/usr/bin/env python3
"""Reference numbers from HolisticTraceAnalysis (HTA) 0.5.0's TraceDiff for tracewh's run_diff.

A script, not a test: pytest does not collect it and CI never runs it. It runs
``TraceDiff.compare_traces`` and ``TraceDiff.ops_diff`` on the shared HTA pair
``kineto/hta/trace_compare/{base,test}`` (rank 1, ``ProfilerStep#1009`` and ``#1010``) for every
iteration choice and device type, and writes what HTA returns to ``hta_trace_diff_0.5.0.json``;
``tests/test_diff.py`` compares run_diff with it.

    /work/main/build/hta-venv/bin/python tests/peer/hta_trace_diff.py   # HTA 0.5.0's own venv

The shared data directory is $TRACEWH_SHARED/data, else ../shared/data beside the repository.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path

HTA_VERSION = "0.5.0"
HERE = Path(__file__).resolve().parent
OUT = HERE / f"hta_trace_diff_{HTA_VERSION}.json"
PAIR = "kineto/hta/trace_compare"

# (iteration argument, device type, use_short_name): HTA's default iteration is the first (1009)
CASES = [(iteration, device, False)
         for iteration in (None, 1010, [1009, 1010]) for device in ("ALL", "CPU", "GPU")]
CASES += [(None, "ALL", True), (1010, "ALL", True)]


def data_dir() -> Path:
    override = os.environ.get("TRACEWH_SHARED")
    return (Path(override) if override else HERE.parents[2] / "shared") / "data"


def main() -> None:
    from importlib.metadata import version

    import pandas
    from hta.trace_diff import DeviceType, LabeledTrace, TraceDiff

    if version("HolisticTraceAnalysis") != HTA_VERSION:
        sys.exit(f"HTA {HTA_VERSION} is needed, not {version('HolisticTraceAnalysis')}")
    pair = data_dir() / PAIR
    base = LabeledTrace(label="base", trace_dir=str(pair / "base"))
    test = LabeledTrace(label="test", trace_dir=str(pair / "test"))
    cases = []
    for iteration, device, short in CASES:
        args = dict(control_iteration=iteration, test_iteration=iteration,
                    device_type=DeviceType[device])
        table = TraceDiff.compare_traces(base, test, use_short_name=short, **args)
        rows = [{"name": name,
                 "control_counts": int(row["base_counts"]),
                 "test_counts": int(row["test_counts"]),
                 "control_total_duration_us": float(row["base_total_duration"]),
                 "test_total_duration_us": float(row["test_total_duration"]),
                 "diff_counts": int(row["diff_counts"]),
                 "diff_duration_us": float(row["diff_duration"]),
                 "counts_change_categories": row["counts_change_categories"]}
                for name, row in table.iterrows()]
        case = {"iteration": iteration, "device_type": device, "use_short_name": short,
                "compare_traces": rows}
        if not short:  # ops_diff has no use_short_name
            case["ops_diff"] = TraceDiff.ops_diff(base, test, **args)
        cases.append(case)
    OUT.write_text(json.dumps({
        "tool": "HolisticTraceAnalysis",
        "hta_version": HTA_VERSION,
        "command": "/work/main/build/hta-venv/bin/python tests/peer/hta_trace_diff.py",
        "environment": {"python": platform.python_version(), "pandas": pandas.__version__},
        "pair": PAIR,
        "api": ("LabeledTrace(label=..., trace_dir=<pair>/base|test); "
                "TraceDiff.compare_traces(base, test, control_iteration=it, test_iteration=it, "
                "device_type=DeviceType[...], use_short_name=...); TraceDiff.ops_diff(same)"),
        "ranks": base.ranks(),
        "iterations": base.iterations(),
        "cases": cases,
    }, indent=1) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
