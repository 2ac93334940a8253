"""comm_breakdown (issue 36): each collective on each rank cut into launch, wait for the last
rank and transfer. On the real DLRM (8 ranks) and HTA trace_filter (2 ranks) Kineto traces the
waits are collective_waits' and three DLRM collectives are counted by hand from the raw JSON;
the generated job's parts add up to each collective's duration and the exposed parts are
recomputed from the generator's own kernels."""

from __future__ import annotations

import json
import statistics
from decimal import Decimal
from collections import defaultdict

import pytest

import tracewh
from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric

DLRM = ("kineto", "param", "dlrm_kineto")
TRACE_FILTER = ("kineto", "hta", "trace_filter")


def breakdown(con, **params):
    return run_metric(con, find_metric("comm_breakdown"), params).to_pylist()


@pytest.fixture(scope="module")
def real(shared_data, tmp_path_factory):
    con = tracewh.connect(tmp_path_factory.mktemp("comm_real") / "w.duckdb")
    results = ingest_paths(con, [shared_data.joinpath(*DLRM), shared_data.joinpath(*TRACE_FILTER)],
                           jobs=1)
    assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    yield con
    con.close()


@pytest.mark.parametrize("run", ["dlrm_kineto", "trace_filter"])
def test_per_rank_waits_are_collective_waits(real, run):
    want = dict(real.execute("SELECT rank, sum(wait_ns) FROM collective_waits WHERE run_id = ? "
                             "GROUP BY rank", [run]).fetchall())
    got = defaultdict(int)
    for r in breakdown(real, run=run):
        got[r["rank"]] += r["wait_ns"]
    assert dict(got) == want and len(want) == (8 if run == "dlrm_kineto" else 2)
    assert all(v > 0 for v in want.values())


def test_every_part_adds_up_to_the_duration(real):
    rows = breakdown(real, per_op=True)
    assert len(rows) == 64 + 20
    for r in rows:
        assert r["wait_ns"] + r["transfer_ns"] + (r["launch_ns"] or 0) == r["duration_ns"]
        assert r["launch_exposed_ns"] <= r["launch_ns"] and r["wait_exposed_ns"] <= r["wait_ns"]
    # trace_filter: 2 ranks of a 128-rank job, on two hosts whose offset is estimated from 10
    # collectives: some kernels end before the other rank "arrives" on the aligned clock
    early = [r for r in rows if r["transfer_ns"] < 0]
    assert early and {r["run_id"] for r in early} == {"trace_filter"}
    assert all(r["ends_early"] == 1 for r in early)


