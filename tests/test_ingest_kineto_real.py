"""Kineto ingest on the real traces of ../shared/data/kineto: every era and edge case."""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path

import pytest

import tracewh
from tracewh.ingest import ingest_paths

GPU_AND_RUNTIME = {  # Kineto category -> warehouse view, all eras
    "kernel": "kernels", "Kernel": "kernels",
    "gpu_memcpy": "memcpy", "Memcpy": "memcpy",
    "gpu_memset": "memset", "Memset": "memset",
    "cuda_runtime": "cuda_api", "Runtime": "cuda_api", "cuda_driver": "cuda_api",
}


def load_json(path: Path):
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    # Decimal keeps 19-digit timestamps exact, as the ingest must
    return json.loads(raw, parse_float=Decimal)


def events(doc) -> list[dict]:
    return doc["traceEvents"] if isinstance(doc, dict) else doc


@pytest.fixture(scope="module")
def kineto_root(shared_data) -> Path:
    return shared_data / "kineto"


@pytest.fixture(scope="module")
def warehouse(kineto_root, tmp_path_factory):
    con = tracewh.connect(tmp_path_factory.mktemp("kineto") / "wh.duckdb")
    results = ingest_paths(con, [kineto_root])
    failed = [r.message for r in results if r.status != "ingested"]
    assert not failed
    yield con
    con.close()


def all_traces(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.name.endswith((".json", ".json.gz")) and p.is_file())


def test_every_trace_counts_match_the_json(warehouse, kineto_root):
    traces = all_traces(kineto_root)
    assert len(traces) >= 20
    for path in traces:
        expected = {view: 0 for view in set(GPU_AND_RUNTIME.values())}
        for event in events(load_json(path)):
            if event.get("ph") == "X" and event.get("cat") in GPU_AND_RUNTIME:
                expected[GPU_AND_RUNTIME[event["cat"]]] += 1
        file_id = warehouse.execute("SELECT file_id FROM sources WHERE path = ?", [str(path)]).fetchall()
        assert file_id, path
        got = {view: warehouse.execute(f"SELECT count(*) FROM {view} WHERE file_id = ?",
                                       [file_id[0][0]]).fetchall()[0][0] for view in expected}
        assert got == expected, path


def _first_kernel(doc) -> dict:
    return min((e for e in events(doc) if e.get("cat") in ("kernel", "Kernel") and e.get("ph") == "X"),
               key=lambda e: Decimal(e["ts"]))


@pytest.mark.parametrize("relative, era", [
    ("param/dlrm_kineto/worker3_step_12.1694128201557.pt.trace.json", "2023: integer epoch us"),
    ("hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", "2024-04: 19 digits"),
    ("hta/nccl_parser_config/nccl_data.json.gz", "2024+: base + relative"),
    ("tracelens/b200/eager_trace.json.gz", "2026: base + relative"),
    ("kineto-legacy/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz", "2021 legacy"),
])
def test_utc_of_the_first_kernel_per_era(warehouse, kineto_root, relative, era):
    doc = load_json(kineto_root / relative)
    ts = Decimal(_first_kernel(doc)["ts"])
    base = doc.get("baseTimeNanoseconds") if isinstance(doc, dict) else None
    expected = int(base) + int((ts * 1000).to_integral_value()) if base else int(ts * 1000)
    got = warehouse.execute("SELECT min(k.start_ns) FROM kernels k JOIN sources s USING (file_id) "
                            "WHERE s.path = ?", [str(kineto_root / relative)]).fetchall()[0][0]
    assert got == expected, era


