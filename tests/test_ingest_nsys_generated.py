"""nsys ingest and the first metrics on generated exports whose true numbers are known."""

from __future__ import annotations

import pytest

import tracewh
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric


@pytest.fixture(scope="module", params=[1, 2], ids=["file-per-rank", "two-ranks-per-file"])
def job(request, tmp_path_factory):
    """A 4-rank job, written one report per rank or two processes per report."""
    out = tmp_path_factory.mktemp("job")
    truth = generate_job(out / "traces", JobSpec(world_size=4, ranks_per_file=request.param,
                                                 iterations=4, layers=3, seed=7))
    con = tracewh.connect(out / "wh.duckdb")
    results = ingest_paths(con, [out / "traces"])
    assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    yield con, truth
    con.close()


def test_ranks_and_their_sources(job):
    con, truth = job
    got = con.execute("SELECT rank, pid, rank_source FROM ranks ORDER BY rank").fetchall()
    expected_source = "filename" if truth.spec.ranks_per_file == 1 else "process-order"
    assert got == [(r, truth.rank_pid[r], expected_source) for r in range(4)]


def test_every_row_arrives_with_its_rank(job):
    con, truth = job
    for rank in range(4):
        counts = con.execute(
            "SELECT (SELECT count(*) FROM kernels WHERE rank = $r),"
            " (SELECT count(*) FROM memcpy WHERE rank = $r),"
            " (SELECT count(*) FROM memset WHERE rank = $r),"
            " (SELECT count(*) FROM cuda_api WHERE rank = $r),"
            " (SELECT count(*) FROM nvtx_ranges WHERE rank = $r)", {"r": rank}).fetchall()[0]
        assert counts == (len(truth.kernels[rank]), len(truth.memcpy[rank]), truth.memset[rank],
                          truth.runtime_calls[rank], truth.nvtx_ranges[rank])


def test_kernels_in_utc_with_iteration_of_their_launch(job):
    con, truth = job
    for rank in range(4):
        got = con.execute("SELECT start_ns, end_ns, name, stream_id, correlation_id, iteration, kind "
                          "FROM kernels WHERE rank = ? ORDER BY start_ns, stream_id", [rank]).fetchall()
        expected = sorted((k.start_ns, k.end_ns, k.name, k.stream_id, k.correlation_id,
                           k.iteration, k.kind) for k in truth.kernels[rank])
        assert got == expected


def test_iterations(job):
    con, truth = job
    for rank in range(4):
        got = con.execute("SELECT iteration, start_ns, end_ns, is_first, is_last FROM iterations "
                          "WHERE rank = ? ORDER BY iteration", [rank]).fetchall()
        steps = truth.iterations[rank]
        assert got == [(n, s, e, i == 0, i == len(steps) - 1) for i, (n, s, e) in enumerate(steps)]


def test_nccl_ops_named_from_nvtx(job):
    con, truth = job
    for rank in range(4):
        got = con.execute("SELECT collective, start_ns, end_ns, iteration, collective_source "
                          "FROM nccl_ops WHERE rank = ? ORDER BY start_ns, collective", [rank]).fetchall()
        expected = sorted((op.collective, op.start_ns, op.end_ns, op.iteration, "nvtx")
                          for op in truth.nccl_ops[rank])
        assert got == sorted(expected, key=lambda r: (r[1], r[0]))


def test_op_keys_match_across_ranks(job):
    con, _ = job
    keys = con.execute("SELECT op_key, count(DISTINCT rank) FROM nccl_ops WHERE collective = 'AllReduce' "
                       "GROUP BY op_key").fetchall()
    assert keys and all(n == 4 for _, n in keys)


@pytest.mark.parametrize("rank", [None, 0, 3])
def test_gpu_kernel_summary_equals_truth(job, rank):
    con, truth = job
    params = {} if rank is None else {"rank": str(rank)}
    result = run_metric(con, find_metric("gpu_kernel_summary"), params).to_pylist()
    ranks = range(4) if rank is None else [rank]
    for r in ranks:
        expected = truth.kernel_summary(r)
        got = {row["name"]: row for row in result if row["rank"] == r}
        assert set(got) == set(expected)
        total = sum(s["total_ns"] for s in expected.values())
        for name, stats in expected.items():
            row = got[name]
            assert row["total_ns"] == stats["total_ns"]
            assert row["instances"] == stats["instances"]
            assert row["min_ns"] == stats["min_ns"] and row["max_ns"] == stats["max_ns"]
            assert row["avg_ns"] == pytest.approx(stats["avg_ns"], rel=1e-12)
            assert row["med_ns"] == pytest.approx(stats["median_ns"], rel=1e-12)
            assert row["stddev_ns"] == pytest.approx(stats["stddev_ns"], rel=1e-9)
            assert row["time_pct"] == pytest.approx(stats["total_ns"] * 100 / total, rel=1e-12)


def test_gpu_trace_window_relative_to_each_source(job):
    con, truth = job
    rank = 1
    path = truth.rank_file[rank]
    origin = truth.utc_epoch_ns[path]
    first = min(k.start_ns for k in truth.kernels[rank]) - origin
    lo, hi = first + 5_000_000, first + 15_000_000  # a window 5 ms to 15 ms after the first kernel
    window = f"{lo // 1_000_000}ms{lo % 1_000_000}ns/{hi / 1e9:.9f}s"  # both spellings nsys takes
    result = run_metric(con, find_metric("gpu_trace"),
                        {"rank": str(rank), "window": window}).to_pylist()
    got = sorted((r["start_ns"], r["end_ns"]) for r in result if r["op"] == "kernel")
    expected = sorted((k.start_ns, k.end_ns) for k in truth.kernels[rank]
                      if k.start_ns <= origin + hi and k.end_ns >= origin + lo)
    assert got == expected and len(expected) > 10


def test_nvtx_nesting_marks_enclose_nothing(job):
    con, _ = job
    # phases sit directly inside their ProfilerStep; marks are points that contain nothing
    rows = con.execute("""
        SELECT c.name, c.depth, p.name FROM nvtx_ranges c
        LEFT JOIN nvtx_ranges p ON p.file_id = c.file_id AND p.range_id = c.parent_id
        WHERE c.rank = 0 AND c.domain IS NULL""").fetchall()
    by_name = {}
    for name, depth, parent in rows:
        by_name.setdefault(name.split("#")[0], set()).add((depth, parent.split("#")[0] if parent else None))
    assert by_name["ProfilerStep"] == {(0, None)}
    assert by_name["forward"] == by_name["backward"] == by_name["optimizer"] == {(1, "ProfilerStep")}
    assert not con.execute("SELECT count(*) FROM nvtx_ranges c JOIN nvtx_ranges p ON p.file_id = c.file_id "
                           "AND p.range_id = c.parent_id WHERE p.kind = 'mark'").fetchall()[0][0]
