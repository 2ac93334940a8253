"""The metric catalogue (DESIGN section 7) and the interval macros it is built on.

Golden tests: a hand-built warehouse (tests/metric_fixtures.py) whose answers are computed here
independently, by counting unit cells and by explicit interval arithmetic, never by the SQL under
test. The fixture holds the nasty cases: zero-length ops, identical timestamps, touching ops, ops
with no iteration, an op running across an iteration boundary, a rank on another host with a
skewed clock, collectives with and without sizes, a run without a workload card. Then: the
nsys generator's known truth, every metric on an empty warehouse and on the real nsys exports.
"""

from __future__ import annotations

import random
import shutil
import statistics
import subprocess

import duckdb
import pyarrow as pa
import pytest

import tracewh
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import ingest_paths
from tracewh.metrics import MetricError, find_metric, list_metrics, run_metric
from tracewh.resources import sql_dir

from metric_fixtures import (BASE, NAMES, Nccl, Op, Rank, Run, build, cells, islands, quantile,
                             rows, stats)

AG = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)"
SR = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)"
MIB = 1 << 20

# run "job": 2 ranks on hosts a and b; rank 1's clock runs 7 ns ahead of rank 0's.
R0 = Rank("job", 0, "a", ops=[
    Op("compute", 0, 10, 1, launch=-5),
    Op("comm", 5, 15, 1, launch=-4, stream=20),
    Op("compute", 10, 20, 1, launch=-3),                      # touches the one before
    Op("memcpy", 12, 18, 1, launch=-2, bytes=4096, stream=8),
    Op("compute", 20, 20, 1, launch=-1),                      # zero length, touching
    Op("compute", 30, 40, 1, launch=25),                      # two identical kernels
    Op("compute", 30, 40, 1, launch=25),
    Op("sync", 35, 38, 1, launch=26),
    Op("compute", 45, 45, None, launch=41),                   # zero length alone, no iteration
    Op("compute", 50, 70, 2, launch=44),
    Op("comm", 60, 80, 2, launch=46, stream=20),
    Op("memcpy", 82, 88, None, bytes=100, stream=8, name="DtoH"),  # no launch record
    Op("comm", 90, 95, 2, launch=89, stream=20, name=AG),
    Op("memset", 95, 97, 2, launch=47, bytes=64, stream=8),   # touches the comm kernel
    Op("memset", 96, 96, 2, launch=48, bytes=0, stream=8),
    Op("compute", 98, 104, 2, launch=50),                     # iteration 2, into iteration 3's time
    Op("sync", 100, 110, 3, launch=99),
    Op("comm", 110, 115, 3, launch=105, stream=21, name=SR),
], nccl=[
    Nccl("AllReduce", 5, 15, "AllReduce:1", full_bytes=1024, group_size=2, iteration=1),
    Nccl("AllReduce", 60, 80, "AllReduce:2", group_size=2, iteration=2),
    Nccl("AllGather", 90, 95, "AllGather:1", full_bytes=64 * MIB, group_size=2, iteration=2),
    Nccl("Send", 110, 115, "Send:1", full_bytes=128, iteration=3),
], steps=[(1, -10, 48), (2, 48, 97), (3, 97, 120)], ranges=[
    ("forward", 0, 20, None, "push_pop"),
    ("backward", 21, 45, None, "push_pop"),
    ("DeepSpeedEngine._take_model_step", 46, 47, None, "push_pop"),
    ("forward", 50, 70, None, "push_pop"),
    ("forward", 71, 72, None, "push_pop"),
    ("backward", 73, 96, None, "push_pop"),
    ("backward", 98, None, None, "push_pop"),                 # never ended
    ("checkpoint", 60, None, None, "mark"),
    ("ncclAllReduce", 5, 6, "NCCL", "push_pop"),
    ("dataload", 100, 105, None, "start_end"),
], api=[("cudaStreamSynchronize", 111, 131), ("cudaStreamSynchronize", 60, 62)])
R1 = Rank("job", 1, "b", ops=[
    Op("compute", 0, 30, 1, launch=-1),
    Op("comm", 14, 22, 1, launch=0, stream=20),
    Op("compute", 40, 90, 2, launch=35),
    Op("comm", 75, 87, 2, launch=70, stream=20),
    Op("memcpy", 91, 93, 2, launch=89, bytes=2048, stream=8),
    Op("comm", 99, 103, 2, launch=95, stream=20, name=AG),
    Op("comm", 111, 118, 3, launch=105, stream=21, name=SR),
], nccl=[
    Nccl("AllReduce", 14, 22, "AllReduce:1", full_bytes=1024, group_size=2, iteration=1),
    Nccl("AllReduce", 75, 87, "AllReduce:2", group_size=2, iteration=2),
    Nccl("AllGather", 99, 103, "AllGather:1", full_bytes=64 * MIB, group_size=2, iteration=2),
    Nccl("Recv", 111, 118, "Recv:1", full_bytes=128, iteration=3),
], steps=[(1, -8, 38), (2, 38, 104), (3, 104, 125)], ranges=[
    ("forward", 0, 30, None, "push_pop"),
    ("backward", 40, 90, None, "push_pop"),
])
# run "solo": one rank, no workload card.
S0 = Rank("solo", 0, "c", ops=[
    Op("compute", 0, 40, 1, launch=-1),
    Op("comm", 30, 70, 1, launch=0, stream=20),
    Op("compute", 60, 100, 2, launch=1),
], nccl=[Nccl("AllReduce", 30, 70, "AllReduce:1", full_bytes=1_000_000, group_size=1, iteration=1)],
    steps=[(1, -1, 50), (2, 50, 101), (3, 101, 150)])
RUNS = [
    Run("job", [R0, R1], batch_size=8, seq_len=1024,
        # as ingest keeps a workload card: under workload_card, its pp in run_params
        metadata={"workload_card": {"Model-executor": {"model_plan_parallelization": {"pp": 2}}}},
        params={"pp": "2"}),
    Run("solo", [S0]),
]
RANKS = {("job", 0): R0, ("job", 1): R1, ("solo", 0): S0}
OFFSET = {("job", 0): 0, ("job", 1): 7, ("solo", 0): 0}  # clock offsets the data was made with
LAYER = {"compute": 0, "comm": 1, "memcpy": 2, "memset": 2, "sync": None}


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    connection = build(tmp_path_factory.mktemp("catalogue") / "w.duckdb", RUNS)
    yield connection
    connection.close()


def by(key, items):
    return {key(item): item for item in items}


# --- the interval macros, against brute force ----------------------------------------------------

@pytest.fixture(scope="module")
def mem():
    """An in-memory database with only the macros: they need no warehouse."""
    connection = duckdb.connect()
    connection.execute((sql_dir() / "lib" / "intervals.sql").read_text())
    yield connection
    connection.close()


def random_groups(rnd, count, with_values=False):
    """Intervals on a small grid, full of zero-length, identical and touching ones."""
    out = {}
    for g in range(3):
        items = []
        for _ in range(rnd.randrange(0, count)):
            s = rnd.randrange(0, 40)
            e = s + rnd.choice([0, 0, 1, 2, 3, 5, 8])
            items.append((s, e, rnd.choice([0, 1, 2, 3, None])) if with_values else (s, e))
        if items and rnd.random() < 0.3:
            items.append(items[0])                        # an identical twin
        if items and rnd.random() < 0.3:
            items.append((items[0][1], items[0][1] + 3) + items[0][2:])   # touching
        out[g] = items
    return out


def load(mem, name, groups, columns="start_ns BIGINT, end_ns BIGINT"):
    mem.execute(f"CREATE OR REPLACE TABLE {name} (grp INTEGER, {columns})")
    data = [(g, *item) for g, items in groups.items() for item in items]
    if data:
        mem.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' * len(data[0]))})", data)


