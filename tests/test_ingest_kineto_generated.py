"""Kineto ingest on generated multi-rank traces whose true numbers are known."""

from __future__ import annotations

import json

import pytest

import tracewh
from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric

SKEW = {1: 2_500_000, 3: -1_000_000}  # ns added to ranks 1 and 3's clocks


@pytest.fixture(scope="module", params=[False, True], ids=["json", "json.gz"])
def job(request, tmp_path_factory):
    out = tmp_path_factory.mktemp("kjob")
    truth = generate_kineto_job(out / "traces", KinetoJobSpec(
        world_size=4, iterations=3, layers=2, seed=3, gzip=request.param, clock_skew_ns=SKEW))
    con = tracewh.connect(out / "wh.duckdb")
    results = ingest_paths(con, [out / "traces"], jobs=2)
    assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    yield con, truth
    con.close()


def test_ranks_from_distributed_info(job):
    con, truth = job
    got = con.execute("SELECT rank, pid, device_id, world_size, backend, rank_source FROM ranks "
                      "ORDER BY rank").fetchall()
    assert got == [(r, truth.pids[r], truth.devices[r], 4, "nccl", "distributedInfo") for r in range(4)]


def test_run_metadata_holds_the_job_facts_not_one_ranks(job):
    con, _ = job
    info = con.execute("SELECT metadata->'$.distributedInfo' FROM runs").fetchall()
    assert len(info) == 1
    got = json.loads(info[0][0])
    assert got["world_size"] == 4 and got["backend"] == "nccl"
    assert "rank" not in got  # each file's own rank is in ranks and sources.metadata


def test_counts_per_rank(job):
    con, truth = job
    for r in range(4):
        got = con.execute(
            "SELECT (SELECT count(*) FROM kernels WHERE rank = $r), (SELECT count(*) FROM memcpy WHERE rank = $r),"
            " (SELECT count(*) FROM memset WHERE rank = $r), (SELECT count(*) FROM cuda_api WHERE rank = $r),"
            " (SELECT count(*) FROM cpu_ops WHERE rank = $r),"
            " (SELECT count(*) FROM nvtx_ranges WHERE rank = $r AND kind = 'annotation'),"
            " (SELECT count(*) FROM nvtx_ranges WHERE rank = $r AND kind = 'gpu_annotation')",
            {"r": r}).fetchall()[0]
        assert got == (len(truth.kernels[r]), len(truth.memcpy[r]), len(truth.memset[r]),
                       truth.runtime_calls[r] + truth.driver_calls[r], truth.cpu_ops[r],
                       len(truth.user_annotations[r]), len(truth.gpu_annotations[r]))


def test_kernels_exact_in_utc_with_their_iteration(job):
    con, truth = job
    for r in range(4):
        got = con.execute("SELECT start_ns, end_ns, name, stream_id, correlation_id, external_id, iteration, "
                          "kind FROM kernels WHERE rank = ? ORDER BY ALL", [r]).fetchall()
        expected = sorted((k.start_ns, k.end_ns, k.name, k.stream_id, k.correlation_id, k.external_id,
                           k.iteration, k.kind) for k in truth.kernels[r])
        assert got == expected


def test_iterations(job):
    con, truth = job
    for r in range(4):
        got = con.execute("SELECT iteration, start_ns, end_ns FROM iterations WHERE rank = ? ORDER BY 1",
                          [r]).fetchall()
        assert got == [tuple(step) for step in truth.iterations[r]]


def test_nccl_ops_carry_the_collective_args(job):
    con, truth = job
    for r in range(4):
        got = con.execute(
            "SELECT start_ns, collective, dtype, in_nelems, out_nelems, in_bytes, out_bytes, full_bytes, "
            "group_size, pg_name, pg_desc, pg_ranks, seq, comm_id, iteration, collective_source "
            "FROM nccl_ops WHERE rank = ? ORDER BY start_ns", [r]).fetchall()
        expected = sorted((op.start_ns, op.collective, op.dtype, op.in_nelems, op.out_nelems, op.in_bytes,
                           op.out_bytes, op.bytes, op.group_size, op.pg_name, op.pg_desc,
                           "[" + ", ".join(map(str, op.pg_ranks)) + "]", op.seq, str(op.comms_id),
                           op.iteration, "args") for op in truth.nccl_ops[r])
        assert got == expected


def test_op_key_is_process_group_and_seq(job):
    con, truth = job
    # every (process group, Seq) of the truth is one op_key, held by exactly its group's members
    expected = {}
    for r, ops in truth.nccl_ops.items():
        for op in ops:
            expected.setdefault((op.pg_name, op.pg_ranks, op.seq), set()).add(r)
    got = {}
    for key, rank in con.execute("SELECT op_key, rank FROM nccl_ops").fetchall():
        got.setdefault(key, set()).add(rank)
    assert sorted(map(sorted, got.values())) == sorted(map(sorted, expected.values()))
    assert len(got) == len(expected)


def test_gpu_kernel_summary_equals_truth(job):
    con, truth = job
    rows = run_metric(con, find_metric("gpu_kernel_summary"), {"rank": "2"}).to_pylist()
    expected = truth.kernel_summary(2)
    assert {r["name"]: (r["total_ns"], r["instances"], r["min_ns"], r["max_ns"]) for r in rows} == {
        name: (s["total_ns"], s["instances"], s["min_ns"], s["max_ns"]) for name, s in expected.items()}