def raw_dlrm(folder):
    """From the JSON alone: per rank, the n-th AllReduce / AllToAll (SendRecv) kernel's
    (launch call start, kernel start, kernel end) in ns, and each kind's count."""
    per_rank = {}
    for path in sorted(folder.glob("*.json")):
        trace = json.loads(path.read_text(), parse_float=Decimal)  # 16-digit µs: exact
        rank = trace["distributedInfo"]["rank"]
        events = trace["traceEvents"]
        calls = {e["args"]["correlation"]: int(e["ts"] * 1000) for e in events
                 if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
        kernels = sorted((e["ts"], e["ts"] + e["dur"], e["name"], e["args"]["correlation"])
                         for e in events if e.get("cat") == "kernel" and e["name"].startswith("ncclKernel"))
        seen = defaultdict(int)
        ops = {}
        for start, end, name, corr in kernels:
            kind = "AllReduce" if "AllReduce" in name else "AllToAll"
            seen[kind] += 1
            ops[f"{kind}:{seen[kind]}"] = (calls[corr], int(start * 1000), int(end * 1000))
        per_rank[rank] = ops
    return per_rank


def test_three_dlrm_collectives_counted_by_hand(real, shared_data):
    per_rank = raw_dlrm(shared_data.joinpath(*DLRM))
    assert sorted(per_rank) == list(range(8)) and len(per_rank[0]) == 8
    # each rank's clock offset, as clock_offsets estimates it: the median over the collectives of
    # (its end - rank 0's end); ranks with no known host are each their own clock
    offset = {r: statistics.median(ops[k][2] - per_rank[0][k][2] for k in ops)
              for r, ops in per_rank.items()}
    assert offset == dict(real.execute("SELECT rank, offset_ns FROM clock_offsets "
                                       "WHERE run_id = 'dlrm_kineto'").fetchall())
    got = {(r["op_key"], r["rank"]): r for r in breakdown(real, run="dlrm_kineto", per_op=True)}
    for key in ("AllToAll:1", "AllReduce:1", "AllReduce:3"):
        arrivals = {r: ops[key][1] - int(offset[r]) for r, ops in per_rank.items()}  # whole ns
        last = max(arrivals.values())
        for rank, ops in per_rank.items():
            call, start, end = ops[key]
            row = got[key, rank]
            wait = last - arrivals[rank]
            assert (row["launch_ns"], row["wait_ns"], row["transfer_ns"]) == (
                start - call, wait, end - start - wait), (key, rank)
        assert sum(got[key, r]["wait_ns"] == 0 for r in per_rank) >= 1  # the last rank waits 0
    # AllToAll:1: rank 1 arrived 7.5 ms before the last rank (its kernel ran 7.6 ms)
    assert got["AllToAll:1", 1]["wait_ns"] > 7_000_000


# --- the generator's truth --------------------------------------------------------------------

@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("comm_gen")
    truth = generate_kineto_job(folder / "job", KinetoJobSpec(world_size=4, iterations=3, layers=4,
                                                              seed=5))
    con = tracewh.connect(folder / "w.duckdb")
    ingest_paths(con, [folder / "job"], jobs=1)
    yield con, truth
    con.close()


def covered(intervals, start, end):
    """|[start, end] n U intervals|, by walking the merged intervals."""
    total, reach = 0, start
    for s, e in sorted(intervals):
        s, e = max(s, reach), min(e, end)
        if e > s:
            total += e - s
            reach = e
    return total


def test_generated_parts_equal_the_generators_kernels(generated):
    con, truth = generated
    rows = {(r["op_key"], r["rank"]): r for r in breakdown(con, per_op=True)}
    # the generator's collectives matched across ranks by (group, seq)
    matched = defaultdict(dict)
    for rank, ops in truth.nccl_ops.items():
        for op in ops:
            matched[op.pg_name, op.seq, op.collective][rank] = op
    assert len(rows) == sum(len(m) for m in matched.values()) == 4 * 3 + 4 * 3
    keys = {}
    for (op_key, rank), r in rows.items():
        keys.setdefault(op_key, set()).add(rank)
    for (pg, seq, collective), members in matched.items():
        aligned = {r: op.start_ns for r, op in members.items()}  # one host, one clock
        last = max(aligned.values())
        compute = {r: [(k.start_ns, k.end_ns) for k in truth.kernels[r] if k.kind == "compute"]
                   for r in members}
        found = [k for k, ranks in keys.items() if ranks == set(members)
                 and rows[k, min(members)]["collective"] == collective
                 and rows[k, min(members)]["iteration"] == next(iter(members.values())).iteration
                 and rows[k, min(members)]["process_group"] == pg]
        assert len(found) == 1, (pg, seq, collective)
        for rank, op in members.items():
            row = rows[found[0], rank]
            wait = last - aligned[rank]
            assert (row["wait_ns"], row["transfer_ns"]) == (wait, op.end_ns - op.start_ns - wait)
            assert row["wait_ns"] + row["transfer_ns"] + row["launch_ns"] == row["duration_ns"]
            assert row["wait_exposed_ns"] == wait - covered(compute[rank], op.start_ns, op.start_ns + wait)
            assert row["transfer_exposed_ns"] == (op.end_ns - op.start_ns - wait) - covered(
                compute[rank], op.start_ns + wait, op.end_ns)
    # summed per group and rank: the same parts, the steps that launched them
    summed = breakdown(con)
    assert {(r["process_group"], r["collective"]) for r in summed} == {
        ("0", "AllReduce"), ("1", "AllGather"), ("2", "AllGather")}
    for s in summed:
        mine = [r for r in rows.values() if (r["process_group"], r["collective"], r["rank"])
                == (s["process_group"], s["collective"], s["rank"])]
        assert s["collectives"] == len(mine) == 3
        for part in ("duration_ns", "launch_ns", "wait_ns", "transfer_ns", "wait_exposed_ns"):
            assert s[part] == sum(r[part] for r in mine)
        steps = {n: e - b for n, b, e in truth.iterations[s["rank"]]}
        assert s["step_ns"] == sum(steps.values())
        assert s["wait_step_pct"] == pytest.approx(s["wait_ns"] * 100 / s["step_ns"])
        assert s["blocking"] is None  # without sync_stalls the trace has no cuda_sync events


def test_blocking_collectives_are_those_compute_waited_for(tmp_path):
    # comm_stream_waits: the optimizer's stream waits on an event recorded after each AllReduce;
    # sync_stalls: the NCCL stream waits on the compute stream before every collective (that
    # event follows compute work, not a collective: blocking nothing)
    generate_kineto_job(tmp_path / "job", KinetoJobSpec(world_size=2, iterations=3, layers=2, seed=3,
                                                        comm_stream_waits=True, sync_stalls=True))
    con = tracewh.connect(tmp_path / "w.duckdb")
    ingest_paths(con, [tmp_path / "job"], jobs=1)
    rows = breakdown(con, per_op=True)
    assert {(r["collective"], r["blocking"]) for r in rows} == {("AllReduce", True), ("AllGather", False)}
    summed = {(r["collective"], r["rank"]): (r["collectives"], r["blocking"]) for r in breakdown(con)}
    assert summed == {(c, rank): (3, 3 if c == "AllReduce" else 0)
                      for c in ("AllReduce", "AllGather") for rank in (0, 1)}
    con.close()
