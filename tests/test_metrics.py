"""Metrics: golden results on a hand-built warehouse, header/body checks, parameters, the lock,
and the same files run in the plain DuckDB shell.

The warehouse below is small enough to check by hand. Times are UTC ns; each source has its own
origin (nsys session start). Rank 0 of run r1 starts at O0, rank 1 at O1 = O0 + 0.7 s.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
from datetime import datetime, timezone
import subprocess

import pytest

import tracewh
from tracewh import metrics
from tracewh.ingest import derive
from tracewh.metrics import MetricError, find_metric, load_metric, run_metric
from tracewh.resources import sql_dir
from tracewh.sqlmodules import closure, install_order, load_modules, module_problems

S = 1_000_000_000  # ns per second
O0 = 1_700_000_000 * S  # origin of file 1 (run r1, rank 0) and file 3 (run r2, rank 0)
O1 = O0 + 700_000_000  # origin of file 2 (run r1, rank 1)

GEMM = "void gemm<float>(float *)"
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)"
ELEM = "elementwise_kernel"
RELU = "relu_kernel"
SHORT = {GEMM: "gemm", NCCL: "ncclDevKernel_AllReduce_Sum_f32_RING_LL", ELEM: ELEM, RELU: RELU,
         "other": "other"}

# run, rank, file, origin, name, start (ns after origin), dur, stream, correlation, iteration
KERNELS = [
    ("r1", 0, 1, O0, GEMM, S // 2, 100, 7, 1, 1),            # before the 1s/2s window
    ("r1", 0, 1, O0, GEMM, S - 100, 300, 7, 2, 1),           # cut by the window start: kept
    ("r1", 0, 1, O0, GEMM, 1_200_000_000, 200, 7, 3, 2),
    ("r1", 0, 1, O0, GEMM, 3 * S, 1000, 7, 4, 2),            # after the window
    ("r1", 0, 1, O0, NCCL, S - 500, 500, 9, 5, 1),           # ends exactly at the window start
    ("r1", 0, 1, O0, NCCL, 1_500_000_000, 700, 9, 6, 2),
    ("r1", 0, 1, O0, NCCL, 2 * S, 900, 9, 7, 3),             # starts exactly at the window end
    ("r1", 0, 1, O0, ELEM, 200_000_000, 42, 7, 8, None),     # single instance, no iteration
    ("r1", 1, 2, O1, GEMM, 500_000_000, 10, 7, 1, 1),        # at O0+1.2s: outside rank 1's window
    ("r1", 1, 2, O1, GEMM, 1_500_000_000, 20, 7, 2, 1),
    ("r1", 1, 2, O1, RELU, 1_600_000_000, 30, 7, 3, 2),
    ("r2", 0, 3, O0, "other", 1_500_000_000, 5, 7, 1, 1),
]
# run, rank, file, origin, start, dur, stream, correlation, bytes, copy kind
MEMCPY = [
    ("r1", 0, 1, O0, 2 * S - 100, 500, 11, 9, 4096, "HtoD"),  # cut by the window end: kept
    ("r1", 0, 1, O0, 2_500_000_000, 100, 11, 10, 100, "DtoH"),
]
# run, rank, file, origin, start, dur, stream, correlation, bytes
MEMSET = [("r1", 0, 1, O0, 1_800_000_000, 0, 11, 11, 64)]  # zero length: no throughput


def build_warehouse(path):
    con = tracewh.connect(path)
    for file_id, run_id, origin in [(1, "r1", O0), (2, "r1", O1), (3, "r2", O0)]:
        con.execute(
            "INSERT INTO store.sources (file_id, run_id, path, sha256, format, bytes, rows, "
            "has_utc, origin_ns, ingested_at) VALUES (?, ?, ?, ?, 'nsys-sqlite', 1, 1, true, ?, "
            "TIMESTAMP '2025-01-01')",
            [file_id, run_id, f"/traces/{file_id}.sqlite", f"{file_id:064d}", origin],
        )
    for run_id, rank, file_id, pid in [("r1", 0, 1, 100), ("r1", 1, 2, 200), ("r2", 0, 3, 300)]:
        con.execute(
            "INSERT INTO store.ranks (run_id, rank, file_id, pid, device_id, rank_source) "
            "VALUES (?, ?, ?, ?, ?, 'filename')",
            [run_id, rank, file_id, pid, rank],
        )
    for run_id, rank, file_id, origin, name, start, dur, stream, corr, iteration in KERNELS:
        con.execute(
            "INSERT INTO store.kernels (run_id, rank, file_id, pid, device_id, stream_id, start_ns,"
            " end_ns, name, short_name, correlation_id, grid_x, grid_y, grid_z, block_x, block_y,"
            " block_z, registers_per_thread, static_smem_bytes, dynamic_smem_bytes, iteration)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 2, 1, 256, 1, 1, 32, 1024, ?, ?)",
            [run_id, rank, file_id, 100 * (file_id), rank, stream, origin + start,
             origin + start + dur, name, SHORT[name], corr, corr * 10, corr * 8, iteration],
        )
    for run_id, rank, file_id, origin, start, dur, stream, corr, size, kind in MEMCPY:
        con.execute(
            "INSERT INTO store.memcpy (run_id, rank, file_id, pid, device_id, stream_id, start_ns,"
            " end_ns, correlation_id, bytes, copy_kind, iteration) VALUES (?, ?, ?, ?, ?, ?, ?, ?,"
            " ?, ?, ?, 2)",
            [run_id, rank, file_id, 100, rank, stream, origin + start, origin + start + dur,
             corr, size, kind],
        )
    for run_id, rank, file_id, origin, start, dur, stream, corr, size in MEMSET:
        con.execute(
            "INSERT INTO store.memset (run_id, rank, file_id, pid, device_id, stream_id, start_ns,"
            " end_ns, correlation_id, bytes, value, iteration) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?,"
            " ?, 0, 2)",
            [run_id, rank, file_id, 100, rank, stream, origin + start, origin + start + dur,
             corr, size],
        )
    for file_id in (1, 2, 3):
        derive(con, file_id, file_id)  # as ingest does after each source
    return con


@pytest.fixture
def con(tmp_path):
    connection = build_warehouse(tmp_path / "w.duckdb")
    yield connection
    connection.close()


def rows(table):
    return table.to_pylist()


def expected_summary(run_id, rank, durations: dict[str, list[int]]):
    """gpu_kernel_summary rows computed with the statistics module, in the metric's order."""
    grand = sum(sum(d) for d in durations.values())
    out = []
    for name, durs in durations.items():
        out.append({
            "metric": "gpu_kernel_summary", "version": 2, "run_id": run_id, "rank": rank,
            "time_pct": pytest.approx(sum(durs) * 100 / grand),
            "total_ns": sum(durs), "instances": len(durs),
            "avg_ns": pytest.approx(statistics.mean(durs)),
            "med_ns": pytest.approx(statistics.median(durs)),
            "min_ns": min(durs), "max_ns": max(durs),
            "stddev_ns": pytest.approx(statistics.stdev(durs) if len(durs) > 1 else 0.0),
            "name": name, "short_name": SHORT[name],
            "kind": "comm" if name.startswith("nccl") else "compute",
        })
    return sorted(out, key=lambda r: (-r["total_ns"], r["name"]))


