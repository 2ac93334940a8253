#!/usr/bin/env python3
"""Reference numbers from HolisticTraceAnalysis (HTA) 0.5.0 for two tracewh metrics.

A script, not a test: pytest does not collect it and CI never runs it. It records what HTA
0.5.0 says about real traces of ../shared/data so that tracewh's `temporal_breakdown` and
`comm_comp_overlap` can be compared with a peer tool, rank by rank.

Two modes:

  Generate (needs HTA 0.5.0, kept out of the project's .venv):
      python3 -m venv /tmp/hta-venv
      /tmp/hta-venv/bin/pip install HolisticTraceAnalysis==0.5.0
      /tmp/hta-venv/bin/python tests/peer/hta_numbers.py
  runs HTA's TraceAnalysis(trace_dir=..., include_last_profiler_step=True) on each trace set,
  then re-computes every number without HTA (see --check) and writes tests/peer/hta_0.5.0.json.

  Check (plain Python 3.10+, standard library only: no HTA, no pandas, no DuckDB):
      python3 tests/peer/hta_numbers.py --check
  re-computes HTA's quantities from the raw JSON with interval arithmetic, following HTA 0.5.0's
  semantics as documented in tests/peer/README.md, and compares them with the recorded file.
  Exit status 1 on any mismatch.

The shared data directory is $TRACEWH_SHARED/data, else ../shared/data beside the repository
(as tests/conftest.py), else --data-dir.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import platform
import re
import shlex
import sys
from pathlib import Path
from typing import Any

HTA_VERSION = "0.5.0"
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
OUT = HERE / f"hta_{HTA_VERSION}.json"

# Trace sets, relative to the shared data directory.
TRACE_SETS = ["kineto/param/dlrm_kineto", "kineto/hta/trace_filter",
              # two profiler steps and GPU ops whose launch is not in the trace: HTA leaves
              # those out (tracewh's temporal_breakdown with unlaunched=hta does the same)
              "kineto/hta/trace_compare/base", "kineto/hta/trace_compare/test"]

# Tolerances of the independent check: raw times are integer microseconds in these traces and
# must agree exactly (up to float representation); percentages to 1e-9 points.
TIME_TOL_US = 1e-6
PCT_TOL = 1e-9


def default_data_dir() -> Path:
    override = os.environ.get("TRACEWH_SHARED")
    base = Path(override) if override else REPO.parent / "shared"
    return base / "data"


# ---------------------------------------------------------------------------------------------
# HTA side (generate mode only)
# ---------------------------------------------------------------------------------------------


def run_hta(trace_dir: Path, include_last_profiler_step: bool) -> dict[int, dict[str, Any]]:
    """HTA 0.5.0's numbers per rank, as its public API returns them, plus full precision."""
    import hta.analyzers.communication_analysis as comm_mod
    from hta.trace_analysis import TraceAnalysis

    analyzer = TraceAnalysis(
        trace_dir=str(trace_dir), include_last_profiler_step=include_last_profiler_step
    )
    tb = analyzer.get_temporal_breakdown(visualize=False)
    ov = analyzer.get_comm_comp_overlap(visualize=False)
    # get_comm_comp_overlap returns only round(100 * ratio, 2) (communication_analysis.py:84).
    # To record the unrounded value, shadow the builtin `round` in that module for one call:
    # the module-global name is looked up before builtins, nothing else changes.
    comm_mod.round = lambda x, ndigits=None: x  # type: ignore[attr-defined]
    try:
        ov_full = analyzer.get_comm_comp_overlap(visualize=False)
    finally:
        del comm_mod.round  # type: ignore[attr-defined]

    files = {int(r): Path(p).name for r, p in analyzer.t.trace_files.items()}
    out: dict[int, dict[str, Any]] = {}
    for row in tb.to_dict(orient="records"):
        rank = int(row["rank"])
        kernel = float(row["kernel_time(us)"])
        idle, comp, noncomp = (
            float(row["idle_time(us)"]),
            float(row["compute_time(us)"]),
            float(row["non_compute_time(us)"]),
        )
        out[rank] = {
            "file": files.get(rank),
            "temporal_breakdown": {
                # exactly the columns HTA returns (…_pctg are HTA's round(100*x, 2))
                "idle_time_us": idle,
                "compute_time_us": comp,
                "non_compute_time_us": noncomp,
                "kernel_time_us": kernel,
                "idle_time_pctg": float(row["idle_time_pctg"]),
                "compute_time_pctg": float(row["compute_time_pctg"]),
                "non_compute_time_pctg": float(row["non_compute_time_pctg"]),
                # the same ratios before HTA's rounding (breakdown_analysis.py:684-697)
                "idle_pct_full": 100 * (idle / kernel),
                "compute_pct_full": 100 * (comp / kernel),
                "non_compute_pct_full": 100 * (noncomp / kernel),
            },
        }
    for row in ov.to_dict(orient="records"):
        out[int(row["rank"])]["comm_comp_overlap"] = {
            "comp_comm_overlap_pctg": float(row["comp_comm_overlap_pctg"])
        }
    for row in ov_full.to_dict(orient="records"):
        out[int(row["rank"])]["comm_comp_overlap"]["overlap_pct_full"] = float(
            row["comp_comm_overlap_pctg"]
        )
    return out


