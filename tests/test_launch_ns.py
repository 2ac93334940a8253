"""Every GPU op keeps the start of the CUDA API call that launched it (launch_ns), linked at
ingest; checked against the raw files, read here without tracewh."""

from __future__ import annotations

import gzip
import json
import sqlite3
from decimal import Decimal

import pytest

import tracewh
from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import ingest_paths


def _ingest(tmp_path, traces):
    con = tracewh.connect(tmp_path / "wh.duckdb")
    results = ingest_paths(con, [traces], jobs=1)
    assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    return con


def test_nsys_launch_ns_is_the_runtime_call_with_the_same_correlation_id(tmp_path):
    generate_job(tmp_path / "traces", JobSpec(world_size=2, iterations=2, layers=2, seed=5))
    con = _ingest(tmp_path, tmp_path / "traces")
    expected = {}
    for path in sorted((tmp_path / "traces").glob("*.sqlite")):
        raw = sqlite3.connect(path)
        calls = {((gtid >> 24) & 0xFFFFFF, corr): start for gtid, corr, start in raw.execute(
            "SELECT globalTid, correlationId, start FROM CUPTI_ACTIVITY_KIND_RUNTIME")}
        for gpid, corr, start in raw.execute(
                "SELECT globalPid, correlationId, start FROM CUPTI_ACTIVITY_KIND_KERNEL"):
            pid = (gpid >> 24) & 0xFFFFFF
            expected[(path.name, pid, corr)] = (start, calls.get((pid, corr)))
        raw.close()
    got = con.execute("SELECT s.path, k.pid, k.correlation_id, k.start_ns, k.launch_ns FROM kernels k "
                      "JOIN sources s USING (file_id)").fetchall()
    assert len(got) == len(expected) > 100
    linked = 0
    for path, pid, corr, start_ns, launch_ns in got:
        raw_start, raw_launch = expected[(path.rsplit("/", 1)[-1], pid, corr)]
        if raw_launch is None:
            assert launch_ns is None
            continue
        # both in the same clock: the difference of the stored times is the raw difference
        assert start_ns - launch_ns == raw_start - raw_launch
        linked += 1
    assert linked == len(got)   # the generator launches every kernel from a runtime call


def _events(path):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=Decimal)


@pytest.mark.parametrize("gzip_files", [False, True], ids=["json", "json.gz"])
def test_kineto_launch_ns_is_the_runtime_event_with_the_same_correlation(tmp_path, gzip_files):
    generate_kineto_job(tmp_path / "traces", KinetoJobSpec(world_size=2, iterations=2, layers=2,
                                                           seed=9, gzip=gzip_files))
    con = _ingest(tmp_path, tmp_path / "traces")
    expected = {}
    for path in sorted((tmp_path / "traces").rglob("*.json*")):
        trace = _events(path)
        rank = trace["distributedInfo"]["rank"]
        base = int(trace.get("baseTimeNanoseconds", 0))
        utc = lambda ts: base + int((Decimal(ts) * 1000).to_integral_value())  # noqa: E731
        calls = {e["args"]["correlation"]: utc(e["ts"]) for e in trace["traceEvents"]
                 if e.get("cat") in ("cuda_runtime", "cuda_driver")
                 and "correlation" in e.get("args", {})}
        for e in trace["traceEvents"]:
            if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
                expected[(rank, utc(e["ts"]))] = calls.get(e["args"]["correlation"])
    got = {(rank, start): launch for rank, start, launch in con.execute(
        "SELECT rank, start_ns, launch_ns FROM gpu_ops").fetchall()}
    assert got == expected
    assert sum(v is not None for v in got.values()) > 50