# --- gpu_kernel_summary ---------------------------------------------------------------------

def test_kernel_summary_matches_hand_computed_rows(con):
    metric = find_metric("gpu_kernel_summary")
    got = rows(run_metric(con, metric, {"run": "r1"}))
    assert got == (
        expected_summary("r1", 0, {GEMM: [100, 300, 200, 1000], NCCL: [500, 700, 900], ELEM: [42]})
        + expected_summary("r1", 1, {GEMM: [10, 20], RELU: [30]})
    )


def test_kernel_summary_by_hand(con):
    got = {r["name"]: r for r in rows(run_metric(con, find_metric("gpu_kernel_summary"),
                                                 {"run": "r1", "rank": "0"}))}
    assert got[GEMM]["med_ns"] == 250.0  # even count: mean of 200 and 300
    assert got[NCCL]["med_ns"] == 700.0  # odd count: the middle value
    assert got[NCCL]["stddev_ns"] == 200.0  # sample stddev of 500, 700, 900
    assert got[ELEM]["stddev_ns"] == 0.0  # one instance: nsys prints 0.0, not NULL
    assert got[GEMM]["time_pct"] == pytest.approx(1600 * 100 / 3742)


def test_kernel_summary_time_pct_sums_to_100_per_rank(con):
    table = run_metric(con, find_metric("gpu_kernel_summary"), {})
    totals = {}
    for r in rows(table):
        key = (r["run_id"], r["rank"])
        totals[key] = totals.get(key, 0) + r["time_pct"]
    assert totals == {("r1", 0): pytest.approx(100), ("r1", 1): pytest.approx(100),
                      ("r2", 0): pytest.approx(100)}


def test_kernel_summary_ties_order_by_name(con):
    got = rows(run_metric(con, find_metric("gpu_kernel_summary"), {"run": "r1", "rank": "1"}))
    assert [(r["name"], r["total_ns"]) for r in got] == [(RELU, 30), (GEMM, 30)]


def test_kernel_summary_iteration_range(con):
    got = rows(run_metric(con, find_metric("gpu_kernel_summary"),
                          {"run": "r1", "rank": "0", "iteration_from": "2", "iteration_to": "2"}))
    # ELEM has no iteration: left out; percentages are of the kernels kept.
    assert got == expected_summary("r1", 0, {GEMM: [200, 1000], NCCL: [700]})


def test_kernel_summary_top(con):
    got = rows(run_metric(con, find_metric("gpu_kernel_summary"), {"run": "r1", "top": "1"}))
    assert [(r["rank"], r["name"], r["time_pct"]) for r in got] == [
        (0, NCCL, pytest.approx(2100 * 100 / 3742)),
        (1, RELU, pytest.approx(50.0)),
    ]


def test_unset_parameters_do_not_leak_between_runs(con):
    metric = find_metric("gpu_kernel_summary")
    assert {r["rank"] for r in rows(run_metric(con, metric, {"run": "r1", "rank": "1"}))} == {1}
    assert {r["rank"] for r in rows(run_metric(con, metric, {"run": "r1"}))} == {0, 1}