# ---------------------------------------------------------------------------------------------
# Independent re-computation (plain json + interval arithmetic)
# ---------------------------------------------------------------------------------------------

# hta/utils/utils.py:56, :72, :88 (copied verbatim: the classification *is* the semantics)
NCCL_KERNEL_RE = re.compile(r"^nccl.*Kernel")
MEMORY_KERNEL_RE = re.compile(r"(^Memcpy)|(^Memset)|(^dma)")
NCCL_COMPUTE_KERNEL_RE = re.compile(r"(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)")


def kernel_type(name: str) -> str:
    """hta/utils/utils.py:109 get_kernel_type."""
    if NCCL_KERNEL_RE.match(name):
        return "COMMUNICATION"
    if MEMORY_KERNEL_RE.match(name):
        return "MEMORY"
    if not NCCL_COMPUTE_KERNEL_RE.match(name):
        return "COMPUTATION"
    return "OTHER"


def load_trace(path: Path) -> dict[str, Any]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def _as_int(value: Any, default: int = -1) -> int:
    """HTA reads args.stream with default -1 and int(); a non-numeric string becomes -1."""
    if value is None:
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1


class Row:
    __slots__ = ("cat", "correlation", "dur", "end", "name", "stream", "ts")

    def __init__(self, name, cat, ts, dur, stream, correlation):
        self.name, self.cat, self.ts, self.dur = name, cat, ts, dur
        self.end = ts + dur
        self.stream, self.correlation = stream, correlation


