#!/usr/bin/env python3
"""Reference numbers from TraceLens v1.0.0 (AMD-AGI/TraceLens, MIT) for tracewh's op metrics.

A script, not a test: pytest does not collect it and CI never runs it. It runs TraceLens' PyTorch
perf report on every shared TraceLens trace (../shared/data/kineto/tracelens) and on the 8 PARAM
DLRM ranks, and records the numbers of its CSVs in tests/peer/tracelens_1.0.0.json, which
tests/test_metrics_peer_tracelens.py compares with op_summary, op_efficiency,
gpu_kernel_summary and temporal_breakdown.

Runs in TraceLens' own venv (make tracelens-numbers builds .peers/tracelens; not on the registry,
../shared/peers/README.md):
    .peers/tracelens/bin/python tests/peer/tracelens_numbers.py

Per trace it writes the report's CSVs (generate_perf_report_pytorch with output_csvs_dir and the
kernel summary, as the command line TraceLens_generate_perf_report_pytorch does) and keeps:
  ops_summary       name -> [Count, total_direct_kernel_time_sum, total_subtree_kernel_time_sum] (µs)
  ops_unique_args   [name, Input Dims, Input type, operation_count, direct sum, subtree sum] (µs),
                    one row per TraceLens group (it also groups by strides and concrete inputs)
  perf              sheet (GEMM, CONV_fwd, SDPA_fwd, ...) -> [name, Input Dims, Input type,
                    Concrete Inputs, name_count, GFLOPS_first, Data Moved (MB)_first,
                    Kernel Time (µs)_sum]
  instances         sheet -> [name, external_id, GFLOPS, Data Moved (MB), Kernel Time (µs)]: the
                    per-op rows the perf sheets summarise (TreePerfAnalyzer.build_df_perf_metrics)
  kernel_summary    kernel name -> [count, Kernel duration (µs)_sum], over its parents
  gpu_timeline      type -> time ms
Dims, types and concrete inputs are kept as JSON lists (TraceLens writes Python tuples).

The shared data directory is $TRACEWH_SHARED/data, else ../shared/data beside the repository.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import platform
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

VERSION = "1.0.0"  # tag v1.0.0 = commit 171dd74721ca1ec45709e5805b68ae1f65e27811
HERE = Path(__file__).resolve().parent
OUT = HERE / f"tracelens_{VERSION}.json"
PERF_SHEETS = ("GEMM", "CONV_fwd", "CONV_bwd", "SDPA_fwd", "SDPA_bwd", "UnaryElementwise",
               "BinaryElementwise", "Normalization", "Reduce_fwd", "Reduce_bwd")


def data_dir() -> Path:
    shared = os.environ.get("TRACEWH_SHARED")
    return (Path(shared) if shared else HERE.parents[2] / "shared") / "data"


def traces(data: Path) -> list[str]:
    found = sorted(p.relative_to(data).as_posix()
                   for p in (data / "kineto" / "tracelens").rglob("*.json.gz"))
    return found + sorted(p.relative_to(data).as_posix()
                          for p in (data / "kineto" / "param" / "dlrm_kineto").glob("*.json"))


def as_list(text: str):
    """TraceLens' "((1, 2), (3,))" or "[[1, 2], [3]]" -> [[1, 2], [3]] (None: empty)."""
    if text in ("", None):
        return None
    value = ast.literal_eval(text)

    def walk(v):
        return [walk(x) for x in v] if isinstance(v, (list, tuple)) else v
    return walk(value)


def num(text):
    """A CSV number (None: empty, as TraceLens leaves what its model cannot give)."""
    return None if text in ("", None) else float(text)


def clean(value):
    """A DataFrame number as JSON (None: NaN or missing)."""
    return None if value is None or value != value else float(value)


def rows(folder: Path, sheet: str) -> list[dict]:
    path = folder / f"{sheet}.csv"
    return list(csv.DictReader(path.open(encoding="utf-8"))) if path.exists() else []


def record(trace: Path, csvs: Path) -> dict:
    from TraceLens import TreePerfAnalyzer
    from TraceLens.Reporting.generate_perf_report_pytorch import (
        build_sheet_category_to_op_names, generate_perf_report_pytorch)

    generate_perf_report_pytorch(profile_json_path=str(trace), output_csvs_dir=str(csvs),
                                 kernel_summary=True)
    out: dict = {}
    out["ops_summary"] = {r["name"]: [int(r["Count"]), float(r["total_direct_kernel_time_sum"]),
                                      float(r["total_subtree_kernel_time_sum"])]
                          for r in rows(csvs, "ops_summary")}
    out["ops_unique_args"] = [
        [r["name"], as_list(r["Input Dims"]), as_list(r["Input type"]), int(r["operation_count"]),
         float(r["total_direct_kernel_time_sum"]), float(r["total_subtree_kernel_time_sum"])]
        for r in rows(csvs, "ops_unique_args")]
    out["perf"] = {}
    for sheet in PERF_SHEETS:
        got = [[r["name"], as_list(r["Input Dims_first"]), as_list(r["Input type_first"]),
                as_list(r["Concrete Inputs_first"]), int(r["name_count"]), num(r["GFLOPS_first"]),
                num(r["Data Moved (MB)_first"]), num(r["Kernel Time (µs)_sum"])]
               for r in rows(csvs, sheet)]
        if got:
            out["perf"][sheet] = got
    kernels: dict[str, list] = defaultdict(lambda: [0, 0.0])
    for r in rows(csvs, "kernel_summary"):
        kernels[r["Kernel name"]][0] += int(r["Kernel duration (µs)_count"])
        kernels[r["Kernel name"]][1] += float(r["Kernel duration (µs)_sum"])
    out["kernel_summary"] = dict(kernels)
    out["gpu_timeline"] = {r["type"]: float(r["time ms"]) for r in rows(csvs, "gpu_timeline")}

    analyzer = TreePerfAnalyzer.from_file(profile_filepath=str(trace))
    names = build_sheet_category_to_op_names(analyzer.op_to_perf_model_class_map)
    out["instances"] = {}
    for sheet, op_names in sorted(names.items()):
        events = [e for e in analyzer.tree.events if e["name"] in op_names]
        if not events:
            continue
        df = analyzer.build_df_perf_metrics(events, bwd=False, include_kernel_details=False,
                                            include_args=True)
        if df.empty:
            continue
        out["instances"][sheet] = [
            [r["name"], int(r["external_id"]), clean(r.get("GFLOPS")), clean(r.get("Data Moved (MB)")),
             clean(r.get("Kernel Time (µs)"))]
            for r in df.to_dict("records")]
    return out


def main() -> int:
    import pandas
    data = data_dir()
    result = {"tracelens": VERSION, "commit": "171dd74721ca1ec45709e5805b68ae1f65e27811",
              "python": platform.python_version(), "pandas": pandas.__version__,
              "command": "python tests/peer/tracelens_numbers.py (generate_perf_report_pytorch("
                         "profile_json_path=TRACE, output_csvs_dir=DIR, kernel_summary=True))",
              "traces": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for i, rel in enumerate(traces(data)):
            print(rel, file=sys.stderr)
            result["traces"][rel] = record(data / rel, Path(tmp) / str(i))
    OUT.write_text(json.dumps(result, indent=0, sort_keys=True) + "\n")
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
