"""nsys' own reports as metrics (issue 34): cuda_gpu_sum, cuda_gpu_kern_gb_sum and nccl_sum
equal NVIDIA's definitions recomputed here from the raw SQLite tables of every real export
(report scripts cuda_gpu_sum.py and cuda_gpu_kern_gb_sum.py; nccl_sum: NCCL's NVTX ranges);
gpu_kernel_summary's window keeps what gpu_trace lists for it; --units speaks nsys' words and
is honoured in files."""

from __future__ import annotations

import json
import shutil
import sqlite3
import statistics
from collections import defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric

# ENUM_CUDA_MEMCPY_OPER's labels, for the 2021 export that has no ENUM tables
COPY_LABELS = {0: "Unknown", 1: "Host-to-Device", 2: "Device-to-Host", 3: "Host-to-Array",
               4: "Array-to-Host", 5: "Array-to-Array", 6: "Array-to-Device",
               7: "Device-to-Array", 8: "Device-to-Device", 9: "Host-to-Host",
               10: "Peer-to-Peer"}


def real_exports(shared: Path) -> list[Path]:
    return sorted((shared / "nsys").rglob("*.sqlite"))


@pytest.fixture(scope="module")
def real(shared_data, tmp_path_factory):
    """Every nsys export of ../shared/data, each its own run (the run named by its path)."""
    con = tracewh.connect(tmp_path_factory.mktemp("reports") / "wh.duckdb")
    runs = {}
    for path in real_exports(shared_data):
        run = str(path.relative_to(shared_data / "nsys"))
        results = ingest_paths(con, [path], run=run, jobs=1)
        assert [r.status for r in results] == ["ingested"], results[0].message
        runs[run] = path
    yield con, runs
    con.close()


def raw(path: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = {t for (t,) in con.execute("SELECT name FROM sqlite_master")}
        if any(t not in tables for t in _tables_of(sql)):
            return []
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _tables_of(sql: str) -> list[str]:
    return [word for word in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                              "CUPTI_ACTIVITY_KIND_MEMSET", "NVTX_EVENTS", "ENUM_CUDA_MEMCPY_OPER")
            if word in sql]


def summary(groups: dict) -> dict:
    """nsys' columns of each group of durations: Total, Instances, Avg, Med, Min, Max, StdDev
    (sample), and Time (%) of the total of its rank (key[0])."""
    totals = defaultdict(int)
    for key, values in groups.items():
        totals[key[0]] += sum(values)
    return {key: dict(total_ns=sum(v), instances=len(v), avg_ns=statistics.mean(v),
                      med_ns=statistics.median(v), min_ns=min(v), max_ns=max(v),
                      stddev_ns=statistics.stdev(v) if len(v) > 1 else 0.0,
                      time_pct=sum(v) * 100 / totals[key[0]] if totals[key[0]] else None)
            for key, v in groups.items()}


def assert_same(got: dict, want: dict):
    assert set(got) == set(want)
    for key, row in want.items():
        for column, value in row.items():
            assert got[key][column] == pytest.approx(value, rel=1e-9, abs=1e-6), (key, column)


def pids(con, run: str) -> dict[int, int]:
    return dict(con.execute("SELECT pid, rank FROM ranks WHERE run_id = ?", [run]).fetchall())


def metric_rows(con, name: str, **params) -> list[dict]:
    return run_metric(con, find_metric(name), {k: str(v) for k, v in params.items()}).to_pylist()


PID = "(globalPid >> 24) & 16777215"