@pytest.mark.parametrize("seed", range(60))
def test_macros_equal_brute_force(mem, seed):
    rnd = random.Random(seed)
    a, b = random_groups(rnd, 12), random_groups(rnd, 8)
    layered = random_groups(rnd, 14, with_values=True)
    load(mem, "a", a)
    load(mem, "b", b)
    load(mem, "l", layered, "start_ns BIGINT, end_ns BIGINT, layer INTEGER")
    for g in range(3):
        ca, cb = cells(a[g]), cells(b[g])
        union = mem.execute("SELECT start_ns, end_ns, intervals_merged, prev_end_ns "
                            "FROM intervals_union(a) WHERE grp = ? ORDER BY 1", [g]).fetchall()
        expected = islands(a[g])
        assert union == [(s, e, n, expected[i - 1][1] if i else None)
                         for i, (s, e, n) in enumerate(expected)]
        for macro, want in [("intervals_intersect", ca & cb), ("intervals_difference", ca - cb)]:
            pieces = mem.execute(f"SELECT start_ns, end_ns FROM {macro}(a, b) WHERE grp = ?",
                                 [g]).fetchall()
            assert all(e > s for s, e in pieces)
            assert sum(e - s for s, e in pieces) == len(cells(pieces)) == len(want)  # disjoint
            assert cells(pieces) == want, macro
        steps = mem.execute("SELECT start_ns, end_ns, depth FROM intervals_overlap_count(a) "
                            "WHERE grp = ?", [g]).fetchall()
        assert sum(e - s for s, e, _ in steps) == len(cells([(s, e) for s, e, _ in steps]))
        if a[g]:
            assert sum(e - s for s, e, _ in steps) == max(e for _, e in a[g]) - min(s for s, _ in a[g])
        for s, e, depth in steps:
            assert all(depth == sum(1 for x, y in a[g] if x <= t < y) for t in range(s, e))
        flat = mem.execute("SELECT start_ns, end_ns, layer FROM intervals_flatten(l) WHERE grp = ?",
                           [g]).fetchall()
        top = {t: y for s, e, y in flat for t in range(s, e)}
        assert len(top) == sum(e - s for s, e, _ in flat)
        want = {}
        for t in range(60):
            live = [y for s, e, y in layered[g] if s <= t < e]
            if live:
                ranked = [y for y in live if y is not None]
                want[t] = min(ranked) if ranked else None
        assert top == want
        breakdown = mem.execute("SELECT start_ns, end_ns, busy_ns, layer0_ns, layer1_ns, layer2_ns, "
                                "rest_ns FROM intervals_breakdown(l) WHERE grp = ?", [g]).fetchall()
        if layered[g]:
            counts = [sum(1 for y in want.values() if y == k) for k in (0, 1, 2)]
            assert breakdown == [(min(s for s, _, _ in layered[g]), max(e for _, e, _ in layered[g]),
                                  len(want), *counts, len(want) - sum(counts))]
        else:
            assert breakdown == []


@pytest.mark.parametrize("seed", range(40))
def test_window_breakdown_equals_brute_force(mem, seed):
    # per window, the time of each top layer over the intervals cut to it; the alone flag is set
    # (as gpu_ops.alone) only where nothing else overlaps or touches, and the window guesses are
    # right, wrong or missing
    rnd = random.Random(1000 + seed)
    layered = random_groups(rnd, 14, with_values=True)
    rows, windows = [], []
    for g, items in layered.items():
        edges = sorted(rnd.sample(range(0, 50), 4))
        tiles = [(w, edges[w], edges[w + 1]) for w in range(3) if rnd.random() < 0.8]
        windows += [(g, w, ws, we) for w, ws, we in tiles]
        for i, (s, e, y) in enumerate(items):
            alone = not any(j != i and x <= e and s <= z for j, (x, z, _) in enumerate(items))
            guess = rnd.choice([None, 0, 1, 2, 7])
            rows.append((g, s, e, y, guess, alone and rnd.random() < 0.8))
    mem.execute("CREATE OR REPLACE TABLE wl (grp INTEGER, start_ns BIGINT, end_ns BIGINT, "
                "layer INTEGER, window_id INTEGER, alone BOOLEAN)")
    mem.execute("CREATE OR REPLACE TABLE ww (grp INTEGER, window_id INTEGER, start_ns BIGINT, "
                "end_ns BIGINT)")
    for table, data in (("wl", rows), ("ww", windows)):
        if data:
            mem.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(data[0]))})", data)
    got = {(g, w): rest for g, w, *rest in mem.execute(
        "SELECT grp, window_id, busy_ns, layer0_ns, layer1_ns, layer2_ns, rest_ns "
        "FROM intervals_window_breakdown(wl, ww)").fetchall()}
    want = {}
    for g, w, ws, we in windows:
        top = []
        for t in range(ws, we):
            live = [y for s, e, y in layered[g] if s <= t < e]
            if live:
                ranked = [y for y in live if y in (0, 1, 2)]
                top.append(min(ranked) if ranked else None)
        if top:
            want[(g, w)] = [len(top), *(top.count(k) for k in (0, 1, 2)), top.count(None)]
    # a window with no busy time may have a row of zeros or none (callers join and coalesce)
    assert {k: v for k, v in got.items() if v[0]} == want


@pytest.mark.parametrize("preserve_order", [True, False])
def test_macros_on_many_chunks_and_threads(preserve_order):
    """The streaming passes rely on the order of a sorted input: check them on inputs of many
    vectors, several threads and both order settings against a merge done here in Python."""
    connection = duckdb.connect()
    connection.execute("SET threads = 4")
    connection.execute(f"SET preserve_insertion_order = {str(preserve_order).lower()}")
    connection.execute((sql_dir() / "lib" / "intervals.sql").read_text())
    rnd = random.Random(11)
    data = []
    for g in range(5):
        t = 0
        for _ in range(40_000):
            t += rnd.choice([0, 1, 3, 10, 40])
            data.append((g, t, t + rnd.choice([0, 2, 5, 30, 120])))
    rnd.shuffle(data)
    columns = list(zip(*data))
    rows = pa.table({name: pa.array(values, pa.int64())
                     for name, values in zip(("grp", "start_ns", "end_ns"), columns)})
    connection.execute("CREATE TABLE a AS SELECT * FROM rows")  # DuckDB reads the Arrow table
    expected = {}
    for g in range(5):
        merged = []
        for s_, e_ in sorted((s_, e_) for k, s_, e_ in data if k == g):
            if merged and s_ <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e_)
                merged[-1][2] += 1
            else:
                merged.append([s_, e_, 1])
        expected[g] = (len(merged), sum(e_ - s_ for s_, e_, _ in merged), sum(n for *_, n in merged))
    got = connection.execute("SELECT grp, count(*), sum(end_ns - start_ns), sum(intervals_merged) "
                             "FROM intervals_union(a) GROUP BY grp ORDER BY grp").fetchall()
    assert {g: (n, int(length), int(m)) for g, n, length, m in got} == expected
    depth = connection.execute("SELECT grp, sum(end_ns - start_ns) FROM intervals_overlap_count(a) "
                               "WHERE depth > 0 GROUP BY grp ORDER BY grp").fetchall()
    assert {g: int(length) for g, length in depth} == {g: v[1] for g, v in expected.items()}
    connection.close()


