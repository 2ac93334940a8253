"""critical_path: HolisticTraceAnalysis 0.5.0's answer on the shared alexnet trace, the walk
against a brute-force longest path on small random graphs, and generated jobs whose critical
path is known.

HTA's numbers are recorded in tests/peer/hta_critical_path_0.5.0.json by
tests/peer/hta_critical_path.py (run in HTA's own venv).
"""

from __future__ import annotations

import json
import random
from functools import lru_cache
from pathlib import Path

import duckdb
import pytest

import tracewh
from tracewh.ingest import ingest_paths
from tracewh.metrics import MetricError, find_metric, run_metric
from tracewh.resources import sql_dir

PEER = json.loads((Path(__file__).parent / "peer" / "hta_critical_path_0.5.0.json").read_text())


@pytest.fixture(scope="module")
def alexnet(shared_data, tmp_path_factory):
    con = tracewh.connect(tmp_path_factory.mktemp("cp_alexnet") / "wh.duckdb")
    results = ingest_paths(con, [shared_data / PEER["trace"]], run="alexnet")
    assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    yield con
    con.close()


def query(con, **params):
    return run_metric(con, find_metric("critical_path"), params).to_pylist()


@pytest.mark.parametrize("case", PEER["cases"], ids=lambda c: f"instance{c['instance']}")
def test_equals_hta_on_alexnet(alexnet, case):
    """Path length and the time per bound_by class equal HTA's (µs, exactly; the aim is 1 %),
    with hta = true (HTA's classes) and by default (the same on this trace: no data loading,
    the one blocking call's end weighs 0 either way)."""
    for hta in ("true", "false"):
        rows = query(alexnet, run="alexnet", rank=case["rank"], annotation=case["annotation"],
                     instance=case["instance"], per="class", hta=hta)
        ours = {r["bound_by"]: r["dur_ns"] / 1000 for r in rows if r["dur_ns"]}
        theirs = {k: v for k, v in case["bound_by_us"].items() if v}
        assert ours == pytest.approx(theirs, rel=0.01)
        assert ours == theirs  # in fact exact
        assert rows[0]["path_ns"] / 1000 == case["path_us"]
    edges = query(alexnet, run="alexnet", rank=case["rank"], annotation=case["annotation"],
                  instance=case["instance"])
    # HTA's path: from its first to its last node (tracewh walks on to the step's last node, a
    # weight-0 sync edge into cudaDeviceSynchronize's end)
    weighted = [e for e in edges if e["dur_ns"]]
    span = weighted[-1]["end_ns"] - edges[0]["start_ns"]
    assert span / 1000 == case["last_node"]["ts_us"] - case["first_node"]["ts_us"]
    assert case["last_node"]["name"] in {e["name"] for e in weighted[-2:]}
    assert [e["seq"] for e in edges] == list(range(1, len(edges) + 1))
    # each edge starts where the one before ended (a chain), except a crossing to another rank
    for before, after in zip(edges, edges[1:]):
        assert before["end_ns"] == after["start_ns"] or after["edge_type"] == "rendezvous"


def test_per_step(alexnet):
    rows = query(alexnet, run="alexnet", annotation=PEER["cases"][0]["annotation"], per="step")
    assert [(r["instance"], r["path_ns"]) for r in rows] == [
        (c["instance"], c["path_us"] * 1000) for c in PEER["cases"]]
    assert all(r["ranks_crossed"] == [0] and r["top_class"] == "cpu_bound" for r in rows)


def test_mistakes_are_errors(alexnet):
    with pytest.raises(MetricError, match="per must be"):
        query(alexnet, run="alexnet", annotation="forward", per="nodes")
    with pytest.raises(MetricError, match="ranks must be"):
        query(alexnet, run="alexnet", annotation="forward", ranks="some")
    # an annotation that names nothing selects nothing, as every name filter
    assert query(alexnet, run="alexnet", annotation="no such range") == []


# --- the walk against a brute-force longest path -----------------------------------------------

@lru_cache(maxsize=1)
def walk_macro() -> str:
    return (sql_dir() / "lib" / "path_walk.sql").read_text()


def random_graph(rng: random.Random, nodes: int):
    """A random DAG scheduled as soon as possible: node v happens when its last input arrives
    (max of source time + weight), sources at a random release time. Weights 0..5, so ties and
    weight-0 edges are common."""
    ts, edges = {}, []
    for v in range(nodes):
        preds = rng.sample(range(v), k=min(v, rng.randint(0, 3))) if v else []
        if not preds:
            ts[v] = rng.randint(0, 4)
            continue
        weights = [rng.choice([0, 0, 1, 2, 3, 5]) for _ in preds]
        ts[v] = max(ts[u] + w for u, w in zip(preds, weights))
        edges += [(u, v, w) for u, w in zip(preds, weights)]
    return ts, edges


