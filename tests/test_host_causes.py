"""Why the GPU waits: host_breakdown, the causes of idle_gaps and sync_stalls equal the known
truth of a generated job with a slow data loader, a checkpoint write (OS runtime calls) and sync
stalls (truth.py recomputes them in plain Python from every main-thread activity the generator
wrote), and sync_stalls equals a recomputation from the raw tables of a real nsys export."""

from __future__ import annotations

import re
import sqlite3
from collections import defaultdict

import pytest

import tracewh
from tracewh.generate import truth
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric

SPEC = JobSpec(world_size=2, iterations=4, seed=5, data_loader_ns=4_000_000, checkpoint_every=2,
               sync_stalls=True)
PARTS = {"sync": "sync_wait_ns", "launch": "launching_ns", "data": "data_loading_ns", "os": "os_call_ns",
         "optimizer": "optimizer_ns", "backward": "backward_ns", "forward": "forward_ns", "other": "other_ns"}
GAP_PARTS = {"sync": "sync_wait_ns", "launch": "launching_ns", "data": "data_loading_ns", "os": "os_call_ns",
             "other": "other_host_ns"}


def ingested(folder, generate, spec):
    """A generated job (nsys or Kineto generator) ingested as run 'job': (its truth, the warehouse)."""
    known = generate(folder / "traces", spec)
    con = tracewh.connect(folder / "wh.duckdb")
    assert all(r.status == "ingested" for r in ingest_paths(con, [folder / "traces"], run="job"))
    return known, con


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    known, con = ingested(tmp_path_factory.mktemp("host_causes"), generate_job, SPEC)
    yield known, con
    con.close()


def rows(con, metric, **params):
    return run_metric(con, find_metric(metric), params).to_pylist()


def steps_of(got):
    """host_breakdown's rows of one step each (the others are a rank's steps together)."""
    return [row for row in got if row["iteration"] is not None]


def check_host_breakdown(known, got):
    """Each step's row equals truth.host_split of its host step, and the parts sum to the step;
    each rank's row (iteration NULL) is the truth summed over its steps; every share is
    100 x part / iteration_ns."""
    steps = steps_of(got)
    assert len(steps) == sum(len(steps) for steps in known.iterations.values())
    for row in steps:
        n, lo, hi = next(step for step in known.iterations[row["rank"]] if step[0] == row["iteration"])
        assert (row["start_ns"], row["end_ns"]) == (lo, hi)
        want = truth.host_split(known.host[row["rank"]], lo, hi)
        assert {column: row[column] for column in PARTS.values()} == {PARTS[c]: ns for c, ns in want.items()}
        assert sum(row[column] for column in PARTS.values()) == row["iteration_ns"] == hi - lo
    ranks = {row["rank"]: row for row in got if row["iteration"] is None}
    assert sorted(ranks) == sorted({row["rank"] for row in steps})
    for rank, row in ranks.items():
        mine = [(lo, hi) for n, lo, hi in known.iterations[rank]
                if any(r["rank"] == rank and r["iteration"] == n for r in steps)]
        want = {PARTS[c]: 0 for c in PARTS}
        for lo, hi in mine:
            for cause, ns in truth.host_split(known.host[rank], lo, hi).items():
                want[PARTS[cause]] += ns
        assert {column: row[column] for column in PARTS.values()} == want
        assert row["iteration_ns"] == sum(hi - lo for lo, hi in mine)
        assert (row["start_ns"], row["end_ns"]) == (min(lo for lo, _ in mine), max(hi for _, hi in mine))
    for row in got:
        for column in PARTS.values():
            share = row[column.replace("_ns", "_pct")]
            assert share == pytest.approx(100 * row[column] / row["iteration_ns"], rel=1e-12)


def check_gap_causes(known, got, min_ns):
    """Per rank, idle_gaps' host columns sum to truth.gap_causes of the gaps >= min_ns; returns
    each rank's rows."""
    by_rank = {}
    for rank in known.host:
        mine = [r for r in got if r["rank"] == rank]
        want = truth.gap_causes(known.host[rank], known.gpu_busy[rank], min_ns)
        assert {column: sum(r[column] or 0 for r in mine) for column in GAP_PARTS.values()} == \
            {GAP_PARTS[c]: ns for c, ns in want.items()}
        attributed = [g for g in truth.idle_gaps(known.gpu_busy[rank]) if g[1] - g[0] >= min_ns]
        assert sum(r["attributed_ns"] or 0 for r in mine) == sum(hi - lo for lo, hi in attributed)
        by_rank[rank] = mine
    return by_rank


def check_sync_calls(known, got):
    """sync_stalls' calls (per_call) are the truth's sync waits, with the GPU idle time in each."""
    for rank in known.host:
        mine = sorted((r["start_ns"], r["end_ns"], r["blocked_ns"], r["gpu_idle_ns"]) for r in got
                      if r["rank"] == rank)
        waits = sorted((lo, hi) for c, lo, hi in known.host[rank] if c == "sync")
        assert mine == [(lo, hi, hi - lo, truth.idle_within(known.gpu_busy[rank], lo, hi)) for lo, hi in waits]


def test_host_breakdown_equals_the_truth_and_sums_to_the_step(job):
    known, con = job
    got = rows(con, "host_breakdown")
    check_host_breakdown(known, got)
    for row in steps_of(got):  # what the job was built to show: every step waits 4 ms for data, checkpoints write
        assert row["data_loading_ns"] == 4_000_000
        assert row["os_call_ns"] == (9_025_000 if row["iteration"] % 2 == 0 else 0)


