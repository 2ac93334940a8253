"""Kineto cuda_sync events are stored as gpu_syncs and python_function events as python_frames,
with the numbers read straight from the raw JSON here."""

from __future__ import annotations

import gzip
import json
from collections import Counter

import tracewh
from tracewh.ingest import ingest_paths


def raw_events(path, category):
    with gzip.open(path) as f:
        events = json.load(f)["traceEvents"]
    return [e for e in events if e.get("cat") == category and e.get("ph") == "X"]


def ingested(db_path, path):
    con = tracewh.connect(db_path)
    results = ingest_paths(con, [path], run="r")
    assert [r.status for r in results] == ["ingested"], results[0].message
    return con


def test_cuda_sync_events_become_gpu_syncs(shared_data, db_path):
    # HTA's alexnet trace: 41 cuda_sync events (epoch-µs integer ts)
    path = next((shared_data / "kineto/hta/critical_path/alexnet").glob("*.json.gz"))
    raw = raw_events(path, "cuda_sync")
    con = ingested(db_path, path)
    got = con.execute("SELECT sync_kind, count(*), sum(dur_ns), count(stream_id), "
                      "count(api_name) FROM gpu_syncs GROUP BY ALL").fetchall()
    expected = Counter()
    for e in raw:
        expected[e["args"]["cuda_sync_kind"], "n"] += 1
        expected[e["args"]["cuda_sync_kind"], "ns"] += e["dur"] * 1000
        expected[e["args"]["cuda_sync_kind"], "stream"] += e["args"]["stream"] != 4294967295
    assert {k: (n, ns, s) for k, n, ns, s, _ in got} == {
        k: (expected[k, "n"], expected[k, "ns"], expected[k, "stream"])
        for k in {e["args"]["cuda_sync_kind"] for e in raw}}
    assert len(raw) == 41
    # every sync names the API call that waited, by correlation id
    assert {(k, api) for k, *_, api in got} != set()
    assert con.execute("SELECT count(*) FROM gpu_syncs WHERE api_name IS NULL").fetchone() == (0,)
    api = dict(con.execute("SELECT sync_kind, any_value(api_name) FROM gpu_syncs GROUP BY ALL").fetchall())
    assert api == {"Stream Sync": "cudaStreamSynchronize", "Context Sync": "cudaDeviceSynchronize",
                   "Stream Wait Event": "cudaStreamWaitEvent"}
    # stored now, so no longer counted as unmodelled
    assert "cuda_sync" not in (con.execute("SELECT warnings FROM sources").fetchone()[0] or "")
    con.close()


def test_python_function_events_become_python_frames(shared_data, db_path):
    path = shared_data / "kineto/tracelens/pairs/h100/gaunernst_bert-small-uncased__1016001.json.gz"
    raw = raw_events(path, "python_function")
    con = ingested(db_path, path)
    rows = con.execute("SELECT python_id, python_parent_id, name, dur_ns FROM python_frames").fetchall()
    assert sorted(rows) == sorted(
        (e["args"]["Python id"], e["args"]["Python parent id"], e["name"], round(e["dur"] * 1000))
        for e in raw)
    assert len(rows) == 1385
    modules = con.execute("SELECT count(*) FROM python_frames WHERE name LIKE 'nn.Module: %'").fetchone()[0]
    assert modules == sum(e["name"].startswith("nn.Module: ") for e in raw) > 0
    con.close()