@pytest.mark.parametrize("seed", range(40))
def test_overlap_sum_tile_and_clip_equal_brute_force(mem, seed):
    rnd = random.Random(1000 + seed)
    items = random_groups(rnd, 12, with_values=True)
    guesses = {g: [(s, e, v, rnd.choice([None, 0, 2, 4, 99])) for s, e, v in its]
               for g, its in items.items()}
    load(mem, "v", guesses, "start_ns BIGINT, end_ns BIGINT, value INTEGER, window_id INTEGER")
    windows = {}
    for g in range(3):
        cuts = sorted(rnd.sample(range(0, 50), rnd.randrange(0, 6)))
        windows[g] = [(i, cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]
    load(mem, "w", windows, "window_id INTEGER, start_ns BIGINT, end_ns BIGINT")
    for g in range(3):
        steps = mem.execute("SELECT start_ns, end_ns, depth, value_sum FROM intervals_overlap_sum(v) "
                            "WHERE grp = ?", [g]).fetchall()
        for s, e, depth, total in steps:
            for t in range(s, e):
                live = [x for x, y, _, _ in guesses[g] if x <= t < y]
                assert depth == len(live)
                assert total == sum(v or 0 for x, y, v, _ in guesses[g] if x <= t < y)
        clipped = mem.execute("SELECT start_ns, end_ns, value, window_id FROM intervals_clip(v, w) "
                              "WHERE grp = ?", [g]).fetchall()
        want = []
        for s, e, v, _ in guesses[g]:
            for wid, ws, we in windows[g]:
                if s == e and ws <= s < we:
                    want.append((s, s, v, wid))
                elif min(e, we) > max(s, ws):
                    want.append((max(s, ws), min(e, we), v, wid))
        assert sorted(clipped, key=str) == sorted(want, key=str)
    spans = {0: [(1, 10, 12), (2, 5, 20), (3, 30, 31)], 1: [(7, 0, 0)], 2: []}
    load(mem, "spans", spans, "window_id INTEGER, start_ns BIGINT, end_ns BIGINT")
    tiles = mem.execute("SELECT grp, window_id, start_ns, end_ns FROM intervals_tile(spans) "
                        "ORDER BY grp, start_ns").fetchall()
    assert tiles == [(0, 2, 5, 10), (0, 1, 10, 30), (0, 3, 30, 31), (1, 7, 0, 0)]


def test_macros_in_the_plain_duckdb_shell(tmp_path):
    if shutil.which("duckdb") is None:
        pytest.skip("the duckdb shell is not on PATH")
    script = (sql_dir() / "lib" / "intervals.sql").read_text() + """
CREATE TABLE ops AS SELECT * FROM (VALUES (1, 0, 10), (1, 10, 20), (1, 5, 5), (1, 30, 30),
    (1, 40, 50), (1, 40, 50)) t(grp, start_ns, end_ns);
SELECT start_ns, end_ns, intervals_merged FROM intervals_union(ops) ORDER BY start_ns;
"""
    done = subprocess.run(["duckdb", "-csv", "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["start_ns,end_ns,intervals_merged", "0,20,3", "30,30,1", "40,50,2"]


# --- expected values by brute force --------------------------------------------------------------

def span(ops):
    return min(o.start for o in ops), max(o.end for o in ops)


def tiles(ops):
    """Iteration tiles of a rank: [first start of iteration N's ops, first start of the next)."""
    firsts = {}
    ends = {}
    for o in ops:
        if o.iteration is not None:
            firsts[o.iteration] = min(firsts.get(o.iteration, o.start), o.start)
            ends[o.iteration] = max(ends.get(o.iteration, o.end), o.end)
    order = sorted(firsts, key=lambda n: (firsts[n], n))
    return [(n, firsts[n], firsts[order[i + 1]] if i + 1 < len(order) else ends[n])
            for i, n in enumerate(order)]


def breakdown(ops, lo, hi):
    """Compute / exposed comm / exposed memory / other / idle over [lo, hi] by unit cells."""
    window = set(range(lo, hi))
    sets = {k: cells([o.interval for o in ops if LAYER[o.kind] == k]) & window for k in (0, 1, 2)}
    everything = cells([o.interval for o in ops]) & window
    compute = sets[0]
    comm = sets[1] - compute
    mem = sets[2] - compute - sets[1]
    other = everything - compute - sets[1] - sets[2]
    return dict(window_ns=hi - lo, compute_ns=len(compute), exposed_comm_ns=len(comm),
                exposed_mem_ns=len(mem), exposed_other_ns=len(other),
                idle_ns=hi - lo - len(everything))


# --- temporal_breakdown ---------------------------------------------------------------------------

def test_temporal_breakdown_per_rank(con):
    got = rows(con, "temporal_breakdown")
    assert [(r["run_id"], r["rank"], r["iteration"]) for r in got] == [
        ("job", 0, None), ("job", 1, None), ("solo", 0, None)]
    for r in got:
        rank = RANKS[(r["run_id"], r["rank"])]
        lo, hi = span(rank.ops)
        want = breakdown(rank.ops, lo, hi)
        assert {k: r[k] for k in want} == want
        assert (r["window_start_ns"], r["window_end_ns"]) == (BASE + lo, BASE + hi)
        parts = ["compute", "exposed_comm", "exposed_mem", "exposed_other", "idle"]
        assert sum(r[f"{p}_ns"] for p in parts) == r["window_ns"]
        assert sum(r[f"{p}_pct"] for p in parts) == pytest.approx(100)
    # rank 0 by hand: compute 0-20, 30-40, 50-70, 98-104; comm 70-80, 90-95, 110-115 exposed;
    # memory 82-88, 95-97 exposed; sync 104-110 exposed; idle 20-30, 40-50, 80-82, 88-90, 97-98
    assert {k: got[0][k] for k in ("compute_ns", "exposed_comm_ns", "exposed_mem_ns",
                                   "exposed_other_ns", "idle_ns")} == {
        "compute_ns": 56, "exposed_comm_ns": 20, "exposed_mem_ns": 8, "exposed_other_ns": 6,
        "idle_ns": 25}


def test_temporal_breakdown_per_iteration_tiles_the_rank(con):
    got = rows(con, "temporal_breakdown", run="job", per_iteration=True)
    assert [(r["rank"], r["iteration"]) for r in got] == [(0, 1), (0, 2), (0, 3), (1, 1), (1, 2), (1, 3)]
    for r in got:
        rank = RANKS[("job", r["rank"])]
        (n, lo, hi), = [t for t in tiles(rank.ops) if t[0] == r["iteration"]]
        assert (r["window_start_ns"], r["window_end_ns"]) == (BASE + lo, BASE + hi)
        want = breakdown(rank.ops, lo, hi)
        assert {k: r[k] for k in want} == want
    # rank 0's tiles are [0, 50], [50, 100], [100, 115]: the zero-length op with no iteration at
    # 45 is in the first, the copy with no iteration in the second, the kernel 98-104 of
    # iteration 2 is cut at 100
    assert [(r["window_start_ns"] - BASE, r["window_end_ns"] - BASE) for r in got[:3]] == [
        (0, 50), (50, 100), (100, 115)]
    totals = rows(con, "temporal_breakdown", run="job", rank=0)[0]
    for key in ("window_ns", "compute_ns", "exposed_comm_ns", "exposed_mem_ns", "idle_ns"):
        assert sum(r[key] for r in got[:3]) == totals[key]


def test_temporal_breakdown_iteration_range_and_time_window(con):
    kept = rows(con, "temporal_breakdown", run="job", rank=0, iteration_from=2, iteration_to=3)
    assert len(kept) == 1 and kept[0]["iteration"] is None
    want = {k: breakdown(R0.ops, 50, 100)[k] + breakdown(R0.ops, 100, 115)[k]
            for k in ("window_ns", "compute_ns", "exposed_comm_ns", "exposed_mem_ns", "idle_ns")}
    assert {k: kept[0][k] for k in want} == want
    cut = rows(con, "temporal_breakdown", run="job", rank=0, start_ns=BASE + 25, end_ns=BASE + 85)
    want = breakdown(R0.ops, 25, 85)
    assert {k: cut[0][k] for k in want} == want
    assert (cut[0]["window_start_ns"], cut[0]["window_end_ns"]) == (BASE + 25, BASE + 85)


def test_temporal_breakdown_ops_without_a_launch(con):
    """Issue 24: a GPU op whose launch is not in the trace (rank 0's copy at 82-88) counts by
    default, is left out with unlaunched=drop, and with unlaunched=hta when the run has two or
    more profiler steps (job has three), as HolisticTraceAnalysis 0.5.0 does."""
    launched = [o for o in R0.ops if o.launch is not None]
    assert len(launched) == len(R0.ops) - 1
    default = rows(con, "temporal_breakdown", run="job", rank=0)[0]
    assert default["exposed_mem_ns"] == 8 and default["idle_ns"] == 25  # 82-88 and 95-97
    for rule in ("drop", "hta"):
        got = rows(con, "temporal_breakdown", run="job", rank=0, unlaunched=rule)[0]
        want = breakdown(launched, *span(launched))
        assert {k: got[k] for k in want} == want
        assert (got["exposed_mem_ns"], got["idle_ns"]) == (2, 31)  # 95-97 only; 80-90 idle
    # per iteration: the copy had its iteration from its GPU start (none here: it is outside
    # every step's host range); dropping it changes only the tile it lies in
    tiles_keep = rows(con, "temporal_breakdown", run="job", rank=0, per_iteration=True)
    tiles_drop = rows(con, "temporal_breakdown", run="job", rank=0, per_iteration=True,
                      unlaunched="drop")
    changed = [a["iteration"] for a, b in zip(tiles_keep, tiles_drop) if a != b]
    assert changed == [2]
    with pytest.raises(MetricError, match="unlaunched must be keep, drop or hta, not all"):
        rows(con, "temporal_breakdown", unlaunched="all")


def test_comm_comp_overlap_ops_without_a_launch(tmp_path):
    # a comm kernel under compute, launched outside the trace: it counts unless dropped
    ops = [Op("compute", 0, 100, 1, launch=-5), Op("comm", 10, 30, 1, launch=None, stream=20),
           Op("comm", 90, 110, 2, launch=80, stream=20)]
    con = build(tmp_path / "w.duckdb", [Run("r", [Rank("r", 0, "a", ops=ops,
                                                     steps=[(1, -10, 50), (2, 50, 120)])])])
    keep = rows(con, "comm_comp_overlap", rank=0)[0]
    assert (keep["comm_ns"], keep["overlap_ns"]) == (40, 30)
    for rule in ("drop", "hta"):
        got = rows(con, "comm_comp_overlap", rank=0, unlaunched=rule)[0]
        assert (got["comm_ns"], got["overlap_ns"]) == (20, 10)
    # one step: HTA applies no step filter and keeps every op
    one = build(tmp_path / "one.duckdb", [Run("r", [Rank("r", 0, "a", ops=ops, steps=[(1, -10, 120)])])])
    assert rows(one, "comm_comp_overlap", rank=0, unlaunched="hta")[0]["comm_ns"] == 40
    assert rows(one, "comm_comp_overlap", rank=0, unlaunched="drop")[0]["comm_ns"] == 20


# --- comm_comp_overlap and kernel_concurrency ------------------------------------------------------

def comm_and_compute(ops):
    comm = cells([o.interval for o in ops if o.kind == "comm"])
    compute = cells([o.interval for o in ops if o.kind == "compute"])
    return comm, compute


def test_comm_comp_overlap(con):
    got = rows(con, "comm_comp_overlap")
    assert [(r["run_id"], r["rank"]) for r in got] == [
        ("job", 0), ("job", 1), ("job", None), ("solo", 0), ("solo", None)]
    totals = {}
    for r in got:
        if r["rank"] is None:
            comm, overlap = totals[r["run_id"]]
        else:
            c, p = comm_and_compute(RANKS[(r["run_id"], r["rank"])].ops)
            comm, overlap = len(c), len(c & p)
            old = totals.get(r["run_id"], (0, 0))
            totals[r["run_id"]] = (old[0] + comm, old[1] + overlap)
        assert (r["comm_ns"], r["overlap_ns"], r["exposed_comm_ns"]) == (comm, overlap, comm - overlap)
        assert r["overlap_pct"] == pytest.approx(overlap * 100 / comm)
    # rank 0: comm 5-15 (hidden), 60-80 (60-70 hidden), 90-95, 110-115: 10 + 10 of 40
    assert got[0]["overlap_pct"] == pytest.approx(50.0)
    # across ranks: time-weighted, not the mean of 50% and rank 1's share
    assert got[2]["overlap_pct"] == pytest.approx((20 + 8 + 12) * 100 / (40 + 8 + 12 + 4 + 7))


def test_comm_comp_overlap_far_apart_in_time(tmp_path):
    """Milliseconds apart: only compute kernels near communication are looked at, exactly."""
    ms = 1_000_000
    compute = [(0, ms // 2), (9 * ms // 10, 16 * ms // 10), (ms // 5, 12 * ms // 10),
               (24 * ms // 10, 26 * ms // 10), (3 * ms, 35 * ms // 10)]
    comm = [(15 * ms // 10, 25 * ms // 10), (7 * ms, 7 * ms + 10)]
    long = [(-ms, 10 * ms)]                              # spans every bucket of the other ones
    a = Rank("far", 0, "h", ops=[Op("compute", s, e) for s, e in compute + long]
             + [Op("comm", s, e, stream=20) for s, e in comm])
    b = Rank("far", 1, "h", ops=[Op("compute", s, e) for s, e in compute]
             + [Op("comm", s, e, stream=20) for s, e in comm])
    local = build(tmp_path / "far.duckdb", [Run("far", [a, b])])
    got = by(lambda r: r["rank"], rows(local, "comm_comp_overlap"))
    for rank in (a, b):  # by interval arithmetic: millions of unit cells would be slow here
        c = islands([o.interval for o in rank.ops if o.kind == "comm"])
        p = islands([o.interval for o in rank.ops if o.kind == "compute"])
        both = sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1, _ in c for s2, e2, _ in p)
        assert (got[rank.rank]["comm_ns"], got[rank.rank]["overlap_ns"]) == (
            sum(e - s for s, e, _ in c), both)
    assert (got[0]["overlap_ns"], got[1]["overlap_ns"]) == (ms + 10, 2 * ms // 10)


def test_kernel_concurrency(con):
    got = rows(con, "kernel_concurrency", run="job")
    for rank_no in (0, 1):
        kernels = [o for o in RANKS[("job", rank_no)].ops if o.kind in ("compute", "comm", "sync")]
        lo, hi = span(kernels)
        depth = {t: sum(1 for o in kernels if o.start <= t < o.end) for t in range(lo, hi)}
        want = {d: sum(1 for v in depth.values() if v == d) for d in set(depth.values())}
        mine = [r for r in got if r["rank"] == rank_no]
        assert {r["kernels_in_flight"]: r["time_ns"] for r in mine} == want
        assert sum(r["time_pct"] for r in mine) == pytest.approx(100)
        comm, compute = comm_and_compute(kernels)
        assert {(r["window_ns"], r["nccl_ns"], r["nccl_with_compute_ns"]) for r in mine} == {
            (hi - lo, len(comm), len(comm & compute))}
    # rank 0: the identical pair and the sync kernel make 3 in flight at 35-38
    assert max(r["kernels_in_flight"] for r in got if r["rank"] == 0) == 3


# --- idle_gaps and gpu_utilization ------------------------------------------------------------------

def expected_gaps(ops, kernel_wait_ns):
    """Gaps between islands, with the cause read from the first op of the next island."""
    found = []
    merged = islands([o.interval for o in ops])
    for (s0, e0, _), (s1, _, _) in zip(merged, merged[1:]):
        first = min((o for o in ops if o.start == s1), key=lambda o: (o.start, o.end))
        firsts = [o for o in ops if (o.start, o.end) == (first.start, first.end)]
        launch = min((o.launch for o in firsts if o.launch is not None), default=None)
        if launch is not None and launch > e0:
            cause = "host wait"
        elif launch is not None and s1 - e0 < kernel_wait_ns:
            cause = "kernel wait"
        else:
            cause = "other"
        found.append((cause, s1 - e0))
    return found


def test_idle_gaps_causes_and_sizes(con):
    for threshold in (30000, 3):
        got = rows(con, "idle_gaps", run="job", rank=0, kernel_wait_ns=threshold)
        want = {}
        for cause, size in expected_gaps(R0.ops, threshold):
            want.setdefault(cause, []).append(size)
        assert {r["cause"]: (r["gaps"], r["total_ns"], r["min_ns"], r["max_ns"]) for r in got} == {
            c: (len(v), sum(v), min(v), max(v)) for c, v in want.items()}
        assert {r["size_bucket"] for r in got} == {"<1us"}
        assert sum(r["share_of_idle_pct"] for r in got) == pytest.approx(100)
    # by hand: islands 0-20, 30-40, 45-45, 50-80, 82-88, 90-97, 98-115
    assert expected_gaps(R0.ops, 30000) == [("host wait", 10), ("host wait", 5), ("kernel wait", 5),
                                             ("other", 2), ("host wait", 2), ("kernel wait", 1)]
    total = sum(r["total_ns"] for r in rows(con, "idle_gaps", run="job", rank=0))
    assert total == rows(con, "temporal_breakdown", run="job", rank=0)[0]["idle_ns"]


@pytest.mark.parametrize("window", [(10, None), (20, None), (25, None), (44, 90), (None, 45),
                                    (46, 81), (0, 115)])
def test_idle_gaps_in_a_time_window(con, window):
    # ops cut to [start_ns, end_ns] first (kept when they overlap it, bounds included): a gap
    # before the first island in the window is not counted, an op ending right at start_ns is
    # a zero-length island there
    lo, hi = window
    cut = [Op(o.kind, o.start if lo is None else max(o.start, lo),
              o.end if hi is None else min(o.end, hi), launch=o.launch)
           for o in R0.ops if (lo is None or o.end >= lo) and (hi is None or o.start <= hi)]
    params = {k: BASE + v for k, v in (("start_ns", lo), ("end_ns", hi)) if v is not None}
    got = rows(con, "idle_gaps", run="job", rank=0, **params)
    want = {}
    for cause, size in expected_gaps(cut, 30000):
        want.setdefault(cause, []).append(size)
    assert {r["cause"]: (r["gaps"], r["total_ns"]) for r in got} == {
        c: (len(v), sum(v)) for c, v in want.items()}


def test_idle_gaps_size_buckets(con, tmp_path):
    ops = [Op("compute", 0, 1, launch=0)]
    for gap in (500, 5_000, 50_000, 500_000, 5_000_000, 50_000_000):
        start = ops[-1].end + gap
        # launched exactly when the GPU went idle: not a host wait (HTA: launch after the end)
        ops.append(Op("compute", start, start + 1, launch=ops[-1].end))
    local = build(tmp_path / "b.duckdb", [Run("gaps", [Rank("gaps", 0, "h", ops=ops)])])
    got = rows(local, "idle_gaps")
    assert [(r["size_bucket"], r["gaps"], r["cause"]) for r in got] == [
        ("<1us", 1, "kernel wait"), ("1-10us", 1, "kernel wait"), ("10-100us", 1, "other"),
        ("100us-1ms", 1, "other"), ("1-10ms", 1, "other"), (">=10ms", 1, "other")]


def test_gpu_utilization_bins(con):
    bins = 7
    got = rows(con, "gpu_utilization", run="job", rank=0, bins=bins, threshold=60)
    lo, hi = span(R0.ops)
    length = hi - lo
    busy = cells([o.interval for o in R0.ops])
    edges = [lo - (-(k * length) // bins) for k in range(bins + 1)]  # lo + ceil(k L / n)
    assert [(r["bin"], r["bin_start_ns"] - BASE, r["bin_end_ns"] - BASE) for r in got] == [
        (k, edges[k], edges[k + 1]) for k in range(bins)]
    for r in got:
        inside = len(busy & set(range(r["bin_start_ns"] - BASE, r["bin_end_ns"] - BASE)))
        assert r["busy_ns"] == inside
        assert r["busy_pct"] == pytest.approx(inside * 100 / (r["bin_end_ns"] - r["bin_start_ns"]))
        assert r["low_utilization"] == (r["busy_pct"] < 60)
    assert sum(r["busy_ns"] for r in got) == len(busy)


# --- host-side summaries --------------------------------------------------------------------------

def test_cuda_api_summary(con):
    got = rows(con, "cuda_api_summary", run="job", rank=0)
    calls = {}
    for o in R0.ops:
        if o.launch is not None:
            name = "cudaMemcpyAsync" if o.kind in ("memcpy", "memset") else "cudaLaunchKernel"
            calls.setdefault(name, []).append(1)
    for name, start, end in R0.api:
        calls.setdefault(name, []).append(end - start)
    grand = sum(sum(v) for v in calls.values())
    assert [r["name"] for r in got] == sorted(calls, key=lambda n: (-sum(calls[n]), n))
    for r in got:
        s = stats(calls[r["name"]])
        assert (r["total_ns"], r["num_calls"], r["min_ns"], r["max_ns"]) == (s["total"], s["n"], s["min"], s["max"])
        assert (r["avg_ns"], r["med_ns"], r["stddev_ns"]) == pytest.approx((s["avg"], s["med"], s["std"]))
        assert r["time_pct"] == pytest.approx(s["total"] * 100 / grand)
    windowed = rows(con, "cuda_api_summary", run="job", rank=0, start_ns=BASE + 100, end_ns=BASE + 200)
    # bounds included: the launch call [99, 100] touches the window start
    assert {r["name"]: r["num_calls"] for r in windowed} == {"cudaStreamSynchronize": 1,
                                                             "cudaLaunchKernel": 2}


def test_nvtx_summary(con):
    got = rows(con, "nvtx_summary", run="job", rank=0)
    ranges = {}
    for n, start, end in R0.steps:
        ranges.setdefault((f":ProfilerStep#{n}", "PushPop"), []).append(end - start)
    for name, start, end, domain, kind in R0.ranges:
        if end is not None and kind in ("push_pop", "start_end"):
            style = "PushPop" if kind == "push_pop" else "StartEnd"
            ranges.setdefault((f"{domain or ''}:{name}", style), []).append(end - start)
    grand = sum(sum(v) for v in ranges.values())
    assert {(r["range"], r["style"]) for r in got} == set(ranges)
    for r in got:
        s = stats(ranges[(r["range"], r["style"])])
        assert (r["total_ns"], r["instances"], r["min_ns"], r["max_ns"]) == (s["total"], s["n"], s["min"], s["max"])
        assert (r["med_ns"], r["stddev_ns"]) == pytest.approx((s["med"], s["std"]))
        assert r["time_pct"] == pytest.approx(s["total"] * 100 / grand)
    assert [(r["range"], r["instances"], r["total_ns"]) for r in
            rows(con, "nvtx_summary", run="job", rank=0, nvtx="^forward$")] == [(":forward", 3, 41)]


def test_gpu_mem_summary(con):
    got = rows(con, "gpu_mem_summary", run="job", rank=0)
    ops = {}
    for o in R0.ops:
        if o.kind == "memcpy":
            ops.setdefault(f"[CUDA memcpy {'Host-to-Device' if o.name is None else 'Device-to-Host'}]", []).append(o)
        elif o.kind == "memset":
            ops.setdefault("[CUDA memset]", []).append(o)
    grand = sum(o.end - o.start for v in ops.values() for o in v)
    assert {r["operation"] for r in got} == set(ops)
    for r in got:
        t = stats([o.end - o.start for o in ops[r["operation"]]])
        b = stats([o.bytes for o in ops[r["operation"]]])
        assert (r["count"], r["total_ns"], r["min_ns"], r["max_ns"]) == (t["n"], t["total"], t["min"], t["max"])
        assert (r["total_bytes"], r["min_bytes"], r["max_bytes"]) == (b["total"], b["min"], b["max"])
        assert (r["med_ns"], r["stddev_ns"], r["med_bytes"], r["stddev_bytes"]) == pytest.approx(
            (t["med"], t["std"], b["med"], b["std"]))
        assert r["time_pct"] == pytest.approx(t["total"] * 100 / grand)


def _gpu_op_names(o) -> tuple[str, str]:
    """(category, operation) of a fixture op, as nsys' cuda_gpu_sum names them."""
    if o.kind == "memcpy":
        kind = "Host-to-Device" if o.name is None else "Device-to-Host"
        return "MEMORY_OPER", f"[CUDA memcpy {kind}]"
    if o.kind == "memset":
        return "MEMORY_OPER", "[CUDA memset]"
    return "CUDA_KERNEL", o.name or NAMES[o.kind]


def test_cuda_gpu_sum(con):
    got = rows(con, "cuda_gpu_sum", run="job", rank=0)
    ops = {}
    for o in R0.ops:
        ops.setdefault(_gpu_op_names(o), []).append(o.end - o.start)
    grand = sum(sum(v) for v in ops.values())
    assert [(r["category"], r["operation"]) for r in got] == sorted(
        ops, key=lambda k: (-sum(ops[k]), k))
    for r in got:
        s = stats(ops[(r["category"], r["operation"])])
        assert (r["total_ns"], r["instances"], r["min_ns"], r["max_ns"]) == (s["total"], s["n"], s["min"], s["max"])
        assert (r["avg_ns"], r["med_ns"], r["stddev_ns"]) == pytest.approx((s["avg"], s["med"], s["std"]))
        assert r["time_pct"] == pytest.approx(s["total"] * 100 / grand)
    # a UTC window keeps the ops that overlap it, bounds included: [95, 97] and [96, 96] touch 96
    windowed = rows(con, "cuda_gpu_sum", run="job", rank=0, start_ns=BASE + 96, end_ns=BASE + 96)
    assert {r["operation"]: r["instances"] for r in windowed} == {"[CUDA memset]": 2}


def test_cuda_gpu_kern_gb_sum(con):
    # the fixture's kernels have no launch configuration: one group per name, NULL dimensions
    got = rows(con, "cuda_gpu_kern_gb_sum", run="job", rank=0)
    kernels = {}
    for o in R0.ops:
        if o.kind in NAMES:
            kernels.setdefault(o.name or NAMES[o.kind], []).append(o.end - o.start)
    grand = sum(sum(v) for v in kernels.values())
    assert {r["name"] for r in got} == set(kernels)
    for r in got:
        s = stats(kernels[r["name"]])
        assert (r["total_ns"], r["instances"], r["min_ns"], r["max_ns"]) == (s["total"], s["n"], s["min"], s["max"])
        assert (r["med_ns"], r["stddev_ns"]) == pytest.approx((s["med"], s["std"]))
        assert r["time_pct"] == pytest.approx(s["total"] * 100 / grand)
        assert (r["grid_x"], r["block_z"], r["grid_xyz"]) == (None, None, None)
    order = [(-r["total_ns"], r["instances"], r["name"]) for r in got]
    assert order == sorted(order)


def test_nccl_sum(con):
    # only the range in the NCCL domain; its ProfilerStep and forward neighbours are not NCCL's
    got = rows(con, "nccl_sum", run="job")
    want = {(rank.rank, name, end - start) for rank in (R0, R1) for name, start, end, domain, kind
            in rank.ranges if domain == "NCCL" and end is not None}
    assert {(r["rank"], r["name"], r["total_ns"]) for r in got} == want
    assert all((r["instances"], r["style"], r["time_pct"]) == (1, "PushPop", 100.0) for r in got)
    assert rows(con, "nccl_sum", run="job", start_ns=BASE + 7) == []


# --- collectives across ranks -------------------------------------------------------------------

def test_clock_offsets_and_clock_skew(con):
    offsets = con.execute("SELECT run_id, rank, reference_rank, offset_ns, matched_ops, mad_ns, method "
                          "FROM clock_offsets ORDER BY run_id, rank").fetchall()
    # rank 1 ends its collectives 7, 7 and 8 ns after rank 0 (the Send/Recv pair is not used)
    assert offsets == [("job", 0, 0, 0, 3, 0, "reference host"),
                       ("job", 1, 0, 7, 3, 0, "collective ends"),
                       ("solo", 0, 0, 0, 1, 0, "reference host")]
    skew = rows(con, "clock_skew", run="job")
    assert [(r["rank"], r["offset_ns"], r["offset_range_ns"], r["hosts"]) for r in skew] == [
        (0, 0, 7, 2), (1, 7, 7, 2)]


def test_ranks_on_one_host_share_the_reference_clock(tmp_path):
    one = Rank("host", 0, "n", nccl=[Nccl("AllReduce", 0, 10, "AllReduce:1")], ops=[Op("comm", 0, 10)])
    two = Rank("host", 1, "n", nccl=[Nccl("AllReduce", 0, 13, "AllReduce:1")], ops=[Op("comm", 0, 13)])
    far = Rank("host", 2, "m", nccl=[Nccl("AllReduce", 0, 15, "AllReduce:1")], ops=[Op("comm", 0, 15)])
    alone = Rank("host", 3, None, nccl=[Nccl("Send", 0, 15, "Send:1")], ops=[Op("comm", 0, 15)])
    local = build(tmp_path / "h.duckdb", [Run("host", [one, two, far, alone])])
    got = local.execute("SELECT rank, offset_ns, method FROM clock_offsets ORDER BY rank").fetchall()
    assert got == [(0, 0, "reference host"), (1, 0, "reference host"), (2, 5, "collective ends"),
                   (3, 0, "none")]


def test_collective_counts(con):
    got = rows(con, "collective_counts", run="job")
    per_rank = {(r["rank"], r["collective"]): (r["calls"], r["iterations"], r["calls_per_iteration"],
                                               r["total_bytes"], r["total_ns"], r["ranks"])
                for r in got}
    assert per_rank == {
        (0, "AllGather"): (1, 3, pytest.approx(1 / 3), 64 * MIB, 5, None),
        (0, "AllReduce"): (2, 3, pytest.approx(2 / 3), 1024, 30, None),
        (0, "Send"): (1, 3, pytest.approx(1 / 3), 128, 5, None),
        (1, "AllGather"): (1, 3, pytest.approx(1 / 3), 64 * MIB, 4, None),
        (1, "AllReduce"): (2, 3, pytest.approx(2 / 3), 1024, 20, None),
        (1, "Recv"): (1, 3, pytest.approx(1 / 3), 128, 7, None),
        (None, "AllGather"): (1, None, None, None, None, 2),
        (None, "AllReduce"): (2, None, None, None, None, 2),
        (None, "Recv"): (1, None, None, None, None, 1),
        (None, "Send"): (1, None, None, None, None, 1),
    }


def bus_factor(collective, n):
    if collective == "AllReduce":
        return 2 * (n - 1) / n
    return (n - 1) / n if collective in ("AllGather", "ReduceScatter", "AllToAll") else 1.0


def matched_collectives():
    """Per collective of run job: collective, ranks, n, full_bytes, t, aligned start and end."""
    units = {}
    for key in (("job", 0), ("job", 1)):
        for op in RANKS[key].nccl:
            unit = op.op_key + (f"@{key[1]}" if op.collective in ("Send", "Recv") else "")
            units.setdefault(unit, []).append((key, op))
    out = {}
    for unit, members in units.items():
        ops = [op for _, op in members]
        n = max((op.group_size for op in ops if op.group_size), default=len(members))
        sizes = [op.full_bytes for op in ops if op.full_bytes is not None]
        out[unit] = dict(collective=ops[0].collective, ranks=len(members), n=n,
                         full_bytes=max(sizes) if sizes else None,
                         t_ns=min(op.end - op.start for op in ops),
                         start_ns=BASE + min(op.start - OFFSET[k] for k, op in members),
                         end_ns=BASE + max(op.end - OFFSET[k] for k, op in members))
    return out


def test_collective_bandwidth(con):
    got = by(lambda r: r["op_key"], rows(con, "collective_bandwidth", run="job"))
    want = matched_collectives()
    assert set(got) == set(want) == {"AllReduce:1", "AllReduce:2", "AllGather:1", "Send:1@0", "Recv:1@1"}
    for key, w in want.items():
        r = got[key]
        assert {k: r[k] for k in w} == w
        if w["full_bytes"] is None:
            assert r["algbw_gbps"] is None and r["busbw_gbps"] is None and "full_bytes is NULL" in r["note"]
        else:
            assert r["algbw_gbps"] == pytest.approx(w["full_bytes"] / w["t_ns"])
            assert r["busbw_gbps"] == pytest.approx(w["full_bytes"] / w["t_ns"] * bus_factor(w["collective"], w["n"]))
    assert got["AllReduce:1"]["busbw_gbps"] == pytest.approx(1024 / 8)   # 2(n-1)/n = 1 at n = 2
    assert got["AllGather:1"]["busbw_gbps"] == pytest.approx(64 * MIB / 4 / 2)
    assert got["Send:1@0"]["note"] is None
    solo = rows(con, "collective_bandwidth", run="solo")
    assert [(r["n"], r["busbw_gbps"]) for r in solo] == [(1, 0.0)]     # one rank moves nothing


def test_traffic_distribution(con):
    got = rows(con, "traffic_distribution", run="job")
    assert [(r["collective"], r["size_bucket"], r["collectives"], r["total_bytes"], r["total_ns"])
            for r in got] == [
        ("AllGather", ">=32M", 1, 64 * MIB, 4),
        ("AllReduce", "1K-8K", 1, 1024, 8),
        ("AllReduce", "unknown", 1, None, 12),
        ("Recv", "128B-1K", 1, 128, 7),
        ("Send", "128B-1K", 1, 128, 5),
    ]
    by_key = {(r["collective"], r["size_bucket"]): r for r in got}
    assert by_key[("AllReduce", "1K-8K")]["busbw_p50_gbps"] == pytest.approx(128.0)
    assert by_key[("AllReduce", "unknown")]["busbw_p50_gbps"] is None
    assert "full_bytes is NULL" in by_key[("AllReduce", "unknown")]["note"]


def test_traffic_distribution_percentiles(tmp_path):
    sizes = [100, 100, 100, 100]
    durations = [10, 20, 40, 50]
    nccl = [Nccl("Broadcast", 0, d, f"Broadcast:{i}", full_bytes=s)
            for i, (s, d) in enumerate(zip(sizes, durations))]
    local = build(tmp_path / "p.duckdb", [Run("p", [Rank("p", 0, "h", nccl=nccl)])])
    (r,) = rows(local, "traffic_distribution")
    busbw = [s / d for s, d in zip(sizes, durations)]
    assert (r["size_bucket"], r["collectives"]) == ("<128B", 4)
    assert (r["busbw_p10_gbps"], r["busbw_p50_gbps"], r["busbw_p90_gbps"]) == pytest.approx(
        (quantile(busbw, 0.1), quantile(busbw, 0.5), quantile(busbw, 0.9)))


def test_straggler(con):
    got = rows(con, "straggler", run="job")
    starts = {}
    for key in (("job", 0), ("job", 1)):
        for op in RANKS[key].nccl:
            if op.collective not in ("Send", "Recv"):
                starts.setdefault(op.op_key, {})[key[1]] = (op.start - OFFSET[key], op.end - OFFSET[key])
    waits = {0: [], 1: []}
    last = {0: 0, 1: 0}
    for per in starts.values():
        latest = max(s for s, _ in per.values())
        for rank_no, (s, _) in per.items():
            waits[rank_no].append(latest - s)
            last[rank_no] += s == latest
    start_skews = [max(s for s, _ in p.values()) - min(s for s, _ in p.values()) for p in starts.values()]
    end_skews = [max(e for _, e in p.values()) - min(e for _, e in p.values()) for p in starts.values()]
    assert [(r["rank"], r["collectives"], r["total_wait_ns"], r["is_straggler"]) for r in got] == [
        (0, 3, sum(waits[0]), False), (1, 3, sum(waits[1]), True)]
    for r in got:
        assert r["mean_wait_ns"] == pytest.approx(statistics.mean(waits[r["rank"]]))
        assert r["arrived_last_pct"] == pytest.approx(last[r["rank"]] * 100 / 3)
        assert (r["median_start_skew_ns"], r["max_start_skew_ns"], r["median_end_skew_ns"]) == (
            statistics.median(start_skews), max(start_skews), statistics.median(end_skews))
    assert waits == {0: [2, 8, 2], 1: [0, 0, 0]}   # rank 1 always arrives last (aligned clock)


def test_straggler_ops(con):
    ops = {}
    for key in (("job", 0), ("job", 1)):
        for op in RANKS[key].nccl:
            if op.collective not in ("Send", "Recv"):
                ops.setdefault(op.op_key, {})[key[1]] = (op, op.start - OFFSET[key], op.end - OFFSET[key])
    expected = []
    for op_key, per in ops.items():
        latest = max(s for _, s, _ in per.values())
        for rank_no, (op, s, _) in sorted(per.items()):
            expected.append((latest, op_key, rank_no, op.collective, BASE + op.start, latest - s,
                             s == latest, latest - min(x for _, x, _ in per.values()),
                             max(e for _, _, e in per.values()) - min(e for _, _, e in per.values()), 2))
    got = rows(con, "straggler_ops", run="job")
    assert [(r["op_key"], r["rank"], r["collective"], r["start_ns"], r["wait_ns"], r["arrived_last"],
             r["start_skew_ns"], r["end_skew_ns"], r["ranks"]) for r in got] == [
        e[1:] for e in sorted(expected, key=lambda e: (e[0], e[1], e[2]))]
    # summed per rank they are the straggler metric's totals
    totals = {r["rank"]: r["total_wait_ns"] for r in rows(con, "straggler", run="job")}
    assert totals == {k: sum(r["wait_ns"] for r in got if r["rank"] == k) for k in (0, 1)}
    assert [r["rank"] for r in rows(con, "straggler_ops", run="job", rank=1)] == [1, 1, 1]


# --- iterations, throughput, phases -------------------------------------------------------------------

def kept_steps(key, include=False):
    steps = RANKS[key].steps
    numbers = [n for n, _, _ in steps]
    return [(n, s, e) for n, s, e in steps
            if e is not None and (include or n not in (min(numbers), max(numbers)))]


def test_iteration_time(con):
    for include in (False, True):
        got = by(lambda r: r["rank"], rows(con, "iteration_time", run="job", include_first_last=include))
        across = {}
        for rank_no in (0, 1):
            durations = [e - s for _, s, e in kept_steps(("job", rank_no), include)]
            r = got[rank_no]
            assert (r["iterations"], r["min_ns"], r["max_ns"]) == (len(durations), min(durations), max(durations))
            assert (r["median_ns"], r["p90_ns"], r["mean_ns"]) == pytest.approx(
                (statistics.median(durations), quantile(durations, 0.9), statistics.mean(durations)))
            for n, s, e in kept_steps(("job", rank_no), include):
                lo, hi = across.get(n, (s - OFFSET[("job", rank_no)], e - OFFSET[("job", rank_no)]))
                across[n] = (min(lo, s - OFFSET[("job", rank_no)]), max(hi, e - OFFSET[("job", rank_no)]))
        durations = [hi - lo for lo, hi in across.values()]
        assert got[None]["iterations"] == len(durations)
        assert (got[None]["median_ns"], got[None]["p90_ns"]) == pytest.approx(
            (statistics.median(durations), quantile(durations, 0.9)))
    per = rows(con, "iteration_time", run="job", per_iteration=True)
    assert [(r["rank"], r["iteration"], r["dur_ns"]) for r in per] == [(0, 2, 49), (1, 2, 66), (None, 2, 66)]


def test_iteration_time_from_an_nvtx_pattern(con):
    got = rows(con, "iteration_time", run="job", rank=0, step_pattern="^forward$", include_first_last=True)
    assert [(r["rank"], r["iterations"], r["median_ns"]) for r in got] == [(0, 3, 20.0), (None, 3, 20.0)]


def test_throughput(con):
    got = by(lambda r: r["run_id"], rows(con, "throughput"))
    assert got["job"]["median_iteration_ns"] == 66
    assert got["job"]["tokens_per_s"] == pytest.approx(8 * 1024 * 1e9 / 66)
    assert got["job"]["samples_per_s"] == pytest.approx(8 * 1e9 / 66)
    assert got["job"]["reason"] is None
    assert got["solo"]["tokens_per_s"] is None and got["solo"]["median_iteration_ns"] == 51
    assert "batch_size" in got["solo"]["reason"]


def test_nvtx_phases(con):
    got = rows(con, "nvtx_phases", run="job", rank=0)
    assert [(r["iteration"], r["phase"], r["instances"], r["total_ns"], r["start_ns"] - BASE,
             r["end_ns"] - BASE) for r in got] == [
        (1, "forward", 1, 20, 0, 20),
        (1, "backward", 1, 24, 21, 45),
        (1, "DeepSpeedEngine._take_model_step", 1, 1, 46, 47),
        (2, "forward", 2, 21, 50, 72),
        (2, "backward", 1, 23, 73, 96),
    ]
    assert got[0]["share_pct"] == pytest.approx(20 * 100 / 58)
    only = rows(con, "nvtx_phases", run="job", phases="^backward$", iteration_from=2)
    assert [(r["rank"], r["iteration"], r["total_ns"]) for r in only] == [(0, 2, 23), (1, 2, 50)]


# --- pipeline_bubble and scaling ---------------------------------------------------------------------

def test_pipeline_bubble(con):
    got = rows(con, "pipeline_bubble", run="job", microbatches=4)
    total_bubble = total_window = 0
    for r in got:
        rank = RANKS[("job", r["rank"])]
        p2p = [Op("p2p", n.start, n.end, n.iteration) for n in rank.nccl if n.collective in ("Send", "Recv")]
        ops = rank.ops + p2p
        (n, lo, hi), = [t for t in tiles(ops) if t[0] == r["iteration"]]
        window = set(range(lo, hi))
        compute = cells([o.interval for o in ops if o.kind == "compute"]) & window
        sends = cells([o.interval for o in p2p]) & window
        comm = cells([o.interval for o in ops if o.kind == "comm"]) & window
        busy = cells([o.interval for o in ops]) & window
        assert (r["window_ns"], r["compute_ns"], r["bubble_ns"], r["exposed_p2p_ns"],
                r["exposed_other_comm_ns"], r["idle_ns"]) == (
            hi - lo, len(compute), hi - lo - len(compute), len(sends - compute),
            len(comm - compute - sends), hi - lo - len(busy))
        total_bubble += hi - lo - len(compute)
        total_window += hi - lo
    for r in got:
        assert r["run_bubble_pct"] == pytest.approx(total_bubble * 100 / total_window)
        assert (r["stages"], r["microbatches"], r["note"]) == (2, 4, None)   # pp from the card
        assert r["ideal_bubble_pct"] == pytest.approx(100 * 1 / 5)
    solo = rows(con, "pipeline_bubble", run="solo")
    assert {r["note"] for r in solo} == {
        "no pipeline stages known (no pp given, in the workload card or seen in the trace): if this"
        " is no pipeline run, bubble_pct is only GPU time without compute; else pass stages and microbatches"}


def test_scaling_sentence(con):
    got = rows(con, "scaling")
    assert [(r["run_id"], r["label"], r["world_size"], r["baseline_run"]) for r in got] == [
        ("solo", "1 node", 1, "solo"), ("job", "2 nodes", 2, "solo")]
    shares = {}
    for r in got:
        ranks = [rank for key, rank in RANKS.items() if key[0] == r["run_id"]]
        parts = [breakdown(rank.ops, *span(rank.ops)) for rank in ranks]
        window = sum(p["window_ns"] for p in parts)
        for part in ("compute", "exposed_comm", "exposed_mem", "exposed_other", "idle"):
            assert r[f"{part}_pct"] == pytest.approx(sum(p[f"{part}_ns"] for p in parts) * 100 / window)
        shares[r["run_id"]] = {"window": window, "parts": parts}
    solo, job = got
    # solo: compute 0-40 and 60-100, AllReduce 30-70: 20 of 100 ns exposed, the largest part
    assert (solo["bottleneck"], solo["bottleneck_pct"]) == ("exposed NCCL AllReduce", pytest.approx(20.0))
    assert solo["sentence"] == ("At 1 node, 20% of the step time is spent in gradient synchronization "
                               "(exposed NCCL AllReduce)")
    # job: idle is its largest part (rank 0 idle 25 of 115, rank 1 idle 10+1+... of 118)
    idle = sum(p["idle_ns"] for p in shares["job"]["parts"]) * 100 / shares["job"]["window"]
    assert (job["bottleneck"], job["bottleneck_pct"]) == ("idle GPU time", pytest.approx(idle))
    assert job["sentence"] == f"At 2 nodes, {round(idle)}% of the step time is idle GPU time, up from 0% at 1 node"
    assert job["step_ns"] == 66 and solo["step_ns"] == 51


def test_scaling_exposed_time_per_collective(con):
    (job,) = [r for r in rows(con, "scaling", runs="job")]
    exposed = {}
    for rank in (R0, R1):
        comm, compute = comm_and_compute(rank.ops)
        per = {}
        for n in rank.nccl:
            per.setdefault(n.collective, set()).update(cells([(n.start, n.end)]) & (comm - compute))
        for k, v in per.items():
            if v:
                exposed[k] = exposed.get(k, 0) + len(v)
    window = sum(span(r.ops)[1] - span(r.ops)[0] for r in (R0, R1))
    text = ", ".join(f"{k} {v * 100 / window:.1f}%" for k, v in
                     sorted(exposed.items(), key=lambda kv: (-kv[1], kv[0])))
    assert job["exposed_by_collective"] == text
    assert job["baseline_run"] == "job" and job["baseline_pct"] is None
    assert "up from" not in job["sentence"]


# --- every metric: empty warehouse, the generator's truth, real exports --------------------------------

ALL_METRICS = [m.name for m in list_metrics()]


def test_every_metric_on_an_empty_warehouse(tmp_path):
    empty = tracewh.connect(tmp_path / "empty.duckdb")
    for name in ALL_METRICS:
        assert rows(empty, name) == [], name


RULE_VALUES = {"unlaunched": "drop", "kernel_time": "subtree", "peaks": "tracelens",
               "memset": "memory", "comm": "tracelens", "split_unit": "element"}


def test_every_metric_with_every_filter_set(con):
    """Parameters that select nothing give empty results, never errors."""
    for metric in list_metrics():
        params = {}
        for p in metric.params:
            params[p.name] = {"text": "nothing-matches", "int": "987654", "float": "1.5",
                              "bool": "true"}[p.type]
        if "window" in params:
            params["window"] = "1h/2h"
        # rules, not filters: other text is an error
        params.update({name: value for name, value in RULE_VALUES.items() if name in params})
        if metric.name in ("critical_path", "what_if"):  # rules too: rows, ranks joined or not
            params.update(ranks="all", **({"per": "class"} if metric.name == "critical_path"
                                          else {"scenario": "comm_x"}))
        if metric.name == "alltoall_pairs":  # per is a rule there: rows per collective or pair
            params.update(per="pair")
        run_metric(con, metric, params)


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    """A 4-rank generated job: exact kernels, NCCL ops and iterations per rank."""
    out = tmp_path_factory.mktemp("truth")
    truth = generate_job(out / "traces", JobSpec(world_size=4, iterations=4, layers=3, seed=11))
    connection = tracewh.connect(out / "wh.duckdb")
    results = ingest_paths(connection, [out / "traces"])
    assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    yield connection, truth
    connection.close()


def union_length(intervals):
    return sum(e - s for s, e, _ in islands(intervals))


def test_comm_comp_overlap_equals_generator_truth(job):
    con, truth = job
    got = by(lambda r: r["rank"], rows(con, "comm_comp_overlap"))
    for rank_no in range(4):
        comm = [(k.start_ns, k.end_ns) for k in truth.kernels[rank_no] if k.kind == "comm"]
        assert got[rank_no]["overlap_ns"] == truth.comm_overlap_ns[rank_no]
        assert got[rank_no]["comm_ns"] == union_length(comm)
    assert got[None]["overlap_ns"] == sum(truth.comm_overlap_ns.values())
    concurrency = rows(con, "kernel_concurrency")
    for rank_no in range(4):
        assert {r["nccl_with_compute_ns"] for r in concurrency if r["rank"] == rank_no} == {
            truth.comm_overlap_ns[rank_no]}


def test_temporal_breakdown_equals_generator_truth(job):
    con, truth = job
    got = by(lambda r: r["rank"], rows(con, "temporal_breakdown"))
    for rank_no in range(4):
        kernels = truth.kernels[rank_no]
        compute = union_length([(k.start_ns, k.end_ns) for k in kernels if k.kind == "compute"])
        comm = union_length([(k.start_ns, k.end_ns) for k in kernels if k.kind == "comm"])
        r = got[rank_no]
        assert r["compute_ns"] == compute
        assert r["exposed_comm_ns"] == comm - truth.comm_overlap_ns[rank_no]
        assert r["window_start_ns"] <= min(k.start_ns for k in kernels)
        assert r["window_end_ns"] >= max(k.end_ns for k in kernels)
        total = sum(r[k] for k in ("compute_ns", "exposed_comm_ns", "exposed_mem_ns",
                                   "exposed_other_ns", "idle_ns"))
        assert total == r["window_ns"]
    per_iteration = rows(con, "temporal_breakdown", per_iteration=True)
    for rank_no in range(4):
        mine = [r for r in per_iteration if r["rank"] == rank_no]
        assert [r["iteration"] for r in mine] == [n for n, _, _ in truth.iterations[rank_no]]
        assert sum(r["compute_ns"] for r in mine) == got[rank_no]["compute_ns"]


def test_iterations_and_collectives_equal_generator_truth(job):
    con, truth = job
    times = by(lambda r: r["rank"], rows(con, "iteration_time"))
    for rank_no in range(4):
        durations = [e - s for _, s, e in truth.iterations[rank_no][1:-1]]
        assert times[rank_no]["median_ns"] == pytest.approx(statistics.median(durations))
    counts = rows(con, "collective_counts")
    for rank_no in range(4):
        want = {}
        for op in truth.nccl_ops[rank_no]:
            want[op.collective] = want.get(op.collective, 0) + 1
        assert {r["collective"]: r["calls"] for r in counts if r["rank"] == rank_no} == want
    offsets = con.execute("SELECT rank, offset_ns FROM clock_offsets ORDER BY rank").fetchall()
    assert offsets[0] == (0, 0) and all(abs(o) < 5_000 for _, o in offsets)  # one job clock
    bandwidth = rows(con, "collective_bandwidth")
    assert bandwidth and all(r["busbw_gbps"] is None and "full_bytes is NULL" in r["note"]
                             for r in bandwidth)
    straggler = by(lambda r: r["rank"], rows(con, "straggler"))
    offset = dict(offsets)
    starts = {}
    for rank_no in range(4):
        for n, op in enumerate(o for o in truth.nccl_ops[rank_no] if o.collective == "AllReduce"):
            starts.setdefault(n, {})[rank_no] = op.start_ns - offset[rank_no]
    for rank_no in range(4):
        wait = sum(max(per.values()) - per[rank_no] for per in starts.values())
        assert straggler[rank_no]["total_wait_ns"] == wait


REAL_EXPORTS = ["nsys-2021/report1.sqlite", "nsys-2024.1/report1.sqlite", "nsys-ai/mock.sqlite",
                "nsys-ai/h100_2gpu_1s.sqlite", "nsys-ai/mfu_2gpu_before.sqlite"]


@pytest.fixture(scope="module")
def real(shared_data, tmp_path_factory):
    connection = tracewh.connect(tmp_path_factory.mktemp("real") / "wh.duckdb")
    for name in REAL_EXPORTS:
        results = ingest_paths(connection, [shared_data / "nsys" / name], run=name)
        assert [r.status for r in results] == ["ingested"], results[0].message
    yield connection
    connection.close()


@pytest.mark.parametrize("name", ALL_METRICS)
def test_every_metric_runs_on_the_real_nsys_exports(real, name):
    table = run_metric(real, find_metric(name), {})
    assert table.num_rows >= 0
    for run in REAL_EXPORTS:
        run_metric(real, find_metric(name), {"run": run} if any(
            p.name == "run" for p in find_metric(name).params) else {})


def test_real_two_rank_export_answers(real):
    """mfu_2gpu_before: 2 ranks, NCCL SendRecv kernels; breakdown parts add up on real data."""
    run = "nsys-ai/mfu_2gpu_before.sqlite"
    got = rows(real, "temporal_breakdown", run=run)
    assert [r["rank"] for r in got] == [0, 1]
    for r in got:
        assert sum(r[k] for k in ("compute_ns", "exposed_comm_ns", "exposed_mem_ns",
                                  "exposed_other_ns", "idle_ns")) == r["window_ns"]
    overlap = by(lambda r: r["rank"], rows(real, "comm_comp_overlap", run=run))
    for r in got:
        assert r["exposed_comm_ns"] == overlap[r["rank"]]["exposed_comm_ns"]
    idle = sum(r["total_ns"] for r in rows(real, "idle_gaps", run=run))
    assert idle == sum(r["idle_ns"] for r in got)


# --- the alone shortcut ---------------------------------------------------------------------------

SHORTCUT_PARAMS = [{}, {"per_iteration": "true"}, {"iteration_from": "2", "iteration_to": "2"},
                   {"start_ns": str(BASE + 25), "end_ns": str(BASE + 95)},
                   {"start_ns": str(BASE + 14)}]


def test_ops_alone_on_the_timeline_give_the_answer_of_the_full_sweep(tmp_path):
    # Metrics sum the ops that are alone on their rank's timeline (gpu_ops.alone) and sweep only
    # the others. With every op marked "not alone" everything goes through the sweep: the rows of
    # every metric, for every parameter set it takes, must not change.
    con = build(tmp_path / "w.duckdb", RUNS)
    assert con.execute("SELECT count(*) FILTER (WHERE alone), count(*) FILTER (WHERE NOT alone) "
                       "FROM gpu_ops").fetchall()[0] >= (5, 5)
    cases = [(metric, params) for metric in list_metrics() for params in SHORTCUT_PARAMS
             if set(params) <= {p.name for p in metric.params}]
    before = [run_metric(con, metric, params).to_pylist() for metric, params in cases]
    for table in ("kernels", "memcpy", "memset"):
        con.execute(f"UPDATE store.{table} SET alone = false")
    after = [run_metric(con, metric, params).to_pylist() for metric, params in cases]
    assert len(cases) > 40
    for (metric, params), b, a in zip(cases, before, after):
        assert b == a, (metric.name, params)


# --- the grain audit (issue 24) ---------------------------------------------------------------

def grain_problems(con, metric, params=None):
    table = run_metric(con, metric, params or {})
    missing = [c for c in metric.grain if c not in table.column_names]
    if missing:
        return [f"{metric.name}: grain column(s) {', '.join(missing)} not in its output"]
    seen, repeated = set(), set()
    for row in table.select(list(metric.grain)).to_pylist():
        key = tuple(row.values())
        (repeated if key in seen else seen).add(key)
    return [f"{metric.name}: grain {', '.join(metric.grain)} repeats for {sorted(repeated, key=str)[:3]}"
            ] if repeated else []


@pytest.mark.parametrize("per_iteration", [False, True])
def test_every_metric_grain_exists_and_never_repeats(con, per_iteration):
    """A metric's `-- grain:` names its output's key: columns it has, never two rows alike."""
    problems = []
    for metric in list_metrics():
        params = {"per_iteration": "true"} if per_iteration and any(
            p.name == "per_iteration" for p in metric.params) else {}
        problems += grain_problems(con, metric, params)
    assert problems == []