def hta_rows(trace: dict[str, Any]) -> list[Row]:
    """The events HTA keeps in its per-rank DataFrame (trace_parser.py:352-364, :253-254)."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    # pandas makes `ts` float64 when any event's ts is fractional or missing; then HTA rounds
    # every event inward to whole µs (trace_parser.py:319-336): ts=ceil(ts), end=floor(ts+dur).
    float_ts = any(
        ("ts" not in e) or isinstance(e.get("ts"), float) or e.get("ts") is None for e in events
    )
    rows: list[Row] = []
    for e in events:
        cat, dur = e.get("cat"), e.get("dur")
        if cat is None or dur is None or cat == "Trace":  # dropna(subset=[dur, cat]); cat Trace
            continue
        args = e.get("args")
        args = args if isinstance(args, dict) else {}
        ts = e.get("ts")
        if float_ts:
            end = math.floor(ts + dur)
            ts = math.ceil(ts)
            dur = end - ts
        rows.append(
            Row(
                str(e.get("name")),
                cat,
                ts,
                dur,
                _as_int(args.get("stream", -1)),
                _as_int(args.get("correlation", -1)),
            )
        )
    return rows


def is_gpu_kernel_row(r: Row) -> bool:
    """trace_filter.py:320-332: stream >= 0 and correlation >= 0, or an Event/Context Sync."""
    return (r.stream >= 0 and r.correlation >= 0) or r.name in ("Event Sync", "Context Sync")


def profiler_step_filter(
    rows: list[Row], step_names: set[str], include_last_profiler_step: bool
) -> list[Row]:
    """trace.py:714-732 filter_gpu_kernels_for_one_rank."""
    cpu = [r for r in rows if not is_gpu_kernel_row(r)]
    gpu = [r for r in rows if is_gpu_kernel_row(r)]
    steps = [r for r in cpu if r.name in step_names]
    last_start = max(r.ts for r in steps)
    last_end = max(r.end for r in steps)
    if include_last_profiler_step:
        cpu = [r for r in cpu if r.ts <= last_end]
    else:
        cpu = [r for r in cpu if r.ts < last_start]
    corr = {r.correlation for r in cpu}
    return [r for r in gpu if r.correlation in corr] + cpu


def merge(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def measure(merged: list[tuple[float, float]]) -> float:
    return sum(e - s for s, e in merged)


def intersection_measure(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> float:
    """|A ∩ B| for two merged (disjoint, sorted) interval lists."""
    i = j = 0
    total = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def breakdown(device: list[Row]) -> dict[str, Any]:
    """HTA's temporal breakdown and comm/comp overlap over one rank's device rows."""
    by_type: dict[str, list[tuple[float, float]]] = {}
    for r in device:
        by_type.setdefault(kernel_type(r.name), []).append((r.ts, r.end))
    all_merged = merge([(r.ts, r.end) for r in device])
    kernel_time = all_merged[-1][1] - all_merged[0][0]
    busy = measure(all_merged)
    comp = merge(by_type.get("COMPUTATION", []))
    comm = merge(by_type.get("COMMUNICATION", []))
    compute_time = measure(comp)
    idle = kernel_time - busy
    non_compute = kernel_time - compute_time - idle
    comm_time = measure(comm)
    overlap = intersection_measure(comm, comp)
    cm = merge(comp + comm)
    cm_mem = merge(cm + by_type.get("MEMORY", []))
    return {
        "window_start_us": all_merged[0][0],
        "window_end_us": all_merged[-1][1],
        "idle_time_us": idle,
        "compute_time_us": compute_time,
        "non_compute_time_us": non_compute,
        "kernel_time_us": kernel_time,
        "idle_pct": 100 * (idle / kernel_time),
        "compute_pct": 100 * (compute_time / kernel_time),
        "non_compute_pct": 100 * (non_compute / kernel_time),
        "comm_union_us": comm_time,
        "comm_compute_overlap_us": overlap,
        "overlap_pct": 100 * (overlap / comm_time) if comm_time else float("nan"),
        # non-compute split, for comparison with finer breakdowns (HTA does not report these):
        # non_compute = exposed_comm + exposed_memory + exposed_other
        "memory_union_us": measure(merge(by_type.get("MEMORY", []))),
        "other_union_us": measure(merge(by_type.get("OTHER", []))),
        "exposed_comm_us": comm_time - overlap,
        "exposed_memory_us": measure(cm_mem) - measure(cm),
        "exposed_other_us": busy - measure(cm_mem),
    }


def independent(trace_dir: Path, include_last_profiler_step: bool) -> dict[int, dict[str, Any]]:
    """Re-compute HTA's numbers for every rank of a trace directory, without HTA."""
    files = sorted(
        p for p in trace_dir.iterdir() if p.name.endswith(".json") or p.name.endswith(".gz")
    )
    per_rank: dict[int, tuple[Path, dict[str, Any], list[Row]]] = {}
    for path in files:
        trace = load_trace(path)
        rank = int((trace.get("distributedInfo") or {}).get("rank", 0))
        per_rank[rank] = (path, trace, hta_rows(trace))
    # HTA decides whether to filter from the *global* symbol table: the distinct event names
    # containing "ProfilerStep" over all ranks (trace.py:711-744). Fewer than 2: no filter.
    step_names = {
        r.name for _, _, rows in per_rank.values() for r in rows if "ProfilerStep" in r.name
    }
    apply_filter = len(step_names) >= 2

    result: dict[int, dict[str, Any]] = {}
    for rank, (path, trace, rows) in sorted(per_rank.items()):
        kept = (
            profiler_step_filter(rows, step_names, include_last_profiler_step)
            if apply_filter
            else rows
        )
        device = [r for r in kept if r.stream != -1]  # breakdown_analysis.py:650
        all_device = [r for r in rows if r.stream != -1]
        res = breakdown(device)
        res["file"] = path.name
        res["profiler_step_filter_applied"] = apply_filter
        res["diagnostics"] = diagnostics(rows, device, all_device, step_names)
        result[rank] = res
    return result


