"""The link layer: cpu_ops as a tree (depth, parent_id, self_ns) and gpu_op_launches (each GPU op's
launching call, innermost CPU op and innermost NVTX range / annotation at the launch).

Checked on a job made by the Kineto generator, whose truth names the External id of the op that
launched every kernel, and on a hand-written thread whose ops overlap without nesting (the rule
documented in sql/views/cpu_ops.sql), at ingest and through migration 0017. The innermost range is recomputed by brute force (the
shortest range of the launching thread holding the launch), not by a sweep.
"""

from __future__ import annotations

import duckdb
import pytest

import tracewh
from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job, write_memory_trace
from tracewh.ingest import ingest_paths


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    folder = tmp_path_factory.mktemp("link")
    truth = generate_kineto_job(folder / "traces", KinetoJobSpec(world_size=2, iterations=2, layers=2))
    con = tracewh.connect(folder / "wh.duckdb")
    results = ingest_paths(con, [folder / "traces"], run="job")
    assert {r.status for r in results} == {"ingested"}
    yield con, truth
    con.close()


def test_every_kernel_links_to_the_op_that_launched_it(job):
    con, truth = job
    linked = {(rank, corr): (ext, api) for rank, corr, ext, api in con.execute(
        "SELECT l.rank, l.correlation_id, o.external_id, l.api_name FROM gpu_op_launches l "
        "LEFT JOIN cpu_ops o ON o.op_id = l.cpu_op_id WHERE l.op = 'kernel'").fetchall()}
    expected = {(rank, k.correlation_id): k.external_id
                for rank, kernels in truth.kernels.items() for k in kernels}
    assert len(expected) > 50
    assert {key: ext for key, (ext, _) in linked.items()} == expected
    assert {api for _, api in linked.values()} >= {"cudaLaunchKernel", "cuLaunchKernelEx"}


def test_launch_columns_are_the_launching_call(job):
    con, _ = job
    bad = con.execute("""
        SELECT count(*) FROM gpu_op_launches l JOIN gpu_ops g
          ON g.file_id = l.file_id AND g.correlation_id = l.correlation_id AND g.start_ns = l.start_ns
        WHERE l.launch_ns IS DISTINCT FROM g.launch_ns OR l.launch_end_ns <= l.launch_ns""").fetchone()
    assert bad == (0,)
    assert con.execute("SELECT count(*) FROM gpu_op_launches").fetchone() == \
        con.execute("SELECT count(*) FROM gpu_ops").fetchone()


def test_innermost_range_at_launch_by_brute_force(job):
    con, _ = job
    ranges = con.execute("SELECT file_id, pid, tid, range_id, start_ns, coalesce(end_ns, 9e18), name "
                     "FROM nvtx_ranges WHERE kind = 'annotation'").fetchall()
    launches = con.execute("SELECT file_id, pid, launch_tid, launch_ns, range_id FROM gpu_op_launches "
                       "WHERE launch_ns IS NOT NULL").fetchall()
    named = 0
    for file_id, pid, tid, at, range_id in launches:
        holding = [r for r in ranges if r[:3] == (file_id, pid, tid) and r[4] <= at < r[5]]
        want = min(holding, key=lambda r: (r[5] - r[4], -r[4]))[3] if holding else None
        assert range_id == want
        named += want is not None
    assert named > 50


def test_cpu_op_tree_on_the_generated_job(job):
    con, _ = job
    # properly nested ops: the self times of a thread add up to its top-level ops' time, and
    # every parent holds its child
    per_thread = con.execute("SELECT file_id, tid, sum(self_ns), sum(dur_ns) FILTER (WHERE depth = 0) "
                         "FROM cpu_ops GROUP BY ALL").fetchall()
    assert per_thread and all(s == top for _, _, s, top in per_thread)
    assert con.execute("SELECT count(*) FROM cpu_ops c JOIN cpu_ops p ON p.op_id = c.parent_id "
                   "WHERE NOT (p.start_ns <= c.start_ns AND c.end_ns <= p.end_ns "
                   "AND p.depth = c.depth - 1 AND p.tid = c.tid)").fetchone() == (0,)
    assert con.execute("SELECT count(*) FILTER (WHERE depth > 0 AND parent_id IS NULL), max(depth) "
                   "FROM cpu_ops").fetchone()[0] == 0


# A thread whose ops overlap without nesting, ns after the trace's base time: D starts inside A
# and ends after it
OVERLAPPING = {"A": (0, 100), "B": (10, 40), "C": (20, 30), "D": (50, 120), "E": (60, 70),
               "F": (110, 115)}
OVERLAPPING_TREE = {
    "A": (0, None, 100 - 30 - 50),  # B inside; D only from 50 to A's end at 100
    "B": (1, "A", 30 - 10),
    "C": (2, "B", 10),
    "D": (1, "A", 70 - 10),         # starts inside A, ends after it: A's child
    "E": (2, "D", 10),
    "F": (1, "A", 5),               # after A ended: one op open (D), parent by depth: A
}
TREE = ("SELECT c.name, c.depth, p.name, c.self_ns FROM cpu_ops c "
        "LEFT JOIN cpu_ops p ON p.op_id = c.parent_id")


def _overlapping_trace(folder):
    # 1 us after the base time: an event at the base time itself reads as clamped by Kineto
    return write_memory_trace(folder / "overlap.pt.trace.json", [], [],
                              [(name, 1000 + s, 1000 + e) for name, (s, e) in OVERLAPPING.items()])


def test_ops_that_overlap_without_nesting(tmp_path):
    con = tracewh.connect(tmp_path / "wh.duckdb")
    assert [r.status for r in ingest_paths(con, [_overlapping_trace(tmp_path)], run="r")] == ["ingested"]
    got = {name: (depth, parent, self_ns) for name, depth, parent, self_ns in con.execute(TREE).fetchall()}
    assert got == OVERLAPPING_TREE
    con.close()


def test_migration_17_builds_the_tree_of_ops_stored_before_it(tmp_path, job):
    """Ops stored before 0017 have no tree columns: 0017 gives them the tree ingest gives."""
    _, truth = job
    db_path = tmp_path / "wh.duckdb"
    con = tracewh.connect(db_path)
    for paths, run in (([_overlapping_trace(tmp_path)], "overlap"), (truth.files, "job")):
        assert {r.status for r in ingest_paths(con, paths, run=run)} == {"ingested"}
    expected = con.execute("SELECT op_id, depth, parent_id, self_ns FROM cpu_ops ORDER BY op_id").fetchall()
    con.close()
    with duckdb.connect(str(db_path)) as raw:
        for column in ("depth", "parent_id", "self_ns"):
            raw.execute(f"ALTER TABLE store.cpu_ops DROP COLUMN {column}")
        raw.execute("DELETE FROM store.schema_migrations WHERE version = 17")
    con = tracewh.connect(db_path)
    assert con.execute("SELECT count(*) FROM store.schema_migrations WHERE version = 17").fetchone() == (1,)
    assert con.execute("SELECT op_id, depth, parent_id, self_ns FROM cpu_ops ORDER BY op_id").fetchall() \
        == expected
    got = {name: (depth, parent, self_ns) for name, depth, parent, self_ns in con.execute(
        TREE + " WHERE c.run_id = 'overlap'").fetchall()}
    assert got == OVERLAPPING_TREE
    con.close()