# --- gpu_trace ------------------------------------------------------------------------------

def trace_keys(table):
    return [(r["rank"], r["name"], r["start_rel_ns"]) for r in rows(table)]


def test_gpu_trace_window_keeps_ops_overlapping_it(con):
    got = run_metric(con, find_metric("gpu_trace"), {"run": "r1", "window": "1s/2s"})
    assert trace_keys(got) == [
        (0, NCCL, S - 500),               # ends exactly at the window start
        (0, GEMM, S - 100),               # starts before the window, ends inside
        (0, GEMM, 1_200_000_000),
        (0, NCCL, 1_500_000_000),
        (0, "[CUDA memset]", 1_800_000_000),
        (0, "[CUDA memcpy Host-to-Device]", 2 * S - 100),  # starts inside, ends after the window
        (0, NCCL, 2 * S),                 # starts exactly at the window end
        (1, GEMM, 1_500_000_000),         # rank 1's window is relative to its own origin O1
        (1, RELU, 1_600_000_000),
    ]


def test_gpu_trace_rows_in_full(con):
    params = {"run": "r1", "rank": "0", "window": "1s200ms/1s800ms"}
    got = rows(run_metric(con, find_metric("gpu_trace"), params))
    assert got == [
        {"metric": "gpu_trace", "version": 3, "run_id": "r1", "rank": 0,
         "start_ns": O0 + 1_200_000_000, "start_rel_ns": 1_200_000_000, "dur_ns": 200,
         "end_ns": O0 + 1_200_000_200, "correlation_id": 3,
         "grid_x": 30, "grid_y": 2, "grid_z": 1, "block_x": 256, "block_y": 1, "block_z": 1,
         "registers_per_thread": 32, "static_smem_bytes": 1024, "dynamic_smem_bytes": 24,
         "bytes": None, "throughput_bytes_per_s": None, "src_kind": None, "dst_kind": None,
         "device_id": 0, "context_id": None, "stream_id": 7,
         "name": GEMM, "op": "kernel", "kind": "compute"},
        {"metric": "gpu_trace", "version": 3, "run_id": "r1", "rank": 0,
         "start_ns": O0 + 1_500_000_000, "start_rel_ns": 1_500_000_000, "dur_ns": 700,
         "end_ns": O0 + 1_500_000_700, "correlation_id": 6,
         "grid_x": 60, "grid_y": 2, "grid_z": 1, "block_x": 256, "block_y": 1, "block_z": 1,
         "registers_per_thread": 32, "static_smem_bytes": 1024, "dynamic_smem_bytes": 48,
         "bytes": None, "throughput_bytes_per_s": None, "src_kind": None, "dst_kind": None,
         "device_id": 0, "context_id": None, "stream_id": 9,
         "name": NCCL, "op": "kernel", "kind": "comm"},
        {"metric": "gpu_trace", "version": 3, "run_id": "r1", "rank": 0,
         "start_ns": O0 + 1_800_000_000, "start_rel_ns": 1_800_000_000, "dur_ns": 0,
         "end_ns": O0 + 1_800_000_000, "correlation_id": 11,
         "grid_x": None, "grid_y": None, "grid_z": None, "block_x": None, "block_y": None,
         "block_z": None, "registers_per_thread": None, "static_smem_bytes": None,
         "dynamic_smem_bytes": None, "bytes": 64, "throughput_bytes_per_s": None,
         "src_kind": None, "dst_kind": None, "device_id": 0, "context_id": None, "stream_id": 11, "name": "[CUDA memset]", "op": "memset",
         "kind": "memset"},
    ]


def test_gpu_trace_copy_throughput(con):
    got = rows(run_metric(con, find_metric("gpu_trace"), {"run": "r1", "rank": "0"}))
    copies = [(r["name"], r["throughput_bytes_per_s"]) for r in got if r["op"] == "memcpy"]
    assert copies == [("[CUDA memcpy Host-to-Device]", 4096 * 1e9 / 500),
                      ("[CUDA memcpy Device-to-Host]", 100 * 1e9 / 100)]


def test_gpu_trace_everything_in_start_order(con):
    got = rows(run_metric(con, find_metric("gpu_trace"), {}))
    assert len(got) == len(KERNELS) + len(MEMCPY) + len(MEMSET)
    starts = [r["start_ns"] for r in got]
    assert starts == sorted(starts)


def test_gpu_trace_utc_bounds(con):
    got = run_metric(con, find_metric("gpu_trace"),
                     {"start_ns": str(O0 + 1_500_000_000), "end_ns": str(O0 + 1_500_000_000)})
    # run r2's kernel starts at the same instant as r1's NCCL kernel; r1 rank 1 has nothing then.
    assert [(r["run_id"], r["name"]) for r in rows(got)] == [("r1", NCCL), ("r2", "other")]


def test_gpu_trace_open_ended_window(con):
    params = {"run": "r1", "rank": "0", "window": "2s500ms/"}
    got = run_metric(con, find_metric("gpu_trace"), params)
    assert trace_keys(got) == [(0, "[CUDA memcpy Device-to-Host]", 2_500_000_000), (0, GEMM, 3 * S)]