def diagnostics(
    rows: list[Row], device: list[Row], all_device: list[Row], step_names: set[str]
) -> dict[str, Any]:
    """Facts that matter when comparing with another tool (not HTA outputs)."""
    steps = sorted((r.ts, r.end, r.name) for r in rows if r.name in step_names and r.stream == -1)
    launch_ts = {
        r.correlation: r.ts for r in rows if r.cat == "cuda_runtime" and r.correlation >= 0
    }
    kept_ids = {id(r) for r in device}

    def in_any_step(t: float) -> bool:
        return any(s <= t < e for s, e, _ in steps)

    streams: dict[str, int] = {}
    cats: dict[str, int] = {}
    types: dict[str, int] = {}
    comm_names: dict[str, int] = {}
    for r in all_device:
        streams[str(r.stream)] = streams.get(str(r.stream), 0) + 1
        cats[r.cat] = cats.get(r.cat, 0) + 1
        t = kernel_type(r.name)
        types[t] = types.get(t, 0) + 1
        if t in ("COMMUNICATION", "OTHER"):
            key = f"{t}: {r.name}"
            comm_names[key] = comm_names.get(key, 0) + 1
    launched_outside = [
        r
        for r in all_device
        if r.correlation in launch_ts and not in_any_step(launch_ts[r.correlation])
    ]
    first_step, last_step_end = (
        (steps[0][0], max(e for _, e, _ in steps)) if steps else (None, None)
    )
    return {
        "profiler_steps": [{"name": n, "ts_us": s, "dur_us": e - s} for s, e, n in steps],
        "device_events_in_file": len(all_device),
        "device_events_used_by_hta": len(device),
        "device_events_by_cat": dict(sorted(cats.items())),
        "device_events_by_stream": dict(sorted(streams.items(), key=lambda kv: int(kv[0]))),
        "device_events_by_hta_kernel_type": dict(sorted(types.items())),
        "non_compute_kernel_names": dict(sorted(comm_names.items())),
        "device_events_launched_outside_profiler_steps": len(launched_outside),
        "of_which_used_by_hta": sum(1 for r in launched_outside if id(r) in kept_ids),
        "device_events_without_launch_event": sum(
            1 for r in all_device if r.correlation not in launch_ts
        ),
        "device_events_starting_before_first_step": (
            sum(1 for r in all_device if r.ts < first_step) if steps else None
        ),
        "device_events_ending_after_last_step_end": (
            sum(1 for r in all_device if r.end > last_step_end) if steps else None
        ),
        # the same quantities over every device event of the file, i.e. with no ProfilerStep
        # filter (what HTA computes when the trace has < 2 distinct ProfilerStep names)
        "all_device_events_breakdown": {k: v for k, v in breakdown(all_device).items()},
    }


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------


def compare(hta: dict[int, dict[str, Any]], mine: dict[int, dict[str, Any]]) -> list[str]:
    """Mismatches between HTA's recorded numbers and the independent ones (empty: all agree)."""
    problems: list[str] = []
    if sorted(hta) != sorted(mine):
        return [f"ranks differ: HTA {sorted(hta)} vs independent {sorted(mine)}"]
    for rank in sorted(hta):
        tb, ov, m = hta[rank]["temporal_breakdown"], hta[rank]["comm_comp_overlap"], mine[rank]
        for key in ("idle_time_us", "compute_time_us", "non_compute_time_us", "kernel_time_us"):
            if abs(tb[key] - m[key]) > TIME_TOL_US:
                problems.append(f"rank {rank} {key}: HTA {tb[key]} vs independent {m[key]}")
        for full, rounded, mk in (
            ("idle_pct_full", "idle_time_pctg", "idle_pct"),
            ("compute_pct_full", "compute_time_pctg", "compute_pct"),
            ("non_compute_pct_full", "non_compute_time_pctg", "non_compute_pct"),
        ):
            if abs(tb[full] - m[mk]) > PCT_TOL:
                problems.append(f"rank {rank} {full}: HTA {tb[full]} vs independent {m[mk]}")
            if round(m[mk], 2) != tb[rounded]:
                problems.append(
                    f"rank {rank} {rounded}: HTA {tb[rounded]} vs "
                    f"round(independent, 2) {round(m[mk], 2)}"
                )
        o_full, o_round = ov["overlap_pct_full"], ov["comp_comm_overlap_pctg"]
        if not (
            abs(o_full - m["overlap_pct"]) <= PCT_TOL
            or (math.isnan(o_full) and math.isnan(m["overlap_pct"]))
        ):
            problems.append(
                f"rank {rank} overlap_pct_full: HTA {o_full} vs independent {m['overlap_pct']}"
            )
        if not math.isnan(o_round) and round(m["overlap_pct"], 2) != o_round:
            problems.append(
                f"rank {rank} comp_comm_overlap_pctg: HTA {o_round} vs "
                f"round(independent, 2) {round(m['overlap_pct'], 2)}"
            )
    return problems


