"""scaling's loss of efficiency per added node, by part (issue 36 item 4, scaling v9).

Two generated runs of one job (4 ranks, the same seed): on one node, and on two nodes whose
group spanning the hosts ("0") moves its bytes 4x slower (KinetoJobSpec.inter_node_gbps), with
one slow batch on rank 3 (slow_data_loader). Each run's GPU time is recomputed here from the
generator's truth by a sweep over every kernel, copy and collective of each rank (never from the
warehouse): compute; exposed communication while a collective waits for its last rank or
transfers after it, per process group (transfer before wait, then the first group by name);
memory copies; idle time, whose data-loading part is truth.gap_causes'. Then the real DLRM job,
its 8 rank files split into a 2-rank and a 6-rank run (a file belongs to one run): the
identities, and the wait and transfer against comm_breakdown's exposed parts.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter

import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.generate import truth as truths
from tracewh.generate.kineto import LINK_BYTES_PER_NS, KinetoJobSpec, generate_kineto_job
from tracewh.metrics import find_metric, run_metric

SLOW_BATCH_NS = 5_000_000
SPECS = {
    "one_node": KinetoJobSpec(world_size=4, gpus_per_node=4, subgroup_size=2, iterations=4),
    "two_nodes": KinetoJobSpec(world_size=4, gpus_per_node=2, subgroup_size=2, iterations=4,
                               inter_node_gbps=LINK_BYTES_PER_NS / 4,
                               slow_data_loader={(3, 3): SLOW_BATCH_NS}),
}
PARTS = ("wait", "transfer", "comm_other", "mem", "other", "launch", "idle_data", "idle_sync",
         "idle_os", "idle_launching", "idle_unexplained")


def share_column(part):
    return {"mem": "exposed_mem_pct", "other": "exposed_other_pct"}.get(part, f"{part}_pct")


def scaling(con, **params):
    return {r["run_id"]: r for r in run_metric(con, find_metric("scaling"),
                                               {k: str(v) for k, v in params.items()}).to_pylist()}


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scaling_loss")
    db, known = folder / "wh.duckdb", {}
    for run, spec in SPECS.items():
        known[run] = generate_kineto_job(folder / run, spec)
        result = CliRunner().invoke(app, ["ingest", "-q", "--db", str(db), "--run", run,
                                          str(folder / run)])
        assert result.exit_code == 0, result.stderr
    con = tracewh.connect(db, read_only=True)
    yield con, known
    con.close()


def host_offsets(known):
    """Each rank's clock offset as clock_offsets estimates it (DESIGN section 4) from the
    generator's collectives: per host, the median over (collective, rank on the host) of its end
    minus rank 0's end, halves rounded up (as DuckDB's round); 0 on rank 0's host. The
    generator's clocks agree: a few ns of noise."""
    ends = {(op.pg_name, op.seq): op.end_ns for op in known.nccl_ops[0]}
    diffs = {}
    for rank, ops in known.nccl_ops.items():
        diffs.setdefault(known.hostnames[rank], []).extend(
            op.end_ns - ends[op.pg_name, op.seq] for op in ops if (op.pg_name, op.seq) in ends)
    return {rank: 0 if known.hostnames[rank] == known.hostnames[0]
            else math.floor(statistics.median(diffs[known.hostnames[rank]]) + 0.5)
            for rank in known.nccl_ops}


def truth_parts(known):
    """(window ns, {part: ns}, {(part, group): ns}) summed over the run's ranks, by a sweep."""
    window, parts, groups = 0, Counter(), Counter()
    offset = host_offsets(known)
    last = {}  # (group, seq) -> the last rank's arrival, aligned
    for rank, ops in known.nccl_ops.items():
        for op in ops:
            key = op.pg_name, op.seq
            last[key] = max(last.get(key, 0), op.start_ns - offset[rank])
    for rank, kernels in known.kernels.items():
        edges = []  # (time, +1 / -1, label)
        for k in kernels:
            edges += [(k.start_ns, 1, k.kind), (k.end_ns, -1, k.kind)]
        for m in known.memcpy[rank] + known.memset[rank]:
            edges += [(m.start_ns, 1, "mem"), (m.end_ns, -1, "mem")]
        lo, hi = min(t for t, _, _ in edges), max(t for t, _, _ in edges)
        window += hi - lo
        for op in known.nccl_ops[rank]:
            arrived = min(max(last[op.pg_name, op.seq] + offset[rank], op.start_ns), op.end_ns)
            for part, a, b in (("wait", op.start_ns, arrived), ("transfer", arrived, op.end_ns)):
                edges += [(a, 1, (part, op.pg_name)), (b, -1, (part, op.pg_name))]
        edges.sort(key=lambda e: e[0])
        live, prev = Counter(), lo
        for t, step, label in edges:
            if t > prev:
                on = {x for x, n in live.items() if n > 0}
                if "compute" in on:
                    parts["compute"] += t - prev
                elif "comm" in on:
                    labelled = sorted((x for x in on if isinstance(x, tuple)),
                                      key=lambda x: (x[0] != "transfer", x[1]))
                    if labelled:
                        parts[labelled[0][0]] += t - prev
                        groups[labelled[0]] += t - prev
                    else:
                        parts["comm_other"] += t - prev
                elif "mem" in on:
                    parts["mem"] += t - prev
                else:
                    parts["idle"] += t - prev
                prev = t
            live[label] += step
    parts["idle_data"] = sum(truths.gap_causes(known.host[r], known.gpu_busy[r], 30_000)["data"]
                             for r in known.host)
    return window, parts, groups


