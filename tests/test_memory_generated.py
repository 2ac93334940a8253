"""Allocator events of a small generated Kineto trace whose numbers are worked out by hand: a
free whose allocation predates the trace and an allocation the cut trace never frees are counted
as unpaired, and the derived totals never go negative."""

from __future__ import annotations

import pytest

import tracewh
from tracewh.generate.kineto import MemoryEvent, write_memory_trace
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric

US = 1_000
BASE = 1_700_000_000_000_000_000
# No totals in the trace (as before PyTorch 1.10), so the view derives them. Running sum of
# bytes: -100, 200, 400, 100, 150 | -50, 950, 900; lowest dip -100, so allocated is
#          0,   300, 500, 200, 250 |  50, 1050, 1000
EVENTS = [MemoryEvent(5 * US, -100, 0xA0),    # freed, allocated before the trace: unpaired
          MemoryEvent(10 * US, 300, 0xA1),
          MemoryEvent(20 * US, 200, 0xA2),    # step 1 peak: 500 = 300 (A1) + 200 (A2)
          MemoryEvent(30 * US, -300, 0xA1),
          MemoryEvent(40 * US, 50, 0xA3),
          MemoryEvent(110 * US, -200, 0xA2),
          MemoryEvent(120 * US, 1000, 0xA4),  # step 2 peak: 1050 = 50 (A3) + 1000 (A4); never freed
          MemoryEvent(130 * US, -50, 0xA3)]
STEPS = [(1, 1 * US, 100 * US), (2, 100 * US, 200 * US)]
OPS = [("aten::empty", 115 * US, 125 * US), ("aten::linear", 100 * US, 140 * US),
       ("aten::zeros", 15 * US, 25 * US)]


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    folder = tmp_path_factory.mktemp("memory")
    trace = write_memory_trace(folder / "rank0.pt.trace.json", EVENTS, STEPS, OPS, base_ns=BASE)
    connection = tracewh.connect(folder / "wh.duckdb")
    assert [r.status for r in ingest_paths(connection, [trace], run="m")] == ["ingested"]
    yield connection
    connection.close()


def test_derived_totals_never_negative_and_unpaired_counted(con):
    got = con.sql("SELECT start_ns - $1, allocated, derived, unpaired FROM memory_events "
                  "ORDER BY start_ns", params=[BASE]).fetchall()
    assert [(t // US, a, d, u) for t, a, d, u in got] == [
        (5, 0, True, True), (10, 300, True, False), (20, 500, True, False),
        (30, 200, True, False), (40, 250, True, False), (110, 50, True, False),
        (120, 1050, True, True), (130, 1000, True, False)]


def test_peaks_by_hand(con):
    got = [(r["iteration"], r["peak_allocated"], r["peak_ns"] - BASE, r["allocations"], r["frees"],
            r["unpaired"], r["op_at_peak"])
           for r in run_metric(con, find_metric("memory_peaks")).to_pylist()]
    assert got == [(1, 500, 20 * US, 3, 2, 1, "aten::zeros"),
                   (2, 1050, 120 * US, 1, 2, 1, "aten::empty")]


def test_at_peak_by_hand(con):
    got = [(r["iteration"], r["op"], r["bytes"], r["allocations"])
           for r in run_metric(con, find_metric("memory_at_peak")).to_pylist()]
    assert got == [(1, None, 300, 1), (1, "aten::zeros", 200, 1),
                   (2, "aten::empty", 1000, 1), (2, None, 50, 1)]  # A3: made at 40 us


def test_timeline_bins_keep_the_peak(con):
    # span 5 .. 130 us in two bins of 62.5 us: events 5-40 (peak 500), then 110-130 (peak 1050)
    got = [(r["ts_ns"] - BASE, r["allocated"], r["iteration"])
           for r in run_metric(con, find_metric("memory_timeline"), {"bins": "2"}).to_pylist()]
    assert got == [(5 * US, 500, 1), (67_500, 1050, 2)]
    every = run_metric(con, find_metric("memory_timeline"), {"bins": "0"}).to_pylist()
    assert [r["allocated"] for r in every] == [0, 300, 500, 200, 250, 50, 1050, 1000]