def test_gpu_trace_bad_window_is_an_error(con):
    with pytest.raises(MetricError, match="not a duration like 4s420ms: soon"):
        run_metric(con, find_metric("gpu_trace"), {"window": "soon/2s"})


# --- parameters -----------------------------------------------------------------------------

def test_undeclared_param_names_metric_and_param(con):
    with pytest.raises(MetricError, match=r"gpu_trace: no parameter 'ranks'"):
        run_metric(con, find_metric("gpu_trace"), {"ranks": "1"})


def test_param_of_wrong_type_names_metric_and_param(con):
    with pytest.raises(MetricError, match=r"gpu_kernel_summary: parameter rank='one' is not"):
        run_metric(con, find_metric("gpu_kernel_summary"), {"rank": "one"})


def test_missing_required_param(con, tmp_path):
    path = write_metric(tmp_path, "needs_run", "run (text)",
                        "SELECT * FROM runs WHERE run_id = getvariable('run')", uses="runs")
    with pytest.raises(MetricError, match="needs_run: parameter run is required"):
        run_metric(con, load_metric(path), {})
    assert run_metric(con, load_metric(path), {"run": "r1"}).num_rows == 0  # no store.runs rows


def test_values_are_bound_not_pasted(con):
    evil = "r1' OR true OR '"
    assert run_metric(con, find_metric("gpu_kernel_summary"), {"run": evil}).num_rows == 0


# --- header and body checks -----------------------------------------------------------------

def write_metric(folder, name, params, body, header=None, uses="kernels"):
    header = header if header is not None else (
        f"-- metric: {name}\n-- version: 1\n-- summary: test\n-- grain: run_id\n"
        f"-- params: {params}\n-- uses: {uses}\n"
    )
    path = folder / f"{name}.sql"
    path.write_text(header + body + "\n")
    return path


@pytest.mark.parametrize("header, message", [
    ("-- metric: bad\n-- summary: s\n-- grain: g\n-- params: none\n",
     r"bad.sql:1: header lacks `-- version:`"),
    ("-- metric: bad\n-- version: one\n-- summary: s\n-- grain: g\n-- params: none\n-- uses: none\n",
     r"bad.sql:2: version must be a positive integer"),
    ("-- metric: other\n-- version: 1\n-- summary: s\n-- grain: g\n-- params: none\n-- uses: none\n",
     r"bad.sql:1: metric is 'other' but the file is bad.sql"),
    ("-- metric: bad\n-- version: 1\n-- summary: s\n-- grain: g\n-- params: rank (integer)\n-- uses: none\n",
     r"bad.sql:5: parameter rank has type 'integer'"),
    ("-- metric: bad\n-- version: 1\n-- version: 2\n-- summary: s\n-- grain: g\n-- params: none\n-- uses: none\n",
     r"bad.sql:3: `-- version:` appears twice"),
])
def test_bad_header_is_refused(tmp_path, header, message):
    path = write_metric(tmp_path, "bad", "", "SELECT 1 AS x", header=header)
    with pytest.raises(MetricError, match=message) as info:
        load_metric(path)
    assert str(info.value).startswith(str(path))


def test_complexity_is_read_from_the_header_once(tmp_path):
    header = ("-- metric: sweep\n-- version: 1\n-- summary: s\n-- grain: run_id\n-- params: none\n"
              "-- uses: kernels\n-- complexity: O(n log n) in kernels\n")
    path = write_metric(tmp_path, "sweep", "", "SELECT run_id FROM kernels", header=header)
    assert load_metric(path).complexity == "O(n log n) in kernels"
    assert load_metric(write_metric(tmp_path, "plain", "none",
                                    "SELECT run_id FROM kernels")).complexity is None
    path.write_text(header + "-- complexity: O(n)\nSELECT run_id FROM kernels\n")
    with pytest.raises(MetricError, match=r"sweep.sql:8: `-- complexity:` appears twice"):
        load_metric(path)


