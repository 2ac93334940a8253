"""straggler_cause (issue 36): a generated job whose rank 3 loads one batch slowly is named, in
that step, as the straggler for data loading with the generator's own arrivals; the real DLRM
and trace_filter traces name the rank collective_waits says arrived last."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

import tracewh
from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric

# rank 3's DataLoader takes 200 ms in step 3; ranks otherwise drift ~1 ms apart before a collective
SLOW_RANK, SLOW_STEP, SLOW_NS = 3, 3, 200_000_000
PARTS = ("data_loading_ns", "sync_wait_ns", "os_call_ns", "launch_gap_ns", "gpu_work_ns")


def cause(con, **params):
    return run_metric(con, find_metric("straggler_cause"), params).to_pylist()


@pytest.fixture(scope="module")
def slow_loader(tmp_path_factory):
    folder = tmp_path_factory.mktemp("straggler_cause")
    spec = KinetoJobSpec(world_size=4, iterations=4, layers=4, seed=7,
                         slow_data_loader={(SLOW_RANK, SLOW_STEP): SLOW_NS})
    truth = generate_kineto_job(folder / "job", spec)
    con = tracewh.connect(folder / "w.duckdb")
    ingest_paths(con, [folder / "job"], jobs=1)
    yield con, truth
    con.close()


def arrivals(truth):
    """The generator's collectives matched across ranks: (group, seq, kind) -> {rank: op}."""
    matched = defaultdict(dict)
    for rank, ops in truth.nccl_ops.items():
        for op in ops:
            matched[op.pg_name, op.seq, op.collective][rank] = op
    return matched


def test_the_slow_loader_is_named_with_its_step_cause_and_lateness(slow_loader):
    con, truth = slow_loader
    rows = cause(con)
    matched = arrivals(truth)
    assert len(rows) == len(matched) == 4 * 3  # per step one AllReduce and two AllGathers
    by_key = {}
    for (pg, seq, kind), members in matched.items():
        step = next(iter(members.values())).iteration
        order = sorted(members, key=lambda r: (-members[r].start_ns, r))  # one host: one clock
        last = order[0]
        median = sorted(members, key=lambda r: (members[r].start_ns, -r))[(len(members) + 1) // 2 - 1]
        by_key[pg, kind, step] = (last, median, members[last].start_ns - members[median].start_ns)
    got = {(r["process_group"], r["collective"], r["iteration"]): r for r in rows}
    assert set(got) == set(by_key)
    for key, (last, median, late) in by_key.items():
        assert (got[key]["rank"], got[key]["median_rank"], got[key]["late_ns"]) == (last, median, late)
    (loader_start, loader_end), = [s for s in truth.data_loader[SLOW_RANK]]
    slow = [r for r in rows if r["iteration"] == SLOW_STEP and SLOW_RANK in _members(r, matched)]
    assert {r["collective"] for r in slow} == {"AllReduce", "AllGather"}
    for r in slow:
        assert r["rank"] == SLOW_RANK and r["cause"] == "data loading", r["why"]
        assert abs(r["late_ns"] - SLOW_NS) < 0.01 * SLOW_NS
        # all of the loader lies in the rank's stretch, while its GPU idles; the median rank loads none
        assert r["data_loading_ns"] == loader_end - loader_start and r["median_data_loading_ns"] == 0
        assert r["why"].startswith(f"rank {SLOW_RANK} arrived {r['late_ns'] / 1e6:.2f} ms late: +")
        assert sum(r[p] for p in PARTS) == r["stretch_ns"]
        assert sum(r["median_" + p] for p in PARTS) == r["median_stretch_ns"]
    # in the other steps nobody loads data, and the last rank is late by the usual drift only:
    # mostly a step begun later (the generator starts the ranks' clocks up to 3 ms apart)
    assert all(r["data_loading_ns"] == 0 and r["late_ns"] < 0.01 * SLOW_NS
               for r in rows if r["iteration"] != SLOW_STEP)
    for r in rows:  # the terms explain the lateness exactly
        assert r["late_ns"] == r["later_start_ns"] + sum(r[p] - r["median_" + p] for p in PARTS)


def _members(row, matched):
    return next(set(m) for (pg, _, kind), m in matched.items()
                if (pg, kind) == (row["process_group"], row["collective"]))


def test_per_rank_counts_the_times_each_rank_was_last(slow_loader):
    con, truth = slow_loader
    rows = cause(con)
    per_rank = {r["rank"]: r for r in cause(con, per_rank=True)}
    assert sorted(per_rank) == [0, 1, 2, 3]
    for rank, r in per_rank.items():
        mine = [x for x in rows if x["rank"] == rank]
        assert r["times_last"] == len(mine)
        assert r["collectives"] == 4 * 2  # the AllReduce and its group's AllGather, 4 steps
        assert r["last_pct"] == pytest.approx(len(mine) * 100 / 8)
        assert r["late_ns"] == (sum(x["late_ns"] for x in mine) if mine else None)
    # step 3's culprit is rank 3 (late 100 ms); the other steps' culprits are whoever drifted
    culprits = {}
    for step in range(2, 6):
        late = defaultdict(int)
        for x in rows:
            if x["iteration"] == step:
                late[x["rank"]] += x["late_ns"]
        culprits[step] = min(late, key=lambda k: (-late[k], k))
    assert culprits[SLOW_STEP] == SLOW_RANK
    assert {r: per_rank[r]["steps_culprit"] for r in per_rank} == {
        r: sum(c == r for c in culprits.values()) for r in per_rank}
    assert {r["steps"] for r in per_rank.values()} == {4}
    assert {r["culprit_stable"] for r in per_rank.values()} == {len(set(culprits.values())) == 1}
    for rank, r in per_rank.items():  # the most frequent cause when last (ties: text order)
        counts = Counter(x["cause"] for x in rows if x["rank"] == rank and x["cause"])
        assert r["main_cause"] == (min(counts, key=lambda c: (-counts[c], c)) if counts else None)
    assert per_rank[SLOW_RANK]["main_cause"] is not None


def test_real_traces_name_the_rank_that_arrived_last(shared_data, tmp_path):
    con = tracewh.connect(tmp_path / "w.duckdb")
    ingest_paths(con, [shared_data / "kineto" / "param" / "dlrm_kineto",
                       shared_data / "kineto" / "hta" / "trace_filter"], jobs=1)
    want = {}
    for run, op_key, rank, wait, last_start, start in con.execute(
            "SELECT run_id, op_key, rank, wait_ns, last_start_ns, aligned_start_ns "
            "FROM collective_waits").fetchall():
        want.setdefault((run, op_key), []).append((rank, wait, start))
    got = cause(con)
    assert len(got) == len(want) == 8 + 10
    for r in got:
        ranks = want[r["run_id"], r["op_key"]]
        last = min(rank for rank, wait, _ in ranks if wait == 0)
        starts = sorted(ranks, key=lambda x: (x[2], -x[0]))
        median = starts[(len(ranks) + 1) // 2 - 1]
        assert (r["rank"], r["median_rank"]) == (last, median[0])
        assert r["late_ns"] == median[1]  # the median rank's wait for the last one
        if r["stretch_ns"] is not None:
            assert sum(r[p] for p in PARTS) == r["stretch_ns"]
            assert r["late_ns"] == r["later_start_ns"] + sum(r[p] - r["median_" + p] for p in PARTS)
    con.close()
