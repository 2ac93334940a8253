"""Allocator events of real Kineto traces (memory_events, memory_peaks, memory_at_peak) against
a recomputation from the raw JSON: per-iteration peaks of the allocated total and the counts of
allocations and frees."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter, defaultdict
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


def innermost(spans: list, ts: float):
    """The innermost of `spans` (start, end, name) holding instant `ts`: start <= ts < end (a
    span ending at ts no longer holds it; a zero-length one never does); the latest-starting,
    at one start the shorter. The spans holding it must nest (the test says so when not)."""
    holding = sorted((s for s in spans if s[0] <= ts < s[1]), key=lambda s: (s[0], -s[1]))
    for outer, inner in zip(holding, holding[1:]):
        assert outer[0] <= inner[0] and inner[1] <= outer[1], f"{outer} and {inner} cross at {ts}"
    return holding[-1] if holding else None


def expected_links(path: Path) -> Counter:
    """Each [memory] event's thread, time and bytes with the innermost cpu_op and the innermost
    user annotation (ProfilerStep#N included) on its thread, from the raw JSON; times in ns
    from the trace's first [memory] event, so that they compare with the warehouse's."""
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    ops, annotations = defaultdict(list), defaultdict(list)
    for e in events:
        if e.get("ph") != "X" or not e.get("ts"):
            continue
        name = str(e.get("name", ""))
        step = re.fullmatch(r"ProfilerStep#\d+", name)
        span = (e["ts"], e["ts"] + e.get("dur", 0), name)
        if e.get("cat") in ("cpu_op", "Operator") and not step:
            ops[int(e["tid"])].append(span)
        elif e.get("cat") in ("user_annotation", "User") or step:
            annotations[int(e["tid"])].append(span)
    memory = [e for e in events if e.get("name") == "[memory]" and e.get("ph") == "i"]
    first = min(e["ts"] for e in memory)

    def ns(us: float) -> int:
        return round((us - first) * 1000)

    def link(span, ts):
        return None if span is None else (span[2], ns(span[0]) - ns(ts))

    return Counter((int(e["tid"]), ns(e["ts"]), e["args"]["Bytes"],
                    link(innermost(ops[int(e["tid"])], e["ts"]), e["ts"]),
                    link(innermost(annotations[int(e["tid"])], e["ts"]), e["ts"]))
                   for e in memory)


@pytest.mark.parametrize("trace", TRACES)
def test_each_event_names_the_op_and_annotation_holding_it(warehouse, shared_data, trace):
    rows = warehouse.execute("""
        SELECT m.tid, m.start_ns - min(m.start_ns) OVER () AS ns, m.bytes,
               o.name AS op, o.start_ns - m.start_ns AS op_offset,
               n.name AS annotation, n.start_ns - m.start_ns AS annotation_offset
        FROM memory_events m
        LEFT JOIN cpu_ops o ON o.op_id = m.cpu_op_id
        LEFT JOIN nvtx_ranges n ON n.file_id = m.file_id AND n.range_id = m.nvtx_range_id
        WHERE m.run_id = ?""", [trace]).fetchall()
    got = Counter((tid, ns, size, None if op is None else (op, op_offset),
                   None if annotation is None else (annotation, annotation_offset))
                  for tid, ns, size, op, op_offset, annotation, annotation_offset in rows)
    expected = expected_links(shared_data / "kineto" / trace)
    assert got == expected
    # most allocations happen inside an op: the links are not all empty
    assert sum(n for key, n in expected.items() if key[3]) > sum(expected.values()) / 2