@pytest.mark.parametrize("params, body, message", [
    ("none", "SELECT 1 AS x;\nSELECT 2 AS y;", r"bad.sql:8: a metric is one statement, found 2"),
    ("none", "INSERT INTO store.kernels SELECT * FROM store.kernels", r"bad.sql:7: .*not INSERT"),
    ("none", "SELECT * FROM kernels\nUNION ALL\nSELECT * FROM read_csv('/etc/passwd')",
     r"bad.sql:9: reads table function read_csv\(\)"),
    ("none", "SELECT *\nFROM store.kernels", r"bad.sql:8: reads store.kernels"),
    ("none", "SELECT * FROM '/etc/passwd'", r"bad.sql:7: reads '/etc/passwd'"),
    ("none", "SELECT * FROM nowhere", r"bad.sql:7: reads 'nowhere', which is neither"),
    ("rank (int, optional)", "SELECT * FROM kernels\nWHERE rank = getvariable('rank')\n"
     "  AND run_id = getvariable('run')", r"bad.sql:9: getvariable\('run'\) reads a parameter"),
    ("rank (int, optional), run (text, optional)",
     "SELECT * FROM kernels WHERE rank = getvariable('rank')",
     r"bad.sql:5: declared parameter\(s\) run never read"),
    ("none", "ATTACH 'other.duckdb'", r"bad.sql:7: a metric is a read-only SELECT, not ATTACH"),
    ("none", "COPY kernels TO 'out.csv'", r"bad.sql:7: .*not COPY"),
    ("none", "PRAGMA version", r"bad.sql:7: .*not PRAGMA"),
    ("none", "SET threads = 1", r"bad.sql:7: .*not SET"),
    ("none", "INSTALL httpfs", r"bad.sql:7: .*not INSTALL"),
    ("none", "LOAD httpfs", r"bad.sql:7: .*not COMMAND"),
    ("none", "CALL pragma_version()", r"bad.sql:7: .*not COMMAND"),
    ("none", "CREATE VIEW v AS SELECT 1", r"bad.sql:7: .*not CREATE"),
    ("none", "SELECT *\nINTO copied\nFROM kernels", r"bad.sql:8: .*may not contain INTO"),
    ("none", "SELECT * FROM (", r"bad.sql:7: cannot parse the query"),
])
def test_bad_body_is_refused(tmp_path, params, body, message):
    path = write_metric(tmp_path, "bad", params, body)
    with pytest.raises(MetricError, match=message) as info:
        load_metric(path)
    assert str(info.value).startswith(str(path))


def test_ctes_and_public_views_are_accepted(tmp_path):
    path = write_metric(tmp_path, "ok", "run (text, optional)",
                        "WITH mine AS (SELECT * FROM kernels WHERE run_id = getvariable('run'))\n"
                        "SELECT m.name, duration_ns('1s') AS d\n"
                        "FROM mine m JOIN sources USING (file_id);",
                        uses="kernels, duration_ns, sources")
    metric = load_metric(path)
    assert metric.query.rstrip().endswith("USING (file_id)")


def test_find_metric_by_name_and_path():
    by_name = find_metric("gpu_trace")
    assert find_metric(str(by_name.path)) == by_name
    with pytest.raises(MetricError, match="unknown metric 'nope'"):
        find_metric("nope")


def test_metric_headers():
    summary = find_metric("gpu_kernel_summary")
    assert (summary.version, summary.unit, summary.grain) == (2, "ns", ("run_id", "rank", "name"))
    assert [(p.name, p.type, p.optional, p.default) for p in summary.params] == [
        ("run", "text", True, None), ("rank", "int", True, None),
        ("iteration_from", "int", True, None), ("iteration_to", "int", True, None),
        ("window", "text", True, None), ("start_ns", "int", True, None),
        ("end_ns", "int", True, None), ("top", "int", True, 0),
    ]
    assert [m.name for m in metrics.list_metrics()] == sorted(
        p.stem for p in (sql_dir() / "metrics").glob("*.sql"))


# --- the lock -------------------------------------------------------------------------------

def test_repository_lock_is_up_to_date():
    assert metrics.check_lock() == []


@pytest.fixture
def sql_copy(tmp_path):
    root = tmp_path / "sql"
    for folder in ("metrics", "lib", "views", "ingest"):  # ingest: fillers too
        shutil.copytree(sql_dir() / folder, root / folder)
    for script in [*sql_dir().glob("*.sql"), *sql_dir().glob("*.csv"),  # and the fillers
                   sql_dir() / "metrics.lock"]:
        shutil.copy(script, root / script.name)
    return root


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_lock_ignores_header_and_trailing_whitespace(sql_copy):
    path = sql_copy / "metrics" / "gpu_trace.sql"
    edit(path, "-- summary: Every", "-- summary: Each")
    edit(path, "g.correlation_id, g.name\n);\n", "g.correlation_id, g.name\n);   \n\n\n")
    assert metrics.check_lock(sql_root=sql_copy) == []


def test_lock_catches_a_change_without_a_version_bump(sql_copy):
    path = sql_copy / "metrics" / "gpu_kernel_summary.sql"
    edit(path, "ORDER BY run_id, rank, total_ns DESC, name;",
         "ORDER BY run_id, rank, total_ns DESC, name DESC;")
    problems = metrics.check_lock(sql_root=sql_copy)
    assert len(problems) == 1
    assert "gpu_kernel_summary v2 changed without raising its version" in problems[0]
    with pytest.raises(MetricError, match="will not overwrite the locked hashes of gpu_kernel_su"):
        metrics.update_lock(sql_root=sql_copy)

    edit(path, "-- version: 2", "-- version: 3")
    assert metrics.check_lock(sql_root=sql_copy) == [
        f"{path}: gpu_kernel_summary v3 is not in {sql_copy / 'metrics.lock'} - "
        "run tracewh metrics lock"
    ]
    assert metrics.update_lock(sql_root=sql_copy) == ["gpu_kernel_summary v3"]
    assert metrics.check_lock(sql_root=sql_copy) == []
    locked = metrics.read_lock(sql_copy / "metrics.lock")
    assert {("gpu_kernel_summary", 2), ("gpu_kernel_summary", 3)} <= set(locked)  # v2 stays