def test_dlrm_eight_ranks_each_with_step_10_and_every_nccl_kernel_an_op(warehouse, kineto_root):
    run = "param/dlrm_kineto"
    assert warehouse.execute("SELECT list(rank ORDER BY rank), list(DISTINCT rank_source) FROM ranks "
                             "WHERE run_id = ?", [run]).fetchall() == [(list(range(8)), ["distributedInfo"])]
    steps = warehouse.execute("SELECT rank, list(iteration) FROM iterations WHERE run_id = ? "
                              "GROUP BY rank ORDER BY rank", [run]).fetchall()
    assert steps == [(r, [10]) for r in range(8)]
    for path in sorted((kineto_root / run).glob("*.json")):
        doc = load_json(path)
        rank = doc["distributedInfo"]["rank"]
        nccl = sorted(int(Decimal(e["ts"]) * 1000) for e in events(doc)
                      if e.get("cat") == "kernel" and e["name"].startswith("nccl"))
        got = [s for (s,) in warehouse.execute("SELECT start_ns FROM nccl_ops WHERE run_id = ? AND rank = ? "
                                                "ORDER BY start_ns", [run, rank]).fetchall()]
        assert got == nccl and len(nccl) == 8
    # the 2023 traces carry no collective args: the ProcessGroup annotation names the collective
    kinds = warehouse.execute("SELECT collective, collective_source, count(*) FROM nccl_ops WHERE run_id = ? "
                              "GROUP BY ALL ORDER BY ALL", [run]).fetchall()
    assert kinds == [("AllReduce", "annotation", 24), ("AllToAll", "annotation", 40)]


def test_nccl_args_match_the_json_exactly(warehouse, kineto_root):
    path = kineto_root / "hta/nccl_parser_config/nccl_data.json.gz"
    doc = load_json(path)
    base = doc["baseTimeNanoseconds"]
    expected = sorted(
        (base + int((Decimal(e["ts"]) * 1000).to_integral_value()), e["args"]["Collective name"],
         e["args"]["In msg nelems"], e["args"]["Out msg nelems"], e["args"]["dtype"],
         e["args"]["Group size"], e["args"]["Process Group Name"],
         e["args"]["Process Group Description"], e["args"]["Process Group Ranks"])
        for e in events(doc) if e.get("cat") == "kernel" and e["name"].startswith("nccl"))
    got = warehouse.execute(
        "SELECT start_ns, collective_name, in_nelems, out_nelems, dtype, group_size, pg_name, pg_desc, "
        "pg_ranks FROM nccl_ops n JOIN sources s USING (file_id) WHERE s.path = ? ORDER BY ALL",
        [str(path)]).fetchall()
    assert got == expected and len(got) == 21
    sizes = warehouse.execute("SELECT DISTINCT dtype, in_nelems, in_bytes, full_bytes FROM nccl_ops n "
                              "JOIN sources s USING (file_id) WHERE s.path = ?", [str(path)]).fetchall()
    assert all(b == n * {"Float": 4, "Long": 8}[d] and f == b for d, n, b, f in sizes)


def test_edge_cases(warehouse, kineto_root):
    def one(sql, *params):
        return warehouse.execute(sql, list(params)).fetchall()

    # no rank anywhere: rank 0, said so
    assert one("SELECT rank, rank_source FROM ranks WHERE run_id = 'hta/rank_unavailable'") == [(0, "default")]
    assert "taken as rank 0" in one("SELECT warnings FROM sources WHERE run_id = 'hta/rank_unavailable'")[0][0]
    assert one("SELECT rank, rank_source FROM ranks WHERE run_id = 'hta/distributed_info_unavailable'") == [(0, "default")]
    # the rank in the file name when the trace has none
    assert one("SELECT rank, rank_source FROM ranks WHERE run_id = 'hta/large_integer_trace'") == [(70, "filename")]
    # an id above int64 survives, digit for digit
    args = one("SELECT args FROM cpu_ops WHERE run_id = 'hta/large_integer_trace'")[0][0]
    assert "10159970886766084423" in args
    # AMD: GPU events on pid 2 are device 2
    assert one("SELECT DISTINCT device_id FROM kernels WHERE run_id = 'hta/amd_trace'") == [(2,)]
    # 2021 legacy: Operator/Runtime/Kernel categories, "stream 7" tids
    legacy = "kineto-legacy/resnet50_num_workers_0"
    assert one("SELECT count(*) > 8000, count(DISTINCT stream_id) >= 1, bool_and(stream_id IS NOT NULL) "
               "FROM kernels WHERE run_id = ?", legacy) == [(True, True, True)]
    assert one("SELECT count(*) FROM cuda_api WHERE run_id = ?", legacy)[0][0] > 10000
    # CPU-only gloo rank 34 of 300
    assert one("SELECT rank, world_size, backend FROM ranks WHERE run_id = 'hta/cpu_only'") == [(34, 300, "gloo")]
    # GPU ops link to the runtime call that launched them, per file: as many as the JSON links
    expected = 0
    for path in (kineto_root / "param/dlrm_kineto").glob("*.json"):
        evs = events(load_json(path))
        launches = {e["args"]["correlation"] for e in evs if e.get("cat") == "cuda_runtime"
                    and "correlation" in e.get("args", {})}
        expected += sum(1 for e in evs if e.get("cat") == "kernel" and e["args"]["correlation"] in launches)
    linked = one("SELECT count(*) FROM kernels k JOIN cuda_api a ON a.file_id = k.file_id "
                 "AND a.correlation_id = k.correlation_id WHERE k.run_id = 'param/dlrm_kineto'")[0][0]
    assert linked == expected > 1900