def test_cuda_gpu_sum_equals_nvidias_definition_on_every_real_export(real):
    con, runs = real
    checked = 0
    for run, path in runs.items():
        rank_of = pids(con, run)
        # cuda_gpu_sum.py: kernels by demangled name, memcpy as '[CUDA memcpy ' || label || ']',
        # memset as '[CUDA memset]'; end - start
        kernels = raw(path, f"SELECT {PID}, s.value, k.\"end\" - k.start FROM "
                            "CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName")
        copies = raw(path, f"SELECT {PID}, copyKind, \"end\" - start FROM CUPTI_ACTIVITY_KIND_MEMCPY")
        sets = raw(path, f"SELECT {PID}, \"end\" - start FROM CUPTI_ACTIVITY_KIND_MEMSET")
        groups = defaultdict(list)
        for pid, name, dur in kernels:
            groups[(rank_of[pid], "CUDA_KERNEL", name)].append(dur)
        for pid, kind, dur in copies:
            groups[(rank_of[pid], "MEMORY_OPER", f"[CUDA memcpy {COPY_LABELS[kind]}]")].append(dur)
        for pid, dur in sets:
            groups[(rank_of[pid], "MEMORY_OPER", "[CUDA memset]")].append(dur)
        got = {(r["rank"], r["category"], r["operation"]): r
               for r in metric_rows(con, "cuda_gpu_sum", run=run)}
        assert_same(got, summary(groups))
        checked += len(groups)
    assert checked > 100


