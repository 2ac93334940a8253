"""One generated job seen by both profilers (issue 34): an nsys export with NCCL payload blobs and
the Kineto traces of the same GPU work (tracewh.generate.kineto_twin) give the same
collective_bandwidth, nccl_ops sizes and clock offsets. Where the profilers see the job
differently, the test says how: Kineto records a grouped NCCL call as one "coalesced" operation
without sizes, nsys' payloads name each operation of the group."""

from __future__ import annotations

from collections import Counter

import pytest

import tracewh
from tracewh.generate.kineto_twin import write_kineto_twin
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric

SPEC = JobSpec(world_size=4, ranks_per_file=2, iterations=3, layers=2, seed=23, nccl_payloads=True)
GROUPED = {"Send", "Recv", "AllGather", "ReduceScatter"}  # the job's two NCCL groups
SAME = ("collective", "iteration", "ranks", "n", "full_bytes", "t_ns", "max_dur_ns", "start_ns",
        "end_ns", "algbw_gbps", "bus_factor", "busbw_gbps", "note")


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    out = tmp_path_factory.mktemp("same_job")
    truth = generate_job(out / "nsys", SPEC)
    write_kineto_twin(out / "kineto", truth)
    con = tracewh.connect(out / "wh.duckdb")
    for run in ("nsys", "kineto"):
        results = ingest_paths(con, [out / run], run=run, jobs=1)
        assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    yield con, truth
    con.close()


def bandwidth(con, run: str) -> list[dict]:
    return run_metric(con, find_metric("collective_bandwidth"), {"run": run}).to_pylist()


def test_collective_bandwidth_is_the_same_from_both_profilers(job):
    con, truth = job
    nsys = {(r["collective"], r["start_ns"]): r for r in bandwidth(con, "nsys")
            if r["collective"] not in GROUPED}
    kineto = {(r["collective"], r["start_ns"]): r for r in bandwidth(con, "kineto")
              if r["collective"] not in ("SendRecv", "Unknown")}
    assert set(nsys) == set(kineto)
    for key, row in nsys.items():
        assert {c: row[c] for c in SAME} == {c: kineto[key][c] for c in SAME}, key
    # every ungrouped collective of the truth, on all 4 ranks, with its size and bandwidth
    kinds = Counter(op.collective for op in truth.nccl_ops[0] if op.collective not in GROUPED)
    assert Counter(c for c, _ in nsys) == kinds == {
        "AllReduce": 3, "Broadcast": 3, "Reduce": 3, "AllToAll": 3}
    assert all(r["ranks"] == 4 and r["full_bytes"] > 0 and r["busbw_gbps"] > 0 for r in nsys.values())
    # the process group is the communicator: Kineto's "Comms Id" is nsys' commHash
    comm_of = dict(con.execute("SELECT DISTINCT pg_name, comm_id FROM nccl_ops WHERE run_id = 'kineto'").fetchall())
    for key, row in nsys.items():
        assert row["pg_name"] == "0x%016x" % int(comm_of[kineto[key]["pg_name"]])


def test_grouped_calls_one_coalesced_operation_in_kineto(job):
    """A grouped kernel: nsys lists each operation with its size, Kineto one operation with
    none; the kernel's times, hence t and the aligned start and end, are the same."""
    con, _ = job
    nsys = {}
    for r in bandwidth(con, "nsys"):
        if r["collective"] in GROUPED:
            nsys.setdefault((r["start_ns"], r["t_ns"], r["end_ns"]), []).append(r)
    kineto = {(r["start_ns"], r["t_ns"], r["end_ns"]): r for r in bandwidth(con, "kineto")
              if r["collective"] in ("SendRecv", "Unknown")}
    assert set(nsys) == set(kineto) and len(kineto) == 3 * (4 + 1)  # per step 4 SendRecv, 1 Generic
    for key, rows in nsys.items():
        kinds = sorted(r["collective"] for r in rows)
        assert kinds in (["Recv", "Send"], ["AllGather", "ReduceScatter"])
        assert all(r["full_bytes"] > 0 for r in rows)
        assert kineto[key]["collective"] == ("SendRecv" if kinds == ["Recv", "Send"] else "Unknown")
        assert kineto[key]["full_bytes"] == 0  # "coalesced", 0 elements: what PyTorch records


def test_nccl_ops_sizes_and_keys_agree(job):
    con, _ = job
    sql = ("SELECT rank, start_ns, collective, in_bytes, out_bytes, full_bytes, group_size, seq, "
           "{comm} FROM nccl_ops WHERE run_id = ? AND kernel_ops = 1 AND collective NOT IN "
           "('SendRecv', 'Unknown')")
    nsys = {r[:3]: r[3:] for r in con.execute(sql.format(comm="comm_id"), ["nsys"]).fetchall()}
    kineto = {r[:3]: (*r[3:8], "0x%016x" % int(r[8]))
              for r in con.execute(sql.format(comm="comm_id"), ["kineto"]).fetchall()}
    assert nsys == kineto and len(nsys) == 4 * 4 * 3
    # Kineto's element counts are nsys' bytes / 4 (Float)
    assert con.execute("SELECT count(*) FROM nccl_ops WHERE run_id = 'kineto' AND dtype = 'Float' "
                       "AND in_bytes <> in_nelems * 4").fetchone() == (0,)


def test_clock_offsets_count_a_grouped_kernel_once(job):
    """Both runs estimate the same offset for the second host: nsys' AllGather + ReduceScatter
    kernel is one observation of the clocks, as Kineto's one coalesced row is."""
    con, truth = job
    rows = con.execute("SELECT run_id, rank, offset_ns, matched_ops, host_matched, mad_ns "
                       "FROM clock_offsets ORDER BY run_id, rank").fetchall()
    by_run = {run: [r[1:] for r in rows if r[0] == run] for run in ("nsys", "kineto")}
    assert by_run["nsys"] == by_run["kineto"]
    # collective kernels per rank: AllReduce, Broadcast, Generic, Reduce, AllToAll per step
    assert [r[2] for r in by_run["nsys"]] == [5 * 3] * 4
    assert by_run["nsys"][2][1] != 0  # node1's clock is estimated, not the reference