def test_a_locked_metric_runs_unparsed_and_any_other_is_checked(sql_copy, monkeypatch):
    """find_metric skips sqlglot for a catalogue query its lock entry holds (update_lock locks
    checked queries only); an edited query is checked before it runs."""
    parsed = []
    real = metrics._check_query
    monkeypatch.setattr(metrics, "_check_query", lambda path, *a: (parsed.append(path.stem),
                                                                    real(path, *a))[1])
    assert find_metric("gpu_trace", sql_root=sql_copy).name == "gpu_trace" and parsed == []
    path = sql_copy / "metrics" / "gpu_trace.sql"
    edit(path, "g.correlation_id, g.name\n);", "g.correlation_id, g.name\n); DROP TABLE x;")
    with pytest.raises(MetricError, match="a metric is one statement"):
        find_metric("gpu_trace", sql_root=sql_copy)
    assert parsed == ["gpu_trace"]


def test_the_terminator_is_cut_as_sqlglot_cuts_it():
    import sqlglot
    from sqlglot.tokens import TokenType

    def by_tokens(body):
        tokens = sqlglot.tokenize(body, read="duckdb")
        if tokens and tokens[-1].token_type == TokenType.SEMICOLON:
            return body[:tokens[-1].start] + body[tokens[-1].start + 1:]
        return body
    bodies = [m.body for m in metrics.list_metrics(check=False)] + [
        "SELECT 1;\n-- after\n\n", "SELECT 1 ; -- x;\n", "SELECT 1\n", "SELECT 1;  \n",
        "SELECT ';'", "SELECT 1 /* c; */", "SELECT 1;\n/* x */\n", "SELECT '--';\n"]
    for body in bodies:
        assert metrics._strip_terminator(body) == by_tokens(body), body[-40:]


# through training_steps (breakdown_diff and regressions through run_measures)
USES_STEPS = ["breakdown_diff", "host_breakdown", "iteration_time", "memory_by_phase", "nvtx_phases",
              "regressions", "scaling", "throughput"]


def test_a_changed_macro_fails_the_check_of_every_metric_that_reads_it(sql_copy):
    """Issue 24: the lock covers what a metric reads, through views and macros (the closure)."""
    edit(sql_copy / "lib" / "training_steps.sql", "WHERE step_pattern IS NULL",
         "WHERE step_pattern IS NULL AND iteration > 0")
    problems = metrics.check_lock(sql_root=sql_copy)
    assert sorted(p.split(": ")[1].split(" ")[0] for p in problems) == USES_STEPS
    assert all("a module it reads or a script making its rows (" in p and "training_steps" in p
               for p in problems)
    with pytest.raises(MetricError, match="will not overwrite .*breakdown_diff v3, host_breakdown v3, iteration_time v4, memory_by_phase v4, nvtx_phases"):
        metrics.update_lock(sql_root=sql_copy)
    assert not (sql_copy / "metrics.changes").exists()


def test_a_changed_view_two_modules_down_fails_the_check(sql_copy):
    # iterations reads iteration_number; training_steps reads iterations; USES_STEPS read it
    edit(sql_copy / "lib" / "iteration_number.sql", "[Ss]tep[ _#]?", "[Ss]tep[ _#]*")
    failing = {p.split(": ")[1].split(" ")[0] for p in metrics.check_lock(sql_root=sql_copy)}
    assert set(USES_STEPS) <= failing
    assert "gpu_kernel_summary" not in failing  # reads kernels only


def test_a_changed_ingest_script_fails_the_check_of_every_metric_reading_its_rows(sql_copy):
    """Issue 19: the shapes are stored at ingest by sql/op_shapes_add.sql (derive entry
    op_shapes), so the lock sees a change to how the stored rows are made."""
    edit(sql_copy / "op_shapes_add.sql", "AND o.args LIKE", "AND o.name LIKE 'aten::%' AND o.args LIKE")
    failing = sorted(p.split(": ")[1].split(" ")[0] for p in metrics.check_lock(sql_root=sql_copy))
    # op_summary: the launch link (launch_cpu_ops) reads op_shapes_recorded, which it fills
    assert failing == ["mfu", "op_efficiency", "op_summary", "roofline", "throughput"]


def _readers(*views):
    """The metrics whose `-- uses:` closure holds one of `views`."""
    modules = load_modules()
    return {m.name for m in metrics.list_metrics() if set(views) & set(closure(m.uses, modules))}


def test_an_update_in_a_derive_script_fails_the_check_of_every_metric_reading_the_column(sql_copy):
    """Issue 33, reproduction (a): gpu_op_timeline.sql fills gpu_ops.alone by UPDATE; making every
    op not alone changes 26 metrics (17 when the issue was written, before cuda_gpu_sum,
    comm_breakdown, straggler_cause, critical_path, what_if and the launch link's mfu,
    op_efficiency, roofline and throughput)' answers and must fail the check."""
    edit(sql_copy / "gpu_op_timeline.sql",
         "AND coalesce(lead(start_ns) OVER rank_order > end_ns, true) AS alone,",
         "AND false AS alone,")
    problems = metrics.check_lock(sql_root=sql_copy)
    failing = {p.split(": ")[1].split(" ")[0] for p in problems}
    # the kernels view shows no `alone`: its readers alone are not touched
    assert len(failing) == 26 and failing == _readers("gpu_ops")
    assert all("gpu_op_timeline.sql" in p for p in problems)


