"""Each GPU op's place on the timeline (gpu_ops.alone, gpu_ops.device_prev_end_ns), filled in at
ingest by sql/gpu_op_timeline.sql and for older rows by migration 0006, against a brute force
over every pair of ops (random timelines with ties, zero-length ops, touching ops, two devices
per rank) and against a plain Python sweep on the real traces."""

from __future__ import annotations

import random
import shutil

import pytest

import tracewh
from tracewh import warehouse
from tracewh.ingest import ingest_paths
from metric_fixtures import Op, Rank, Run, build


def brute_force(ops):
    """ops: (rank_key, device, start, end) -> {index: (alone, device_prev_end)} by all pairs."""
    out = {}
    for i, (rank, device, start, end) in enumerate(ops):
        alone = not any(j != i and r == rank and s <= end and start <= e  # closed: touching counts
                        for j, (r, _, s, e) in enumerate(ops))
        before = [e for (r, d, s, e) in ops
                  if r == rank and d == device and (s, e) < (start, end)]
        out[i] = (alone, max(before) if before else None)
    return out


def random_ranks(seed: int) -> list[Rank]:
    rng = random.Random(seed)
    ranks = []
    for rank in range(2):
        ops = []
        for _ in range(rng.randint(1, 60)):
            start = rng.randint(0, 400)
            length = rng.choice([0, 0, 1, 3, 5, 10, 30])
            ops.append(Op(rng.choice(["compute", "comm", "memcpy", "memset"]), start,
                          start + length, device=rng.choice([0, 0, 0, 1])))
        if rng.random() < 0.3:  # an exact duplicate
            ops.append(Op("compute", ops[0].start, ops[0].end, device=ops[0].device))
        ranks.append(Rank("run", rank, None, ops))
    return ranks


@pytest.mark.parametrize("seed", range(40))
def test_alone_and_device_prev_end_match_a_brute_force(tmp_path, seed):
    ranks = random_ranks(seed)
    con = build(tmp_path / "w.duckdb", [Run("run", ranks)])
    got = sorted(con.execute(
        "SELECT rank, device_id, start_ns - 1700000000000000000, end_ns - 1700000000000000000, "
        "alone, device_prev_end_ns - 1700000000000000000 FROM gpu_ops").fetchall())
    ops = [(r.rank, op.device, op.start, op.end) for r in ranks for op in r.ops]
    truth = brute_force(ops)
    expected = sorted(ops[i] + truth[i] for i in range(len(ops)))
    assert got == expected


def sweep(rows):
    """rows of one rank: (device, start, end) -> sorted (device, start, end, alone, prev_end)."""
    rows = sorted(rows, key=lambda r: (r[1], r[2]))
    out = []
    reach = None  # latest end of the rank's ops so far
    device = {}  # device -> [latest end so far, last (start, end), its answer]
    for i, (dev, start, end) in enumerate(rows):
        after = rows[i + 1][1] if i + 1 < len(rows) else None
        alone = (reach is None or reach < start) and (after is None or after > end)
        reach = end if reach is None else max(reach, end)
        latest, last, answer = device.get(dev, [None, None, None])
        if last != (start, end):  # an identical op shares its twin's answer
            answer = latest
        device[dev] = [end if latest is None else max(latest, end), (start, end), answer]
        out.append((dev, start, end, alone, answer))
    return sorted(out, key=str)


def test_real_traces_agree_with_a_sweep(shared_data, tmp_path):
    con = tracewh.connect(tmp_path / "w.duckdb")
    folders = [shared_data / "nsys", shared_data / "kineto" / "param" / "dlrm_kineto",
               shared_data / "kineto" / "hta" / "trace_filter"]
    results = ingest_paths(con, folders, jobs=1)
    assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    keys = con.execute("SELECT DISTINCT rank_key FROM gpu_ops ORDER BY 1").fetchall()
    assert keys
    crowded = 0
    for (key,) in keys:
        rows = con.execute("SELECT device_id, start_ns, end_ns, alone, device_prev_end_ns "
                           "FROM gpu_ops WHERE rank_key = ? AND end_ns >= start_ns",
                           [key]).fetchall()
        expected = sweep([r[:3] for r in rows])
        assert sorted(rows, key=str) == expected
        crowded += sum(not r[3] for r in rows)
    assert crowded > 0  # the real traces have overlapping ops: both answers are exercised


def test_ops_stored_before_migration_6_get_their_place(db_path, tmp_path, monkeypatch):
    folder = tmp_path / "migrations_0005"
    folder.mkdir()
    for existing in sorted(warehouse.migrations_dir().glob("000[1-5]_*.sql")):
        shutil.copy(existing, folder / existing.name)
    # rank 0: a kernel [100, 200] overlapping a memcpy [150, 160], then a lone memset [300, 310];
    # rank 1 (another file): a lone kernel
    rows = {"kernels": [(1, 0, 100, 200), (2, 0, 500, 600)], "memcpy": [(1, 0, 150, 160)],
            "memset": [(1, 0, 300, 310)]}
    with monkeypatch.context() as patch:
        patch.setattr(warehouse, "migrations_dir", lambda: folder)
        patch.setattr(warehouse, "install_views", lambda con, **_: None)
        con = tracewh.connect(db_path)
        assert "alone" not in [c[0] for c in con.execute("DESCRIBE store.kernels").fetchall()]
        for table, values in rows.items():
            for file_id, rank, start, end in values:
                con.execute(f"INSERT INTO store.{table} BY NAME SELECT 'r' AS run_id, ? AS rank, "
                            "? AS file_id, 7 AS pid, 0 AS device_id, ? AS start_ns, ? AS end_ns"
                            + (", 'k' AS name" if table == "kernels" else ""),
                            [rank + file_id - 1, file_id, start, end])
        con.close()
    con = tracewh.connect(db_path)
    got = sorted(con.execute(
        "SELECT file_id, op, start_ns, alone, device_prev_end_ns FROM gpu_ops").fetchall())
    assert got == [(1, "kernel", 100, False, None), (1, "memcpy", 150, False, 200),
                   (1, "memset", 300, True, 200), (2, "kernel", 500, True, None)]


@pytest.mark.parametrize("seed", range(5))
def test_metrics_give_the_same_rows_without_the_alone_shortcut_on_random_timelines(tmp_path, seed):
    # Two devices per rank, ops that overlap across devices, ties, zero-length ops: the metrics
    # that sum lone ops and sweep the rest must answer as the sweep of everything does.
    from tracewh.metrics import list_metrics, run_metric
    ranks = random_ranks(100 + seed)
    for rank in ranks:  # launch times, so that idle_gaps tells its causes apart
        for op in rank.ops:
            op.launch = op.start - (seed * 7 + op.start) % 13
    con = build(tmp_path / "w.duckdb", [Run("run", ranks)])
    cases = [(m, p) for m in list_metrics()
             for p in ({}, {"start_ns": str(1_700_000_000_000_000_000 + 150)})
             if set(p) <= {param.name for param in m.params}]
    before = [run_metric(con, m, p).to_pylist() for m, p in cases]
    for table in ("kernels", "memcpy", "memset"):
        con.execute(f"UPDATE store.{table} SET alone = false")
    after = [run_metric(con, m, p).to_pylist() for m, p in cases]
    for (m, p), b, a in zip(cases, before, after):
        assert repr(b) == repr(a), (m.name, p)  # repr: a NaN (0 / 0 share) equals itself
