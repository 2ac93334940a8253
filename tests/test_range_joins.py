"""The metrics that join NVTX ranges to things on a thread give the rows a brute-force
recomputation gives, on a generated export shaped like a real autograd-NVTX capture: one range per
aten op nested five deep, backward on the autograd thread, start/end ranges that overlap without
nesting and cross the step's end, and ranges that never end (JobSpec autograd_nvtx, stray_nvtx).

The recomputations read the SQLite files with the standard sqlite3 module and pair every range
with every call, phase or range of its thread or rank in plain Python loops (quadratic, as a
reference may be), following the definitions the metric headers state:
  nvtx_gpu_projection  nsys' nvtx_gpu_proj_trace (sql/metrics/nvtx_gpu_projection.sql)
  nvtx_phases          a phase belongs to the step of its rank whose range holds its start
  nvtx_ranges.depth / parent_id (range_nesting at ingest): ranges open around a range's start
                       that it lies inside, the tightest its parent
"""

from __future__ import annotations

import re
import sqlite3
import statistics
from collections import defaultdict

import pytest

import tracewh
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric
from test_metric_nvtx_gpu_projection import union_length

SPEC = JobSpec(world_size=2, iterations=3, layers=2, seed=7, autograd_nvtx=True, stray_nvtx=True)
RANGE_TYPES = (59, 60, 70, 71)  # push/pop and start/end, registered-string variants included
PUSH_POP = (59, 70)
PHASE = re.compile(r"(^|[.:]|## )(forward|backward|optimizer|optimizer_step|_take_model_step|step)( ##)?$")
STEP = re.compile(r"^ProfilerStep#(\d+)$")


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    folder = tmp_path_factory.mktemp("range_joins")
    truth = generate_job(folder / "job", SPEC)
    con = tracewh.connect(folder / "wh.duckdb")
    results = ingest_paths(con, truth.files, run="r")
    assert [r.status for r in results] == ["ingested"] * len(truth.files)
    yield truth, con
    con.close()


def raw_ranges(db) -> list[tuple]:
    """(start, end or None, globalTid, eventType, domain, name) of every range of the export."""
    strings = dict(db.execute("SELECT id, value FROM StringIds"))
    domains = {((gtid >> 24) & 0xFFFFFF, dom): text or strings.get(tid)
               for gtid, dom, text, tid in db.execute(
                   "SELECT globalTid, domainId, text, textId FROM NVTX_EVENTS WHERE eventType = 75")}
    rows = []
    for start, end, gtid, etype, dom, text, tid in db.execute(
            "SELECT start, end, globalTid, eventType, domainId, text, textId FROM NVTX_EVENTS "
            f"WHERE eventType IN {RANGE_TYPES}"):
        name = text if text is not None else strings.get(tid)
        domain = None if dom == 0 else domains.get(((gtid >> 24) & 0xFFFFFF, dom))
        rows.append((start, end, gtid, etype, domain, name))
    return rows


def projection(path) -> dict[tuple, tuple]:
    """(domain, name) -> (ranges, gpu ops, proj total, avg, median, min, max, busy, range total)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    ranges = raw_ranges(db)
    last = max(max(s, e if e is not None else s) for s, e, *_ in ranges)
    first_call = {}  # (globalPid, correlationId) -> (start, end, globalTid), the earliest call
    for start, end, gtid, corr in db.execute(
            "SELECT start, end, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
        key = (gtid & ~0xFFFFFF, corr)
        if key not in first_call or start < first_call[key][0]:
            first_call[key] = (start, end, gtid)
    ops = []  # (call start, call end, call thread, correlationId, op start, op end)
    for table in ("KERNEL", "MEMCPY", "MEMSET"):
        for start, end, corr, gpid in db.execute(
                f"SELECT start, end, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_{table}"):
            if (gpid, corr) in first_call:
                c_start, c_end, gtid = first_call[gpid, corr]
                ops.append((c_start, c_end, gtid, corr, start, end))
    per_name = defaultdict(list)
    for start, end, gtid, _, domain, name in ranges:
        end = last if end is None else end
        inside = [op for op in ops if op[2] == gtid and start <= op[0] and op[1] <= end]
        if inside:
            proj = max(op[5] for op in inside) - min(op[4] for op in inside)
            busy = union_length([(op[4], op[5]) for op in inside])
            per_name[domain, name].append((len({op[3] for op in inside}), proj, busy, end - start))
    return {key: (len(rows), sum(r[0] for r in rows), sum(r[1] for r in rows),
                  statistics.mean(r[1] for r in rows), statistics.median(r[1] for r in rows),
                  min(r[1] for r in rows), max(r[1] for r in rows), sum(r[2] for r in rows),
                  sum(r[3] for r in rows))
            for key, rows in per_name.items()}


def phases(path) -> dict[tuple, tuple]:
    """(iteration, phase) -> (instances, total, first start, last end, iteration length)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    ranges = raw_ranges(db)
    steps = [(int(STEP.match(name)[1]), s, e) for s, e, _, _, _, name in ranges
             if name and STEP.match(name) and e is not None]
    found = defaultdict(list)
    for s, e, _, _, _, name in ranges:
        if e is None or not name or not PHASE.search(name):
            continue
        for n, s0, e0 in steps:
            if s0 <= s < e0:
                found[n, name].append((s, e, e0 - s0))
    return {key: (len(rows), sum(e - s for s, e, _ in rows), min(s for s, _, _ in rows),
                  max(e for _, e, _ in rows), rows[0][2])
            for key, rows in found.items()}