def longest_to(end, ts, edges):
    """Brute force: every path ending at `end`, by recursion over its inputs; the length of a
    path counts its source's release time (the critical path method with release times)."""
    inputs: dict[int, list] = {}
    for u, v, w in edges:
        inputs.setdefault(v, []).append((u, w))

    def best(v):
        return max([ts[v]] if v not in inputs else [best(u) + w for u, w in inputs[v]])
    return best(end)


@pytest.mark.parametrize("seed", range(12))
def test_walk_equals_brute_force_longest_path(seed):
    rng = random.Random(seed)
    con = duckdb.connect()
    con.execute(walk_macro())
    graphs = []
    rows = []
    for grp in range(4):  # several graphs in one query, as steps are
        n = rng.randint(2, 14)
        ts, edges = random_graph(rng, n)
        if not edges:
            continue
        graphs.append((grp, ts, edges))
        # lanes at random: the walk's segments along a lane must not change the answer
        lane = {v: rng.randint(0, 2) for v in ts}
        rows += [(len(rows) + i, grp, grp * 1000 + v, grp * 1000 + u, ts[u], ts[v], w, ts[v],
                  grp % 2, lane[v]) for i, (u, v, w) in enumerate(edges)]
    con.execute("CREATE TABLE g (edge_id BIGINT, grp INT, dst BIGINT, src BIGINT, src_ts BIGINT, "
                "dst_ts BIGINT, weight_ns BIGINT, aligned_ns BIGINT, rank INT, lane INT)")
    con.executemany("INSERT INTO g VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    path = con.sql("SELECT grp, seq, src, dst, src_ts, weight_ns FROM critical_path_walk(g) "
                   "ORDER BY grp, seq").fetchall()
    for grp, ts, edges in graphs:
        mine = [p for p in path if p[0] == grp]
        # the walk ends at the graph's last node (latest time; ties: the highest id)
        with_inputs = {v for _, v, _ in edges}
        end = max(with_inputs, key=lambda v: (ts[v], v))
        assert mine[-1][3] == grp * 1000 + end
        # a chain of the graph's edges from a node without inputs
        assert all((s - grp * 1000, d - grp * 1000, w) in edges for _, _, s, d, _, w in mine)
        assert all(a[3] == b[2] for a, b in zip(mine, mine[1:]))
        assert mine[0][2] - grp * 1000 not in with_inputs
        # its length (from its source's release time) is the longest path's
        assert mine[0][4] + sum(p[5] for p in mine) == longest_to(end, ts, edges)


# --- a generated job whose truth is known --------------------------------------------------------

def reorder_stored_rows(con, salt: int) -> None:
    """The stored GPU ops and API calls rewritten in another order (a hash of the row id)."""
    for table in ("kernels", "memcpy", "memset", "cuda_api"):
        con.execute(f"CREATE TEMP TABLE moved AS SELECT * FROM store.{table} "
                    f"ORDER BY hash(rowid + {salt}), rowid")
        con.execute(f"DELETE FROM store.{table}")
        con.execute(f"INSERT INTO store.{table} SELECT * FROM moved")
        con.execute("DROP TABLE moved")


@pytest.mark.parametrize("seed", range(6))
def test_the_path_does_not_depend_on_the_order_rows_are_stored_in(tmp_path, seed):
    """Random timelines with ties (zero-length ops at one instant, exact duplicates, two
    devices): every edge of the path, each rank alone and across ranks, is the same after the
    stored rows are shuffled (nodes that tie are ordered by their content, not by row order)."""
    from metric_fixtures import Run, build
    from test_gpu_op_timeline import random_ranks

    ranks = random_ranks(100 + seed)
    for rank in ranks:
        for op in rank.ops:
            op.launch = op.start - (seed * 7 + op.start) % 13
    con = build(tmp_path / "w.duckdb", [Run("run", ranks)])
    window = {"start_ns": 1_700_000_000_000_000_000}
    cases = [{}, {"ranks": "all"}, {"ranks": "all", "rank": 1}]
    before = [query(con, **window, **case) for case in cases]
    assert all(before) and len({e["rank"] for e in before[0]}) == 2
    for salt in (1, 2):
        reorder_stored_rows(con, salt)
        assert [query(con, **window, **case) for case in cases] == before


SLOW = 2  # the rank whose data loader takes 5 ms at the start of every step


@pytest.fixture(scope="module")
def straggler(tmp_path_factory):
    """4 ranks; rank 2 loads its batch for 5 ms at every step, so it arrives last at every
    collective and every other rank's AllReduce waits for it (the generator resolves a
    collective at its last arrival). The optimizer's wait for the AllReduce is recorded
    (comm_stream_waits), as are the host's syncs (sync_stalls)."""
    from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job

    out = tmp_path_factory.mktemp("cp_straggler")
    spec = KinetoJobSpec(world_size=4, iterations=3, layers=2, seed=3, data_loader_ns=5_000_000,
                         data_loader_ranks=(SLOW,), sync_stalls=True, comm_stream_waits=True)
    truth = generate_kineto_job(out / "traces", spec)
    con = tracewh.connect(out / "wh.duckdb")
    results = ingest_paths(con, [out / "traces"], run="job")
    assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    yield con, truth
    con.close()