def check_summary(
    hta: dict[int, dict[str, Any]], mine: dict[int, dict[str, Any]]
) -> dict[str, Any]:
    problems = compare(hta, mine)
    max_pp = 0.0
    for rank in hta:
        tb, m = hta[rank]["temporal_breakdown"], mine[rank]
        diffs = [
            abs(tb["idle_pct_full"] - m["idle_pct"]),
            abs(tb["compute_pct_full"] - m["compute_pct"]),
            abs(tb["non_compute_pct_full"] - m["non_compute_pct"]),
            abs(hta[rank]["comm_comp_overlap"]["overlap_pct_full"] - m["overlap_pct"]),
        ]
        max_pp = max([max_pp] + [d for d in diffs if not math.isnan(d)])
    return {
        "status": "match" if not problems else "MISMATCH",
        "max_abs_diff_pct_points": max_pp,
        "problems": problems,
    }


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------

SEMANTICS = {
    "events": (
        "Every trace event with `dur` and `cat` (cat != 'Trace') whose args.stream is an int "
        "!= -1: cat kernel, gpu_memcpy, gpu_memset (any stream; NCCL streams included). "
        "No ph filter. Classification by name only (hta/utils/utils.py:56-117): "
        "COMMUNICATION = re.match('^nccl.*Kernel'); else MEMORY = "
        "re.match('(^Memcpy)|(^Memset)|(^dma)'); else COMPUTATION = not "
        "re.match('(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)'); else OTHER "
        "(name contains 'Memcpy' or 'Sync' anywhere)."
    ),
    "window": (
        "Per rank: [start of the first kept device event, end of the last], over all streams "
        "(kernel_time = last merged end - first merged start). Not the ProfilerStep span."
    ),
    "profiler_step": (
        "Only if the union of ranks has >= 2 distinct event names containing 'ProfilerStep' "
        "(else no filtering at all, with a warning). Then per rank: keep CPU-side events with "
        "ts <= max(end of ProfilerStep events) (include_last_profiler_step=True) or "
        "ts < max(start of ProfilerStep events) (False), and keep a device event iff its "
        "args.correlation equals the correlation of a kept CPU-side event (its launch). "
        "No lower bound: work launched before the first ProfilerStep is kept; device work "
        "launched inside may run past the step's end and extends the window."
    ),
    "temporal_breakdown": (
        "U = union (merged intervals) of all kept device events; C = union of COMPUTATION ones. "
        "kernel_time = window length; idle = kernel_time - |U|; compute = |C|; "
        "non_compute = kernel_time - compute - idle = |U| - |C| (communication, memory and "
        "OTHER time not under any compute kernel). *_pctg = round(100 * x / kernel_time, 2)."
    ),
    "comm_comp_overlap": (
        "round(100 * |union(COMMUNICATION) ∩ union(COMPUTATION)| / |union(COMMUNICATION)|, 2), "
        "per rank over the same kept device events (memory and OTHER kernels belong to "
        "neither side)."
    ),
    "units": "microseconds as in the trace (HTA labels them (us)); ranks from distributedInfo.rank",
    "details": "tests/peer/README.md",
}