def test_every_kernel_gets_the_iteration_of_its_launch(warehouse):
    # DLRM: one ProfilerStep#10; kernels launched inside it are iteration 10, the rest NULL
    rows = warehouse.execute("""
        SELECT count(*) FILTER (WHERE k.iteration IS NOT DISTINCT FROM a.iteration), count(*)
        FROM kernels k JOIN cuda_api a ON a.file_id = k.file_id AND a.correlation_id = k.correlation_id
        WHERE k.run_id = 'param/dlrm_kineto'""").fetchall()[0]
    assert rows[0] == rows[1]
    assert warehouse.execute("SELECT count(*) FROM kernels WHERE run_id = 'param/dlrm_kineto' "
                             "AND iteration = 10").fetchall()[0][0] > 1500


def test_every_metric_runs_on_every_real_kineto_trace(warehouse):
    """No metric errors on real traces; where the data is absent the result is empty or says why."""
    from tracewh.metrics import list_metrics, run_metric

    for metric in list_metrics():
        table = run_metric(warehouse, metric, {})
        assert table.num_columns >= 2, metric.name  # metric, version and its own columns


def test_both_decoders_store_the_same_rows(kineto_root, tmp_path, monkeypatch):
    """DuckDB's JSON reader (the fast path) and the Python decoder (msgspec, which takes the files
    the reader refuses) store the same rows on every real trace: times, iterations, range ids
    (the events' order) and collectives alike; an args object differs only in whitespace."""
    import duckdb

    from tracewh.ingest import kineto_json

    paths = {}
    for decoder, cut in (("fast", kineto_json.cut_events), ("python", lambda path: None)):
        monkeypatch.setattr(kineto_json, "cut_events", cut)  # None: the reader is never tried
        paths[decoder] = tmp_path / f"{decoder}.duckdb"
        con = tracewh.connect(paths[decoder])
        try:
            assert [r.message for r in ingest_paths(con, [kineto_root]) if r.status != "ingested"] == []
        finally:
            con.close()
    con = duckdb.connect()
    for decoder, path in paths.items():
        con.execute(f"ATTACH '{path}' AS {decoder} (READ_ONLY)")
    readers = dict(con.execute(
        "SELECT 'fast', count(*) FILTER (json_extract_string(metadata, '$.reader') = 'duckdb read_json') "
        "FROM fast.store.sources UNION ALL "
        "SELECT 'python', count(*) FILTER (json_extract_string(metadata, '$.reader') = 'duckdb read_json') "
        "FROM python.store.sources").fetchall())
    assert readers["fast"] >= 20 and readers["python"] == 0  # two different decoders compared
    for table in ("cpu_ops", "cuda_api", "kernels", "memcpy", "memset", "nccl_ops", "nvtx_ranges",
                  "ranks", "devices", "sources", "runs"):
        columns = [c for (c,) in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE database_name = 'fast' "
            "AND schema_name = 'store' AND table_name = ? ORDER BY column_index", [table]).fetchall()
            if c not in ("metadata", "ingested_at", "created_at")]
        select = ", ".join("json(args)" if c == "args" else f'"{c}"' for c in columns)
        rows = con.execute(f"SELECT count(*) FROM fast.store.{table}").fetchall()[0][0]
        assert rows > 0, table
        for a, b in (("fast", "python"), ("python", "fast")):
            only = con.execute(f"SELECT {select} FROM {a}.store.{table} EXCEPT ALL "
                               f"SELECT {select} FROM {b}.store.{table} LIMIT 3").fetchall()
            assert only == [], (table, f"only in {a}", only)