@pytest.mark.parametrize("rank", [0, 1, 3])
def test_the_path_crosses_to_the_slow_loader(straggler, rank):
    con, truth = straggler
    steps = query(con, run="job", ranks="all", rank=rank, per="step")
    assert len(steps) == 3
    for step in steps:
        assert step["end_rank"] == rank and step["ranks_crossed"] == sorted([rank, SLOW])
        assert step["top_class"] == "data_loading"
        assert step["top_ops"][0] == "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
    loader = {start: end - start for start, end in truth.data_loader[SLOW]}
    for instance in range(3):
        path = query(con, run="job", ranks="all", rank=rank, instance=instance)
        crossing = [e for e in path if e["edge_type"] == "rendezvous"]
        # the path reaches rank 2 at the AllReduce (the last collective of the step), waiting for it
        assert [(e["rank"], e["bound_by"]) for e in crossing] == [(rank, f"waiting for rank {SLOW}")]
        assert {e["rank"] for e in path if e["seq"] < crossing[0]["seq"]} == {SLOW}
        # and on rank 2 it holds the whole of that step's data loading, as generated
        loading = [e for e in path if e["bound_by"] == "data_loading"]
        assert {e["rank"] for e in loading} == {SLOW}
        assert sum(e["dur_ns"] for e in loading) == loader[loading[0]["start_ns"]]


def test_each_rank_alone_stays_on_its_rank(straggler):
    con, _ = straggler
    steps = query(con, run="job", rank=0, per="step")
    assert [s["ranks_crossed"] for s in steps] == [[0]] * 3
    assert all(s["top_class"] != "data_loading" for s in steps)


# --- what_if: upper bounds from the path ----------------------------------------------------------

def what_if(con, **params):
    return run_metric(con, find_metric("what_if"), params).to_pylist()


def test_what_if_takes_the_scenarios_time_off_the_path(straggler):
    con, truth = straggler
    loader = {start: end - start for start, end in truth.data_loader[SLOW]}
    steps = {(r, n): e - s for r, n, s, e in con.sql(
        "SELECT rank, iteration - 2, start_ns, end_ns FROM iterations WHERE run_id = 'job'").fetchall()}
    for rank in (0, 3):
        rows = what_if(con, run="job", ranks="all", rank=rank)
        paths = {s["instance"]: s for s in query(con, run="job", ranks="all", rank=rank, per="step")}
        for r in rows:
            assert r["path_ns"] == paths[r["instance"]]["path_ns"]
            assert r["new_step_ns"] == r["step_ns"] - r["gain_ns"] and 0 <= r["gain_ns"] <= r["path_ns"]
            assert r["step_ns"] == steps[(rank, r["instance"])]
        by = {(r["instance"], r["scenario"]): r["gain_ns"] for r in rows}
        assert sorted({s for _, s in by}) == ["comm_hidden", "comm_x", "launch_free", "no_data_wait",
                                              "straggler_on_time"]  # kernel_x needs `kernel`
        for instance in range(3):
            path = query(con, run="job", ranks="all", rank=rank, instance=instance)
            # no data wait: the slow rank's loader (the path holds all of it)
            start = min(e["start_ns"] for e in path if e["bound_by"] == "data_loading")
            assert by[(instance, "no_data_wait")] == loader[start]
            comm = sum(e["dur_ns"] for e in path if e["bound_by"] == "gpu_communication_bound")
            assert by[(instance, "comm_hidden")] == comm and by[(instance, "comm_x")] == round(comm / 2)
            # the straggler was late by about its loader at the AllReduce
            assert 0.9 * loader[start] < by[(instance, "straggler_on_time")] < 1.2 * loader[start]
    # one rank alone never waits for another
    alone = what_if(con, run="job", rank=0, scenario="straggler_on_time")
    assert len(alone) == 3 and {r["gain_ns"] for r in alone} == {0}
    gemm = what_if(con, run="job", rank=0, instance=0, scenario="kernel_x", kernel="nvjet", factor=4)
    path = query(con, run="job", rank=0, instance=0)
    nvjet = sum(e["dur_ns"] for e in path if e["lane"].startswith("stream") and "nvjet" in (e["name"] or "")
                and e["edge_type"] == "operator")
    assert nvjet > 0 and gemm[0]["gain_ns"] == round(nvjet * 0.75)
    with pytest.raises(MetricError, match="scenario must be"):
        what_if(con, run="job", scenario="faster")
