"""nvtx_gpu_projection equals NVIDIA's nvtx_gpu_proj_trace definition recomputed here from the raw
tables of every shared nsys export that has NVTX ranges and GPU work.

The definition, as nsys' own report states it (nvtx_gpu_proj_trace): a GPU operation (kernel,
memcpy, memset) is contained by an NVTX range if the CUDA runtime call that launched it (same
correlationId and process) lies within the range (range start <= call start, call end <= range
end) on the same thread; only ranges that start and end on the same thread (endGlobalTid NULL)
count; a range still open ends at the largest NVTX timestamp; the projection runs from the first
contained op's start to the last one's end, and counts distinct correlation ids. The test reads
the SQLite file with the standard sqlite3 module and walks the calls of each thread with bisect.
"""

from __future__ import annotations

import bisect
import sqlite3
from collections import defaultdict

import pytest

import tracewh
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric

EXPORTS = ["nsys/nsys-ai/mfu_2gpu_before.sqlite", "nsys/nsys-ai/h100_2gpu_1s.sqlite",
           "nsys/nsys-ai/mock.sqlite"]
RANGE_TYPES = (59, 60, 70, 71)


def tables(db) -> set[str]:
    return {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def union_length(intervals) -> int:
    total, end = 0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def nsys_projection(path) -> dict[tuple[int, str], tuple[int, int, int, int]]:
    """(pid, name) -> (ranges, gpu ops, projected ns, busy ns), from the raw tables."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    have = tables(db)
    if "NVTX_EVENTS" not in have:
        return {}
    kinds = [t for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                         "CUPTI_ACTIVITY_KIND_MEMSET") if t in have]
    ops = defaultdict(list)  # (globalPid, correlationId) -> [(start, end)]
    for table in kinds:
        for start, end, corr, gpid in db.execute(
                f"SELECT start, end, correlationId, globalPid FROM {table}"):
            ops[gpid, corr].append((start, end))
    calls = defaultdict(list)  # globalTid -> sorted [(start, end, correlationId)]
    for start, end, corr, gtid in db.execute(
            "SELECT start, end, correlationId, globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
        calls[gtid].append((start, end, corr))
    for rows in calls.values():
        rows.sort()
    types = ", ".join(map(str, RANGE_TYPES))
    last = db.execute(f"SELECT max(max(start), max(coalesce(end, start))) FROM NVTX_EVENTS "
                      f"WHERE eventType IN ({types})").fetchone()[0]
    result = defaultdict(lambda: [0, 0, 0, 0])
    for start, end, gtid, name in db.execute(
            f"SELECT e.start, e.end, e.globalTid, coalesce(e.text, s.value) FROM NVTX_EVENTS e "
            f"LEFT JOIN StringIds s ON s.id = e.textId "
            f"WHERE e.eventType IN ({types}) AND e.endGlobalTid IS NULL"):
        end = last if end is None else end
        thread = calls.get(gtid, [])
        inside = {}
        for c_start, c_end, corr in thread[bisect.bisect_left(thread, (start,)):]:
            if c_start > end:
                break
            if c_end <= end:
                for op in ops.get((gtid & 0xFFFFFFFFFF000000, corr), []):
                    inside.setdefault(corr, []).append(op)
        if not inside:
            continue
        spans = [op for group in inside.values() for op in group]
        row = result[(gtid >> 24) & 0xFFFFFF, name]
        row[0] += 1
        row[1] += len(inside)
        row[2] += max(e for _, e in spans) - min(s for s, _ in spans)
        row[3] += union_length(spans)
    return {key: tuple(value) for key, value in result.items()}


@pytest.mark.parametrize("export", EXPORTS)
def test_nvtx_gpu_projection_equals_the_recipe_definition(shared_data, tmp_path, export):
    expected = nsys_projection(shared_data / export)
    con = tracewh.connect(tmp_path / "wh.duckdb")
    results = ingest_paths(con, [shared_data / export], run="r")
    assert [r.status for r in results] == ["ingested"], results[0].message
    pid_of = dict(con.execute("SELECT rank, pid FROM ranks").fetchall())
    got = defaultdict(lambda: [0, 0, 0, 0])
    for row in run_metric(con, find_metric("nvtx_gpu_projection"), {}).to_pylist():
        key = (pid_of[row["rank"]], row["name"])  # domains apart here, merged by name as nsys names them
        for i, col in enumerate(("ranges", "gpu_ops", "proj_total_ns", "gpu_busy_ns")):
            got[key][i] += row[col]
    con.close()
    assert {k: tuple(v) for k, v in got.items()} == expected
    if export != "nsys/nsys-ai/mock.sqlite":
        assert len(expected) > 20
