"""nccl_ops.kernel_ops / dur_share_ns: an nsys SendRecv kernel runs each Send and Recv of its NCCL
group, and every one of those rows has the kernel's full times; sums over nccl_ops count each
kernel once through dur_share_ns (migration 0009 counts the rows of warehouses made before)."""

from __future__ import annotations

import sqlite3

import pytest

import tracewh
from tracewh import warehouse
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import ingest_paths
from tracewh.kinds import load_user_patterns
from tracewh.metrics import find_metric, run_metric

from migration_fixtures import migrations_before_and_after

EXPORT = "nsys/nsys-ai/mfu_2gpu_before.sqlite"


def sendrecv_kernel_ns(path) -> dict[int, int]:
    """Per process: the SendRecv kernels' total time, read from the export itself."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return dict(con.execute("""
            SELECT (k.globalPid >> 24) & 16777215, sum(k."end" - k.start)
            FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName
            WHERE s.value = 'ncclDevKernel_SendRecv' GROUP BY 1""").fetchall())
    finally:
        con.close()


@pytest.fixture(scope="module")
def mfu(shared_data, tmp_path_factory):
    con = tracewh.connect(tmp_path_factory.mktemp("mfu") / "wh.duckdb")
    results = ingest_paths(con, [shared_data / EXPORT], run="mfu")
    assert [r.status for r in results] == ["ingested"], results[0].message
    yield con, sendrecv_kernel_ns(shared_data / EXPORT)
    con.close()


def test_sums_of_shares_count_each_kernel_once(mfu):
    con, kernel_ns = mfu
    got = con.execute("SELECT pid, sum(dur_share_ns), sum(dur_ns), "
                      "list_sort(list_distinct(list(kernel_ops))) FROM nccl_ops GROUP BY pid").fetchall()
    assert {pid: share for pid, share, _, _ in got} == pytest.approx(kernel_ns, abs=1e-6)
    # 32 grouped kernels per rank ran Send, Recv, Send, Recv; the first one of each rank was
    # launched before the capture and is one SendRecv row
    assert [ops for *_, ops in got] == [[1, 4], [1, 4]]
    plain = sum(total for _, _, total, _ in got)
    assert plain > 3.9 * sum(kernel_ns.values())  # what summing dur_ns gave


def test_metrics_that_sum_nccl_ops_time_count_each_kernel_once(mfu):
    con, kernel_ns = mfu
    counts = run_metric(con, find_metric("collective_counts"), {"run": "mfu"}).to_pylist()
    per_rank = [r["total_ns"] for r in counts if r["rank"] is not None]
    assert sum(per_rank) == pytest.approx(sum(kernel_ns.values()), abs=len(per_rank))
    traffic = run_metric(con, find_metric("traffic_distribution"), {"run": "mfu"}).to_pylist()
    assert sum(r["total_ns"] for r in traffic) == pytest.approx(sum(kernel_ns.values()),
                                                              abs=len(traffic))


def test_migration_counts_the_operations_of_rows_stored_before(shared_data, db_path, tmp_path,
                                                               monkeypatch):
    before, after = migrations_before_and_after(tmp_path, 9)
    real_install = warehouse.install_views

    def install_views(con, **options):
        # today's views and ingest read kernel_ops: stand one in, dropped before the upgrade
        con.execute("ALTER TABLE store.nccl_ops ADD COLUMN IF NOT EXISTS kernel_ops INTEGER")
        real_install(con, **options)

    with monkeypatch.context() as patch:
        patch.setattr(warehouse, "migrations_dir", lambda: before)
        patch.setattr(warehouse, "install_views", install_views)
        con = tracewh.connect(db_path)
        results = ingest_paths(con, [shared_data / EXPORT], run="mfu")
        assert [r.status for r in results] == ["ingested"], results[0].message
        con.execute("ALTER TABLE store.nccl_ops DROP COLUMN kernel_ops")
        con.close()
    monkeypatch.setattr(warehouse, "migrations_dir", lambda: after)
    con = tracewh.connect(db_path)
    got = con.execute("SELECT kernel_ops, count(*) FROM nccl_ops GROUP BY ALL ORDER BY 1").fetchall()
    con.close()
    assert got == [(1, 2), (4, 256)]


def merged(intervals):
    out = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


def minus(pieces, cut):
    """The parts of merged `pieces` outside merged `cut`."""
    out = []
    for start, end in pieces:
        for c_start, c_end in cut:
            if c_end <= start or c_start >= end:
                continue
            if c_start > start:
                out.append([start, c_start])
            start = max(start, c_end)
        if start < end:
            out.append([start, end])
    return out


def test_scaling_counts_communication_outside_nccl_ops_once(tmp_path, db_path):
    # The GEMMs of a generated 2-rank job taken as communication (a user kind pattern) are
    # communication no nccl_ops row covers; each SendRecv kernel is a Send and a Recv row.
    # scaling subtracted the exposed time of Send and of Recv, each counting the kernel.
    generate_job(tmp_path / "traces", JobSpec(world_size=2, iterations=2, layers=1, seed=3))
    con = tracewh.connect(db_path)
    assert {r.status for r in ingest_paths(con, [tmp_path / "traces"], run="job")} == {"ingested"}
    mine = tmp_path / "kinds.csv"
    mine.write_text("kind,pattern\ncomm,^sm90_xmma_gemm\n")
    load_user_patterns(con, mine)
    exposed_outside, window = 0, 0
    for rank in (0, 1):
        ops = con.execute("SELECT kind::VARCHAR, start_ns, end_ns FROM gpu_ops WHERE rank = ?",
                          [rank]).fetchall()
        nccl = con.execute("SELECT start_ns, end_ns FROM nccl_ops WHERE rank = ?", [rank]).fetchall()
        assert con.execute("SELECT min(kernel_ops) FROM nccl_ops WHERE collective = 'Send' AND rank = ?",
                           [rank]).fetchone()[0] == 2
        comm = merged((s, e) for kind, s, e in ops if kind == "comm")
        compute = merged((s, e) for kind, s, e in ops if kind == "compute")
        exposed_outside += sum(e - s for s, e in minus(minus(comm, compute), merged(nccl)))
        window += max(e for _, _, e in ops) - min(s for _, s, _ in ops)
    row = run_metric(con, find_metric("scaling"), {}).to_pylist()[0]
    con.close()
    assert row["bottleneck"] == "exposed communication outside nccl_ops"
    assert row["bottleneck_pct"] == pytest.approx(exposed_outside * 100 / window, rel=1e-12)
