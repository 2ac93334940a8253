#!/usr/bin/env python3
"""HolisticTraceAnalysis 0.5.0's launch statistics and queue lengths on every shared Kineto trace.

A script, not a test (pytest does not collect it). It runs HTA in its own venv:

    /work/main/build/hta-venv/bin/python tests/peer/hta_launch_queue.py

and writes tests/peer/hta_launch_queue_0.5.0.json, which tests/test_metrics_launch_queue.py
compares with tracewh's `kernel_launch_stats` and `queue_length`. Each trace file is read alone
(a temporary directory holding a symlink to it), so every file is one rank of its own analysis,
with include_last_profiler_step=True (as hta_numbers.py): HTA then keeps every launch that
starts before the end of the last ProfilerStep, when the file has two steps or more.
Per file it records:
  launch_stats: get_cuda_kernel_launch_stats(ranks=[rank], visualize=False) (defaults:
      include_memory_events=True), one [correlation, cpu_duration, gpu_duration, launch_delay]
      row per launch in µs, sorted by correlation;
  queue_length: get_queue_length_summary(ranks=[rank]), one row per stream (count, mean, std,
      min, 25%, 50%, 75%, max);
  float_ts: whether HTA read `ts` as float64. HTA then rounds every event inward to whole µs
      (ts = ceil(ts), end = floor(ts + dur); hta/common/trace_parser.py:319), unless
      HTA_DISABLE_NS_ROUNDING=1, its own switch, which this script sets: the numbers recorded
      are HTA's rules at the trace's full (ns) resolution. With rounding, each duration of such
      a file moves by under 2 µs.
A file HTA cannot read is recorded with its error.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback
from pathlib import Path

os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"  # before HTA reads its options

HTA_VERSION = "0.5.0"
HERE = Path(__file__).resolve().parent
OUT = HERE / f"hta_launch_queue_{HTA_VERSION}.json"


def data_dir() -> Path:
    override = os.environ.get("TRACEWH_SHARED")
    return (Path(override) if override else HERE.parents[2] / "shared") / "data"


def kineto_files(root: Path) -> list[Path]:
    return sorted(p for p in (root / "kineto").rglob("*")
                  if p.name.endswith((".json", ".json.gz")))


def run_one(path: Path) -> dict:
    import hta.common.trace_parser as parser
    from hta.trace_analysis import TraceAnalysis

    rounded = []  # HTA rounds only when it read `ts` as float64: record whether it did
    original = parser.round_down_time_stamps

    def round_down(df):
        rounded.append(str(df["ts"].dtype) == "float64")
        return original(df)

    parser.round_down_time_stamps = round_down

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / path.name).symlink_to(path)
        try:
            analyzer = TraceAnalysis(trace_dir=tmp, include_last_profiler_step=True)
        finally:
            parser.round_down_time_stamps = original
        rank = next(iter(analyzer.t.traces))
        stats = analyzer.get_cuda_kernel_launch_stats(ranks=[rank], visualize=False)[rank]
        rows = sorted([int(r.correlation), float(r.cpu_duration), float(r.gpu_duration),
                       float(r.launch_delay)] for r in stats.itertuples())
        summary = analyzer.get_queue_length_summary(ranks=[rank])
        queue = []
        if summary is not None:
            for (r, stream), row in summary.iterrows():
                q = row["queue_length"]
                queue.append({"stream": int(stream), **{k: (None if q[k] != q[k] else float(q[k]))
                                                         for k in q.index}})
        return {"rank": int(rank), "float_ts": any(rounded),
                "launch_stats": rows, "queue_length": queue}


def main() -> int:
    root = data_dir()
    results = {}
    for path in kineto_files(root):
        key = str(path.relative_to(root))
        print(key, file=sys.stderr)
        try:
            results[key] = run_one(path)
        except Exception as exc:  # recorded: the test skips what HTA cannot read
            results[key] = {"error": f"{type(exc).__name__}: {exc}".splitlines()[0],
                            "traceback_tail": traceback.format_exc().splitlines()[-3:]}
    OUT.write_text(json.dumps({"hta_version": HTA_VERSION, "files": results}, indent=None,
                              separators=(",", ":")) + "\n")
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