@pytest.mark.parametrize("min_ns", [0, 30_000])
def test_idle_gap_causes_equal_the_truth(job, min_ns):
    known, con = job
    # the two long gaps after the first: the data loader (4 ms) and the checkpoint (+9 ms)
    for mine in check_gap_causes(known, rows(con, "idle_gaps", cause_min_ns=min_ns), min_ns).values():
        causes = {r["size_bucket"]: r["host_cause"] for r in mine if r["cause"] == "host wait"}
        assert causes["1-10ms"] == "data loading" and causes[">=10ms"] == "os call"


def test_idle_gap_causes_are_left_out_below_cause_min_ns(job):
    _, con = job
    for row in rows(con, "idle_gaps"):  # default 30 us: every gap below 10 us is not attributed
        if row["bucket_order"] <= 2:
            assert row["attributed_ns"] is None and row["host_cause"] is None


def test_sync_stalls_per_call_equal_the_truth(job):
    known, con = job
    got = rows(con, "sync_stalls", per_call=True)
    check_sync_calls(known, got)
    per_rule = defaultdict(int)
    for r in got:
        per_rule[r["rule"], r["name"]] += 1
    steps, checkpoints = SPEC.world_size * SPEC.iterations, SPEC.world_size * (SPEC.iterations // 2)
    assert per_rule == {("pageable memcpy", "cudaMemcpyAsync"): steps, ("sync memcpy", "cudaMemcpy"): steps,
                        ("sync api", "cudaStreamSynchronize"): steps,
                        ("sync api", "cudaDeviceSynchronize"): checkpoints}


def test_sync_stalls_sums_the_calls(job):
    _, con = job
    calls = rows(con, "sync_stalls", per_call=True)
    for row in rows(con, "sync_stalls"):
        mine = [c for c in calls if (c["rank"], c["rule"], c["name"]) == (row["rank"], row["rule"], row["name"])]
        assert (row["calls"], row["blocked_ns"], row["max_blocked_ns"], row["gpu_idle_ns"]) == (
            len(mine), sum(c["blocked_ns"] for c in mine), max(c["blocked_ns"] for c in mine),
            sum(c["gpu_idle_ns"] for c in mine))


SYNC_NAME = re.compile(r"^(cu|cuda)(Device|Stream|Event|Ctx)Synchronize")


def raw_sync_stalls(path):
    """Per process: the runtime/driver calls named like a sync, with the GPU idle time (gaps
    between the busy islands of each device, from the kernel, memcpy and memset tables) inside
    each, read straight from the export."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    names = dict(db.execute("SELECT id, value FROM StringIds"))
    ops = defaultdict(list)
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        for pid, device, start, end in db.execute(f'SELECT (globalPid >> 24) & 16777215, deviceId, start, "end" '
                                                  f"FROM {table}"):
            ops[pid, device].append((start, end))
    gaps = defaultdict(list)
    for (pid, _), spans in ops.items():
        gaps[pid] += truth.idle_gaps(spans)
    calls = defaultdict(list)
    for pid, start, end, name_id in db.execute('SELECT (globalTid >> 24) & 16777215, start, "end", nameId '
                                               "FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
        if SYNC_NAME.match(re.sub(r"_v\d+$", "", names[name_id])):
            idle = sum(max(0, min(end, b) - max(start, a)) for a, b in gaps[pid])
            calls[pid].append((end - start, idle))
    db.close()
    return calls


def test_sync_stalls_equal_the_raw_export(shared_data, tmp_path):
    path = shared_data / "nsys/nsys-ai/mfu_2gpu_before.sqlite"
    want = raw_sync_stalls(path)
    assert sum(len(c) for c in want.values()) >= 30  # 33 syncs in this export: a real test
    con = tracewh.connect(tmp_path / "wh.duckdb")
    assert ingest_paths(con, [path], run="real")[0].status == "ingested"
    pid_of = dict(con.execute("SELECT rank, pid FROM ranks").fetchall())
    got = defaultdict(list)
    for row in rows(con, "sync_stalls", per_call=True):
        if row["rule"] == "sync api":
            got[pid_of[row["rank"]]].append((row["blocked_ns"], row["gpu_idle_ns"]))
    assert {pid: sorted(c) for pid, c in got.items()} == {pid: sorted(c) for pid, c in want.items() if c}
    con.close()


def test_kineto_data_loader_is_data_loading(tmp_path):
    """The Kineto generator's slow DataLoader op: host_breakdown counts exactly its span (nothing
    else runs on the loop's thread then) and the GPU's long idle gaps are data loading."""
    from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job
    known = generate_kineto_job(tmp_path / "traces", KinetoJobSpec(world_size=2, iterations=3, seed=2,
                                                                   data_loader_ns=3_000_000))
    con = tracewh.connect(tmp_path / "wh.duckdb")
    assert all(r.status == "ingested" for r in ingest_paths(con, [tmp_path / "traces"], run="k"))
    for row in steps_of(rows(con, "host_breakdown")):
        lo, hi = next((s, e) for n, s, e in known.iterations[row["rank"]] if n == row["iteration"])
        spans = [(s, e) for s, e in known.data_loader[row["rank"]] if lo <= s < hi]
        assert len(spans) == 1 and row["data_loading_ns"] == spans[0][1] - spans[0][0] >= 3_000_000
        assert sum(row[column] for column in PARTS.values()) == row["iteration_ns"]
    long_gaps = [r for r in rows(con, "idle_gaps") if r["size_bucket"] == "1-10ms"]
    assert long_gaps and all(r["host_cause"] == "data loading" for r in long_gaps)
    con.close()