def nesting(path) -> dict[tuple, tuple]:
    """(start, globalTid, name) -> (depth, parent's (start, name)) of every push/pop range: the
    ranges of its thread that enclose it (start before or with it and end after or with it,
    longer when they start together), the tightest its parent; a range never ended encloses all
    that follows it."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    spans = [(s, float("inf") if e is None else e, g, name)
             for s, e, g, etype, _, name in raw_ranges(db) if etype in PUSH_POP]
    out = {}
    for s, e, g, name in spans:
        around = [(s2, e2, n2) for s2, e2, g2, n2 in spans if g2 == g and (s2, n2) != (s, name)
                  and e2 > s2 and s2 <= s and e <= e2 and (s2 < s or e2 > e)]
        parent = max(around, key=lambda r: (r[0], -r[1]), default=None)
        out[s, g & 0xFFFFFF, name] = (len(around), parent and (parent[0], parent[2]))
    return out


def test_spec_holds_the_nasty_shapes(job):
    truth, _ = job
    db = sqlite3.connect(f"file:{truth.files[0]}?mode=ro", uri=True)
    ranges = raw_ranges(db)
    assert max(depth for depth, _ in nesting(truth.files[0]).values()) >= 5
    assert {etype for *_, etype, _, _ in ranges} == {59, 60}
    assert sum(e is None for _, e, *_ in ranges) == 2  # train (push/pop), checkpoint_pending
    assert len({g for _, _, g, *_ in ranges}) == 2  # main and autograd threads
    prefetch = [(s, e) for s, e, *_, name in ranges if name == "prefetch"]
    step = [(s, e) for s, e, *_, name in ranges if name == "zero.optimizer_step"]
    assert all(s1 < s2 < e1 < e2 for (s1, e1), (s2, e2) in zip(prefetch, step))  # overlap, not nested


def test_nvtx_gpu_projection_equals_brute_force(job):
    truth, con = job
    for rank, path in truth.rank_file.items():
        expected = projection(path)
        got = {(row["domain"], row["name"]): (
                   row["ranges"], row["gpu_ops"], row["proj_total_ns"], row["proj_avg_ns"],
                   row["proj_med_ns"], row["proj_min_ns"], row["proj_max_ns"], row["gpu_busy_ns"],
                   row["range_total_ns"])
               for row in run_metric(con, find_metric("nvtx_gpu_projection"),
                                     {"rank": rank}).to_pylist()}
        assert got.keys() == expected.keys()
        for key, row in expected.items():
            assert got[key] == pytest.approx(row), key
        assert len(expected) > 300  # about one name per aten op (names carry op_id)
        assert {"train", "checkpoint_pending", "prefetch", "zero.optimizer_step"} <= {
            name for _, name in expected}


def test_nvtx_phases_equals_brute_force(job):
    truth, con = job
    for rank, path in truth.rank_file.items():
        expected = phases(path)
        got = {(row["iteration"], row["phase"]): (
                   row["instances"], row["total_ns"], row["start_ns"], row["end_ns"],
                   row["iteration_ns"])
               for row in run_metric(con, find_metric("nvtx_phases"), {"rank": rank}).to_pylist()}
        utc = truth.utc_epoch_ns[path]
        assert got == {key: (n, total, s + utc, e + utc, length)
                       for key, (n, total, s, e, length) in expected.items()}
        assert {phase for _, phase in got} == {"forward", "backward", "optimizer",
                                               "zero.optimizer_step"}


def test_range_nesting_equals_brute_force(job):
    truth, con = job
    for rank, path in truth.rank_file.items():
        utc = truth.utc_epoch_ns[path]
        rows = con.execute(
            "SELECT r.start_ns, r.tid, r.name, r.depth, p.start_ns, p.name FROM nvtx_ranges r "
            "LEFT JOIN nvtx_ranges p ON p.file_id = r.file_id AND p.range_id = r.parent_id "
            "WHERE r.rank = ? AND r.kind = 'push_pop'", [rank]).fetchall()
        got = {(s - utc, tid, name): (depth, ps is not None and (ps - utc, pn) or None)
               for s, tid, name, depth, ps, pn in rows}
        assert got == nesting(path)