def test_a_changed_kernel_classification_fails_the_check_of_every_metric_reading_kinds(sql_copy):
    """Issue 33, reproduction (b): kernel_names_add.sql classes every kernel 'other'."""
    edit(sql_copy / "kernel_names_add.sql", "SELECT name, kernel_kind(name)", "SELECT name, 'other'")
    failing = {p.split(": ")[1].split(" ")[0] for p in metrics.check_lock(sql_root=sql_copy)}
    assert len(failing) == 28 and failing == _readers("gpu_ops", "kernels")


def test_changed_kind_patterns_fail_the_check_through_the_kinds_table(sql_copy):
    """sql/kernel_kinds.csv fills store.kernel_kinds (derive entry kernel_kinds), which
    kernel_kind() reads when kernel_names_add.sql classes the names."""
    path = sql_copy / "kernel_kinds.csv"
    path.write_text(path.read_text().replace("comm,", "other,", 1))
    failing = {p.split(": ")[1].split(" ")[0] for p in metrics.check_lock(sql_root=sql_copy)}
    assert failing == _readers("gpu_ops", "kernels")


def test_a_derive_script_writing_what_its_entry_does_not_name_is_a_problem(sql_copy):
    from tracewh.sqlmodules import module_problems

    edit(sql_copy / "gpu_op_timeline.sql", "UPDATE store.memset AS o SET alone = t.alone,",
         "UPDATE store.memset AS o SET alone = t.alone, launch_ns = NULL,")
    assert module_problems(sql_copy) == [
        f"{sql_copy / 'gpu_op_timeline.sql'}: writes memset.launch_ns, which derive entry "
        "gpu_op_timeline does not name in its fills (tracewh/store/derive.py)"]


def test_same_answers_relocks_with_a_dated_reason(sql_copy):
    edit(sql_copy / "lib" / "training_steps.sql", "FROM iterations\nWHERE step_pattern IS NULL",
         "FROM iterations\nWHERE NOT (step_pattern IS NOT NULL)")
    assert len(metrics.check_lock(sql_root=sql_copy)) == len(USES_STEPS)
    relocked = metrics.update_lock(sql_root=sql_copy, same_answers="  NOT (x IS NOT NULL)\n is x IS NULL ")
    versions = [f"{m} v{metrics.find_metric(m, sql_copy).version}" for m in USES_STEPS]
    assert relocked == [f"{m} locked again: NOT (x IS NOT NULL)\n is x IS NULL" for m in versions]
    assert metrics.check_lock(sql_root=sql_copy) == []
    log = (sql_copy / "metrics.changes").read_text().splitlines()
    today = datetime.now(timezone.utc).date().isoformat()
    assert log[-1] == f"{today}\t{', '.join(versions)}\tNOT (x IS NOT NULL) is x IS NULL"
    assert all(line.startswith("#") for line in log[:-1])
    with pytest.raises(MetricError, match="will not overwrite"):  # a blank reason is no reason
        edit(sql_copy / "lib" / "training_steps.sql", "NOT (step_pattern IS NOT NULL)",
             "step_pattern IS NULL")
        metrics.update_lock(sql_root=sql_copy, same_answers=" ")


def test_comments_and_spacing_of_a_module_do_not_count(sql_copy):
    path = sql_copy / "lib" / "training_steps.sql"
    edit(path, "-- training_steps(step_pattern):", "-- training_steps(step_pattern), reworded:")
    edit(path, "SELECT run_id, rank, iteration, start_ns, end_ns, is_first, is_last\n",
         "SELECT run_id,   rank, iteration,\n       start_ns, end_ns, is_first, is_last\n")
    assert metrics.check_lock(sql_root=sql_copy) == []


@pytest.mark.parametrize("folder, name, old, new, message", [
    ("metrics", "clock_skew.sql", "-- uses: clock_offsets, scope", "-- uses: clock_offsets, ranks, scope",
     r"clock_skew.sql:9: `-- uses:` does not match the SQL; declares unused ranks"),
    ("metrics", "clock_skew.sql", "-- uses: clock_offsets, scope", "-- uses: clocks, scope",
     r"clock_skew.sql:9: `-- uses:` names clocks, which no file"),
    ("metrics", "clock_skew.sql", "-- uses: clock_offsets, scope\n", "",
     r"clock_skew.sql:1: header lacks `-- uses:`"),
    ("lib", "training_steps.sql", "-- uses: iteration_number, iterations, nvtx_ranges",
     "-- uses: iterations, nvtx_ranges",
     r"training_steps.sql: `-- uses:` does not match the SQL; reads undeclared iteration_number"),
    ("metrics", "nccl_sum.sql", "-- uses: nvtx_ranges, summary_stats", "-- uses: summary_stats",
     r"nccl_sum.sql:9: `-- uses:` does not match the SQL; reads undeclared nvtx_ranges"),
    ("views", "kernels.sql", "-- uses: gpu_op_kind, gpu_op_name, kernel_short_name\n", "",
     r"kernels.sql: no `-- uses:` line; it reads gpu_op_kind, gpu_op_name, kernel_short_name"),
])
def test_uses_must_match_what_sqlglot_finds(sql_copy, folder, name, old, new, message):
    edit(sql_copy / folder / name, old, new)
    problems = metrics.check_lock(sql_root=sql_copy)
    assert any(re.search(message, p) for p in problems), problems