def generate(data_dir: Path) -> int:
    import numpy
    import pandas
    from hta.version import __version_tuple__

    version = ".".join(str(x) for x in __version_tuple__)
    if version != HTA_VERSION:
        print(f"warning: HTA {version} installed, expected {HTA_VERSION}", file=sys.stderr)

    argv = [Path(sys.executable).as_posix()] + sys.argv
    doc: dict[str, Any] = {
        "tool": "HolisticTraceAnalysis",
        "hta_version": version,
        "command": f"cd {shlex.quote(str(Path.cwd()))} && "
        + " ".join(shlex.quote(a) for a in argv),
        "environment": {
            "setup": [
                "python3 -m venv /tmp/hta-venv",
                f"/tmp/hta-venv/bin/pip install HolisticTraceAnalysis=={HTA_VERSION}",
            ],
            "python": platform.python_version(),
            "pandas": pandas.__version__,
            "numpy": numpy.__version__,
        },
        "data_dir": "the shared data directory (../shared/data beside the repository)",
        "api": "TraceAnalysis(trace_dir=<data_dir>/<path>, include_last_profiler_step=True); "
        "get_temporal_breakdown(visualize=False); get_comm_comp_overlap(visualize=False)",
        "semantics": SEMANTICS,
        "trace_sets": {},
    }
    failed = False
    for rel in TRACE_SETS:
        trace_dir = data_dir / rel
        hta_main = run_hta(trace_dir, include_last_profiler_step=True)
        hta_excl = run_hta(trace_dir, include_last_profiler_step=False)
        mine_main = independent(trace_dir, include_last_profiler_step=True)
        mine_excl = independent(trace_dir, include_last_profiler_step=False)
        check_main = check_summary(hta_main, mine_main)
        check_excl = check_summary(hta_excl, mine_excl)
        failed |= bool(check_main["problems"] or check_excl["problems"])
        ranks = {}
        for rank in sorted(hta_main):
            entry = dict(hta_main[rank])
            m = mine_main[rank]
            entry["window_start_us"] = m["window_start_us"]  # file µs (HTA itself shifts to 0)
            entry["window_end_us"] = m["window_end_us"]
            entry["comm_union_us"] = m["comm_union_us"]
            entry["comm_compute_overlap_us"] = m["comm_compute_overlap_us"]
            entry["memory_union_us"] = m["memory_union_us"]
            entry["other_union_us"] = m["other_union_us"]
            for k in ("exposed_comm_us", "exposed_memory_us", "exposed_other_us"):
                entry[k] = m[k]
            entry["profiler_step_filter_applied"] = m["profiler_step_filter_applied"]
            ranks[str(rank)] = entry
        doc["trace_sets"][rel] = {
            "path": rel,
            "include_last_profiler_step": True,
            "ranks": ranks,
            "independent_check": check_main,
            "include_last_profiler_step_false": {
                "note": "the same API with include_last_profiler_step=False, for reference",
                "ranks": {str(r): hta_excl[r] for r in sorted(hta_excl)},
                "independent_check": check_excl,
            },
            "diagnostics": {str(r): mine_main[r]["diagnostics"] for r in sorted(mine_main)},
        }
    OUT.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO)}")
    print_table(doc)
    if failed:
        print("MISMATCH between HTA and the independent re-computation", file=sys.stderr)
        return 1
    return 0


def print_table(doc: dict[str, Any]) -> None:
    head = ("trace set", "rank", "idle%", "compute%", "non-compute%", "overlap%")
    print(f"{head[0]:28} {head[1]:>4} {head[2]:>7} {head[3]:>9} {head[4]:>13} {head[5]:>9}")
    for rel, ts in doc["trace_sets"].items():
        for rank, e in ts["ranks"].items():
            tb, ov = e["temporal_breakdown"], e["comm_comp_overlap"]
            print(
                f"{rel:28} {rank:>4} {tb['idle_time_pctg']:7.2f} {tb['compute_time_pctg']:9.2f} "
                f"{tb['non_compute_time_pctg']:13.2f} {ov['comp_comm_overlap_pctg']:9.2f}"
            )


def check(data_dir: Path, recorded: Path) -> int:
    doc = json.loads(recorded.read_text(encoding="utf-8"))
    bad = 0
    for rel, ts in doc["trace_sets"].items():
        for include_last, section in ((True, ts), (False, ts["include_last_profiler_step_false"])):
            hta = {int(r): v for r, v in section["ranks"].items()}
            mine = independent(data_dir / rel, include_last)
            summary = check_summary(hta, mine)
            label = f"{rel} include_last_profiler_step={include_last}"
            worst = summary["max_abs_diff_pct_points"]
            print(f"{label}: {summary['status']} (max |diff| {worst:.3g} pct points)")
            for p in summary["problems"]:
                print(f"  {p}")
            bad += len(summary["problems"])
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data-dir", type=Path, default=None, help="the shared data directory")
    ap.add_argument(
        "--check",
        action="store_true",
        help="re-compute without HTA and compare with the recorded JSON (no HTA needed)",
    )
    ap.add_argument(
        "--recorded", type=Path, default=OUT, help="JSON to check (default: %(default)s)"
    )
    args = ap.parse_args()
    data_dir = args.data_dir or default_data_dir()
    if not data_dir.is_dir():
        print(f"no shared data directory at {data_dir}", file=sys.stderr)
        return 2
    if args.check:
        return check(data_dir, args.recorded)
    return generate(data_dir)


if __name__ == "__main__":
    sys.exit(main())