def test_each_runs_parts_equal_a_sweep_over_the_generators_truth(job):
    con, known = job
    got = scaling(con)
    offsets = dict(con.execute(
        "SELECT rank, offset_ns FROM clock_offsets WHERE run_id = 'two_nodes'").fetchall())
    assert offsets == host_offsets(known["two_nodes"]) and max(offsets.values()) > 0
    for run in SPECS:
        window, parts, _ = truth_parts(known[run])
        row = got[run]
        assert row["window_ns"] == window
        for part in ("compute", "wait", "transfer", "comm_other", "mem", "idle", "idle_data"):
            want = parts[part] * 100 / window
            assert row[share_column(part)] == pytest.approx(want, abs=1e-9), (run, part)
    # the 2-node run lost a known slow batch to data loading: rank 3's loader, 5 ms longer
    _, parts, _ = truth_parts(known["two_nodes"])
    assert SLOW_BATCH_NS <= parts["idle_data"] < SLOW_BATCH_NS * 1.05


def test_the_parts_add_up_to_the_loss_exactly(job):
    con, known = job
    base, two = scaling(con)["one_node"], scaling(con)["two_nodes"]
    idle_parts = [p for p in PARTS if p == "launch" or p.startswith("idle_")]
    for row in (base, two):
        whole = sum(row[share_column(p)] for p in PARTS) + row["compute_pct"]
        assert whole == pytest.approx(100, abs=1e-9)
        assert row["idle_pct"] == pytest.approx(sum(row[share_column(p)] for p in idle_parts),
                                                abs=1e-9)
        assert min(row[share_column(p)] for p in PARTS) >= 0
    assert base["loss_pct"] is None and base["loss_by_group"] is None
    assert two["loss_pct"] == pytest.approx(base["compute_pct"] - two["compute_pct"], abs=1e-12)
    assert sum(two[f"loss_{p}_pct"] for p in PARTS) == pytest.approx(two["loss_pct"], abs=1e-9)
    for p in PARTS:
        want = two[share_column(p)] - base[share_column(p)]
        assert two[f"loss_{p}_pct"] == pytest.approx(want, abs=1e-12)
    assert two["loss_per_node_pct"] == pytest.approx(two["loss_pct"])  # one node added


def test_the_loss_by_group_names_the_slow_inter_node_group(job):
    con, known = job
    two = scaling(con)["two_nodes"]
    w1, _, g1 = truth_parts(known["one_node"])
    w2, _, g2 = truth_parts(known["two_nodes"])
    want = {key: g2[key] * 100 / w2 - g1[key] * 100 / w1 for key in g1.keys() | g2.keys()}
    got = {(part, group): float(value) for part, group, value
           in (item.split(" ") for item in two["loss_by_group"].split(", "))}
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert got[key] == pytest.approx(value, abs=0.051), key
    # the slowed group spans the hosts: its transfer is the transfer lost, to 0.1 point
    assert want["transfer", "0"] > 1
    assert two["loss_transfer_pct"] == pytest.approx(want["transfer", "0"], abs=0.1)
    assert sum(v for (part, _), v in want.items() if part == "transfer") == pytest.approx(
        two["loss_transfer_pct"], abs=1e-9)


@pytest.fixture(scope="module")
def dlrm(shared_data, tmp_path_factory):
    """The real DLRM job (one node, 8 ranks) as two runs: ranks 0-1 and 2-7."""
    folder = tmp_path_factory.mktemp("scaling_dlrm")
    files = sorted(shared_data.joinpath("kineto", "param", "dlrm_kineto").glob("worker*.json"))
    db = folder / "wh.duckdb"
    for run, chosen in (("dlrm2", files[:2]), ("dlrm6", files[2:])):
        result = CliRunner().invoke(app, ["ingest", "-q", "--db", str(db), "--run", run,
                                          *map(str, chosen)])
        assert result.exit_code == 0, result.stderr
    con = tracewh.connect(db, read_only=True)
    yield con
    con.close()


def test_real_dlrm_two_ranks_against_six(dlrm):
    got = scaling(dlrm)
    small, large = got["dlrm2"], got["dlrm6"]
    assert (small["world_size"], large["world_size"]) == (2, 6)
    want = small["compute_pct"] - large["compute_pct"]
    assert large["loss_pct"] == pytest.approx(want, abs=1e-12)
    assert sum(large[f"loss_{p}_pct"] for p in PARTS) == pytest.approx(large["loss_pct"], abs=1e-9)
    for row in (small, large):
        whole = sum(row[share_column(p)] for p in PARTS) + row["compute_pct"]
        assert whole == pytest.approx(100, abs=1e-9)
        # the collectives of a DLRM rank never overlap: the exposed wait and transfer are
        # comm_breakdown's, summed over the run
        parts = run_metric(dlrm, find_metric("comm_breakdown"), {"run": row["run_id"]}).to_pylist()
        wait = sum(r["wait_exposed_ns"] for r in parts)
        transfer = sum(r["transfer_exposed_ns"] for r in parts)
        assert wait > 0 and transfer > 0
        assert row["wait_pct"] == pytest.approx(wait * 100 / row["window_ns"], rel=1e-9)
        assert row["transfer_pct"] == pytest.approx(transfer * 100 / row["window_ns"], rel=1e-9)