def test_cuda_gpu_kern_gb_sum_equals_nvidias_definition_on_every_real_export(real):
    con, runs = real
    checked = 0
    for run, path in runs.items():
        rank_of = pids(con, run)
        kernels = raw(path, f"SELECT {PID}, s.value, gridX, gridY, gridZ, blockX, blockY, blockZ, "
                            "k.\"end\" - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                            "JOIN StringIds s ON s.id = k.demangledName")
        groups = defaultdict(list)
        for pid, name, *dims, dur in kernels:
            groups[(rank_of[pid], name, *dims)].append(dur)
        rows = metric_rows(con, "cuda_gpu_kern_gb_sum", run=run)
        got = {(r["rank"], r["name"], r["grid_x"], r["grid_y"], r["grid_z"], r["block_x"],
                r["block_y"], r["block_z"]): r for r in rows}
        assert_same(got, summary(groups))
        for r in rows:  # printed as nsys' printf('%4d %4d %4d')
            assert r["grid_xyz"] == "%4d %4d %4d" % (r["grid_x"], r["grid_y"], r["grid_z"])
            assert r["block_xyz"] == "%4d %4d %4d" % (r["block_x"], r["block_y"], r["block_z"])
        # nsys' order: total time descending, then instances, then name
        order = [(r["rank"], -r["total_ns"], r["instances"], r["name"]) for r in rows]
        assert order == sorted(order)
        checked += len(groups)
    assert checked > 100


def test_nccl_sum_equals_the_nccl_nvtx_ranges_of_every_real_export(real):
    con, runs = real
    checked = 0
    for run, path in runs.items():
        rank_of = pids(con, run)
        # NCCL's domain: named by its create event (eventType 75) in the process, or, when the
        # export was sliced after it, a non-default domain whose ranges are named nccl*
        domains = {(pid, d) for pid, d in raw(
            path, "SELECT (globalTid >> 24) & 16777215, domainId FROM NVTX_EVENTS "
                  "WHERE eventType = 75 AND text = 'NCCL'")}
        ranges = raw(path, "SELECT (e.globalTid >> 24) & 16777215, e.domainId, e.eventType, "
                           "coalesce(e.text, s.value), e.\"end\" - e.start FROM NVTX_EVENTS e "
                           "LEFT JOIN StringIds s ON s.id = e.textId "
                           "WHERE e.eventType IN (59, 60, 70, 71) AND e.\"end\" IS NOT NULL")
        groups = defaultdict(list)
        for pid, domain, kind, name, dur in ranges:
            nccl = (pid, domain) in domains or (domain != 0 and (name or "").startswith("nccl"))
            if nccl and pid in rank_of:
                style = "PushPop" if kind in (59, 70) else "StartEnd"
                groups[(rank_of[pid], name, style)].append(dur)
        got = {(r["rank"], r["name"], r["style"]): r for r in metric_rows(con, "nccl_sum", run=run)}
        assert_same(got, summary(groups))
        checked += sum(len(v) for v in groups.values())
    assert checked > 400  # mfu_2gpu_before: ncclSend, ncclRecv, ncclGroupStart/End, ...


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("gen")
    generate_job(out / "traces", JobSpec(world_size=2, iterations=4, layers=2, seed=5))
    con = tracewh.connect(out / "wh.duckdb")
    assert {r.status for r in ingest_paths(con, [out / "traces"], jobs=1)} == {"ingested"}
    con.execute("CHECKPOINT")
    shutil.copyfile(out / "wh.duckdb", out / "cli.duckdb")  # for the CLI: con holds the file
    yield con, out / "cli.duckdb"
    con.close()


def _window_sum(con, **params) -> dict:
    """gpu_trace's kernels in the window, summed per (rank, name) by hand."""
    groups = defaultdict(list)
    for r in metric_rows(con, "gpu_trace", **params):
        if r["op"] == "kernel":
            groups[(r["rank"], r["name"])].append(r["dur_ns"])
    return {key: (sum(v), len(v), min(v), max(v)) for key, v in groups.items()}


def _summary_of(con, **params) -> dict:
    return {(r["rank"], r["name"]): (r["total_ns"], r["instances"], r["min_ns"], r["max_ns"])
            for r in metric_rows(con, "gpu_kernel_summary", **params)}


@pytest.mark.parametrize("window", ["410ms/420ms", "425ms/", "/409ms500us", "415123456/415923456"])
def test_gpu_kernel_summary_window_is_gpu_traces_rows_summed(generated, window):
    con, _ = generated
    want = _window_sum(con, window=window)
    assert want  # the window holds kernels
    assert _summary_of(con, window=window) == want
    everything = _summary_of(con)
    assert sum(v[1] for v in want.values()) < sum(v[1] for v in everything.values())


def test_gpu_kernel_summary_window_on_the_real_exports(real):
    con, runs = real
    for run in runs:
        span = con.execute("SELECT min(k.start_ns - s.origin_ns), max(k.end_ns - s.origin_ns) "
                           "FROM kernels k JOIN sources s USING (file_id) WHERE k.run_id = ?",
                           [run]).fetchone()
        if span[0] is None:
            continue
        third = (span[1] - span[0]) // 3
        window = f"{span[0] + third}/{span[1] - third}"
        assert _summary_of(con, run=run, window=window) == _window_sum(con, run=run, window=window)
        # UTC bounds: the same kernels
        low, high = con.execute("SELECT min(start_ns), max(end_ns) FROM kernels WHERE run_id = ?",
                                [run]).fetchone()
        bounds = dict(start_ns=low + third, end_ns=high - third)
        assert _summary_of(con, run=run, **bounds) == _window_sum(con, run=run, **bounds)


@pytest.mark.parametrize("word,unit,scale", [("usec", "us", 1e3), ("msec", "ms", 1e6),
                                             ("sec", "s", 1e9), ("nsec", "ns", 1), ("us", "us", 1e3)])
def test_units_in_nsys_words_and_honoured_in_csv_and_json(generated, word, unit, scale):
    con, path = generated
    want = metric_rows(con, "gpu_trace", rank=0)
    runner = CliRunner()
    result = runner.invoke(app, ["query", "gpu_trace", "--db", str(path), "--param", "rank=0",
                                 "--units", word, "--format", "json"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g[f"dur_{unit}"] == pytest.approx(w["dur_ns"] / scale)
        assert g[f"start_rel_{unit}"] == pytest.approx(w["start_rel_ns"] / scale)
        assert g["start_ns"] == w["start_ns"]  # a UTC moment stays exact
    if unit != "ns":
        assert "start_ns, end_ns: UTC moments, kept in ns" in result.stderr
        assert "dur_ns" not in got[0]
    csv = runner.invoke(app, ["query", "gpu_kernel_summary", "--db", str(path), "--units", word,
                              "--format", "csv"])
    assert csv.exit_code == 0
    header = csv.stdout.splitlines()[0].split(",")
    assert f"total_{unit}" in header and f"stddev_{unit}" in header


def test_an_unknown_unit_is_refused_with_the_words_it_takes(generated):
    _, path = generated
    result = CliRunner().invoke(app, ["query", "gpu_trace", "--db", str(path), "--units", "minutes"])
    assert result.exit_code == 2
    assert "'minutes' is not a time unit: auto, ns, us, ms, s (or nsys' nsec, usec, msec, sec)" \
        in " ".join(result.output.split())