def test_views_install_after_what_they_declare():
    order = [m.name for m in install_order(load_modules())]
    for module in load_modules().values():
        assert all(order.index(used) < order.index(module.name) for used in module.uses), module
    assert module_problems() == []


def test_lock_file_is_sorted_and_written_from_scratch(sql_copy, tmp_path):
    lock = tmp_path / "new.lock"
    added = metrics.update_lock(lock_path=lock, sql_root=sql_copy)
    assert added == [f"{m.name} v{m.version}" for m in metrics.list_metrics(sql_copy)]
    entries = [line.split("\t") for line in lock.read_text().splitlines()
               if not line.startswith("#")]
    assert entries == sorted(entries, key=lambda e: (e[0], int(e[1])))
    # the repository's lock holds every released version; its current ones are these
    repository = metrics.read_lock(sql_copy / "metrics.lock")
    assert metrics.read_lock(lock).items() <= repository.items()
    assert (sql_copy / "metrics.lock").read_text().splitlines()[0] == lock.read_text().splitlines()[0]


# --- the plain DuckDB shell -----------------------------------------------------------------

# Parameters to try in the shell, per metric (every metric also runs with none).
SHELL_PARAMS = {
    "gpu_kernel_summary": [{"rank": "0", "iteration_from": "2"}, {"run": "r1", "top": "1"},
                           {"run": "r1", "window": "1s/2s"}],
    "cuda_gpu_kern_gb_sum": [{"run": "r1", "window": "1s/", "top": "1"}],
    "gpu_trace": [{"run": "r1", "window": "1s/2s"}, {"end_ns": str(O0 + S)}],
    "run_diff": [{"base": "r2", "test": "r1", "test_rank": "1", "level": "kernel",
                  "short_names": "true", "threshold": "0.5"}],
    "breakdown_diff": [{"base": "r2", "test": "r1", "top": "1", "kernel_wait_ns": "10"}],
    "regressions": [{"runs": "r1,r2", "threshold": "0.01", "include_first_last": "true"}],
}


def shell_literal(value):
    """A typed parameter value as SQL text: only the test pastes values, to drive the shell."""
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value).lower() if isinstance(value, bool) else str(value)


@pytest.mark.skipif(shutil.which("duckdb") is None, reason="the duckdb shell is not on PATH")
@pytest.mark.parametrize("metric", metrics.list_metrics(), ids=lambda m: m.name)
def test_metric_runs_unchanged_in_the_duckdb_shell(tmp_path, metric):
    db = tmp_path / "w.duckdb"
    build_warehouse(db).close()
    for params in [{}] + SHELL_PARAMS.get(metric.name, []):
        typed = metrics.bind_values(metric, params)
        sets = "".join(f'SET VARIABLE "{name}" = {shell_literal(typed[name])};\n'
                       for name in params)  # defaults are not set: the SQL must supply them
        done = subprocess.run(["duckdb", "-readonly", "-json", str(db), "-c", sets + metric.body],
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0 and not done.stderr, done.stderr
        shell_rows = json.loads(done.stdout or "[]")

        with tracewh.connect(db, read_only=True) as con:
            table = run_metric(con, metric, params)
        expected = [{k: v for k, v in r.items() if k not in ("metric", "version")}
                    for r in rows(table)]
        assert shell_rows == [{k: approx_float(v) for k, v in r.items()} for r in expected], params


def approx_float(value):
    return pytest.approx(value, rel=1e-12) if isinstance(value, float) else value


def test_the_cpu_op_tree_script_is_part_of_every_metric_reading_cpu_ops(sql_copy):
    """Issue 18: the cpu_ops tree is stored at ingest (sql/ingest/kineto/22_cpu_op_tree.sql), so a
    change to how it is made changes the lock of each metric that reads cpu_ops."""
    edit(sql_copy / "ingest" / "kineto" / "22_cpu_op_tree.sql", "greatest(end_ns - start_ns",
         "greatest(end_ns - start_ns + 0")
    failing = sorted(p.split(": ")[1].split(" ")[0] for p in metrics.check_lock(sql_root=sql_copy))
    assert failing == CPU_OPS_READERS


# the metrics that read the cpu_ops view: op_summary and run_diff directly, critical_path and
# what_if through sql/lib/dependency_graph.sql, mfu, op_efficiency, roofline and throughput
# through the launch link (launch_cpu_ops: the deepest op by depth) and op_kernels, the others
# through sql/lib/host_activity.sql (scaling and straggler_cause by way of gap_causes;
# comm_breakdown by way of collective_parts, for time_bins); memory_at_peak and memory_peaks
# read cpu_op_names, which holds no tree column
CPU_OPS_READERS = ["comm_breakdown", "critical_path", "host_breakdown", "idle_gaps", "mfu",
                   "op_efficiency", "op_summary", "roofline", "run_diff", "scaling",
                   "straggler_cause", "sync_stalls", "throughput", "what_if"]
