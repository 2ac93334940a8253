"""Allocator events of real Kineto traces (memory_events, memory_peaks, memory_at_peak) against
a recomputation from the raw JSON: per-iteration peaks of the allocated total and the counts of
allocations and frees."""

from __future__ import annotations

import gzip
import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

import tracewh
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric

TRACES = ["kineto-legacy/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
          *(f"tracelens/pairs/{gpu}/{model}.json.gz" for gpu in ("h100", "mi300")
            for model in ("gaunernst_bert-small-uncased__1016001",
                          "Falconsai_nsfw_image_detection__1016002",
                          "facebook_timesformer-base-finetuned-k400__1016002"))]


def expected_peaks(path: Path) -> dict:
    """{(device_type, device_id, iteration): (peak, allocations, frees)} from the raw events:
    the trace's Total Allocated where it has it, else a running sum of Bytes raised by its
    lowest dip (memory freed that was allocated before the trace)."""
    doc = json.loads(gzip.decompress(path.read_bytes()))
    events = doc["traceEvents"]
    steps = [(e["ts"], e["ts"] + e["dur"], int(re.match(r"ProfilerStep#(\d+)", e["name"])[1]))
             for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")]
    by_device = defaultdict(list)
    for e in events:
        if e.get("name") == "[memory]" and e.get("ph") == "i":
            a = e["args"]
            by_device["CPU" if a["Device Type"] == 0 else "GPU", a["Device Id"]].append((e["ts"], a))
    out = {}
    for (kind, device), evs in by_device.items():
        evs.sort(key=lambda x: x[0])  # stable: file order within a timestamp
        running, totals = 0, []
        for _, a in evs:
            running += a["Bytes"]
            totals.append(a.get("Total Allocated", running))
        if "Total Allocated" not in evs[0][1]:
            low = min(0, min(totals))
            totals = [t - low for t in totals]
        for (ts, a), total in zip(evs, totals):
            step = next((n for s, e, n in steps if s <= ts < e), None)
            peak, allocs, frees = out.get((kind, device, step), (None, 0, 0))
            out[kind, device, step] = (total if peak is None else max(peak, total),
                                       allocs + (a["Bytes"] > 0), frees + (a["Bytes"] < 0))
    return out


@pytest.fixture(scope="module")
def warehouse(shared_data, tmp_path_factory):
    con = tracewh.connect(tmp_path_factory.mktemp("memory") / "wh.duckdb")
    for trace in TRACES:  # the pairs name no rank: each alone in its own run
        results = ingest_paths(con, [shared_data / "kineto" / trace], run=trace)
        assert [r.status for r in results] == ["ingested"], [r.message for r in results]
    yield con
    con.close()


@pytest.mark.parametrize("trace", TRACES)
def test_peaks_and_counts_equal_the_raw_json(warehouse, shared_data, trace):
    got = {(r["device_type"], r["device_id"], r["iteration"]):
           (r["peak_allocated"], r["allocations"], r["frees"])
           for r in run_metric(warehouse, find_metric("memory_peaks"), {"run": trace}).to_pylist()}
    assert got == expected_peaks(shared_data / "kineto" / trace)


def live_at_peaks(path: Path) -> dict:
    """{(device_type, device_id, iteration): bytes} live at each iteration's peak event (the
    first with the highest Total Allocated) from allocations made in the trace, paired by Addr."""
    doc = json.loads(gzip.decompress(path.read_bytes()))
    steps = [(e["ts"], e["ts"] + e["dur"], int(re.match(r"ProfilerStep#(\d+)", e["name"])[1]))
             for e in doc["traceEvents"]
             if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")]
    memory = sorted((e for e in doc["traceEvents"] if e.get("name") == "[memory]"
                     and "Total Allocated" in e["args"]), key=lambda e: e["ts"])
    live, best = defaultdict(dict), {}
    for e in memory:
        a = e["args"]
        device = ("CPU" if a["Device Type"] == 0 else "GPU", a["Device Id"])
        if a["Bytes"] > 0:
            live[device][a["Addr"]] = a["Bytes"]
        else:
            live[device].pop(a["Addr"], None)
        step = next((n for s, end, n in steps if s <= e["ts"] < end), None)
        key = (*device, step)
        if step is not None and (key not in best or a["Total Allocated"] > best[key][0]):
            best[key] = (a["Total Allocated"], sum(live[device].values()))
    return {key: held for key, (_, held) in best.items()}


@pytest.mark.parametrize("trace", TRACES[1:])  # the legacy trace has no addresses
def test_memory_at_peak_sums_to_the_peak(warehouse, shared_data, trace):
    peaks = {(r["device_type"], r["device_id"], r["iteration"]): r["peak_allocated"]
             for r in run_metric(warehouse, find_metric("memory_peaks"), {"run": trace}).to_pylist()
             if not r["derived"] and r["iteration"] is not None}
    total, made_in_trace, modules = defaultdict(int), defaultdict(int), set()
    for r in run_metric(warehouse, find_metric("memory_at_peak"), {"run": trace}).to_pylist():
        key = (r["device_type"], r["device_id"], r["iteration"])
        assert r["bytes"] > 0, r
        total[key] += r["bytes"]
        if r["op"] != "(before the trace)":
            made_in_trace[key] += r["bytes"]
        modules.add(r["module"])
    assert {k: v for k, v in total.items() if k in peaks} == peaks
    assert {k: v for k, v in made_in_trace.items() if k in peaks} == \
        {k: v for k, v in live_at_peaks(shared_data / "kineto" / trace).items() if v and k in peaks}
    # modules: nn.Module frames of the trace (with_stack=True), named without their prefix
    frames = {name.removeprefix("nn.Module: ") for (name,) in warehouse.execute(
        "SELECT DISTINCT name FROM python_frames WHERE run_id = ? AND name LIKE 'nn.Module: %'",
        [trace]).fetchall()}
    assert modules - {None} <= frames and (modules - {None} or not frames)
