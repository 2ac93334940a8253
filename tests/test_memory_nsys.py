"""nsys CUDA memory usage (--cuda-memory-usage=true): a generated export whose
CUDA_GPU_MEMORY_USAGE_EVENTS rows are known lands in memory_events with derived totals, and the
memory metrics give the peaks worked out by hand (see _Rank._memory_* in generate/nsys.py)."""

from __future__ import annotations

import sqlite3
from collections import defaultdict

import pytest

import tracewh
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric

MIB = 1 << 20
LAYERS = 3
SPEC = JobSpec(world_size=2, iterations=3, layers=LAYERS, memory_usage=True)


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nsys_memory")
    truth = generate_job(folder / "traces", SPEC)
    con = tracewh.connect(folder / "wh.duckdb")
    assert {r.status for r in ingest_paths(con, truth.files, run="m")} == {"ingested"}
    yield truth, con
    con.close()


def _running_peaks(events):
    """Per (device, iteration): the highest running sum of bytes, raised by its lowest dip."""
    by_device = defaultdict(list)
    for e in sorted(events, key=lambda e: e.start_ns):
        by_device[e.device].append(e)
    peaks = {}
    for device, rows in by_device.items():
        total, totals = 0, []
        for e in rows:
            total += e.bytes
            totals.append(total)
        floor = min(0, min(totals))
        for e, total in zip(rows, totals):
            key = (device, e.iteration)
            peaks[key] = max(peaks.get(key, 0), total - floor)
    return peaks


def test_the_export_has_the_real_tables(job):
    truth, _ = job
    with sqlite3.connect(truth.files[0]) as db:
        columns = [r[1] for r in db.execute("PRAGMA table_info(CUDA_GPU_MEMORY_USAGE_EVENTS)")]
        assert columns[:9] == ["start", "globalPid", "deviceId", "contextId", "address", "pc", "bytes",
                               "memKind", "memoryOperationType"]
        assert db.execute("SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS").fetchone()[0] == \
            len(truth.memory[0])


def test_default_fixtures_have_no_memory_rows(tmp_path):
    truth = generate_job(tmp_path, JobSpec(world_size=1, iterations=1))
    with sqlite3.connect(truth.files[0]) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    assert "CUDA_GPU_MEMORY_USAGE_EVENTS" not in tables


def test_events_land_with_time_address_thread_and_step(job):
    truth, con = job
    for rank, events in truth.memory.items():
        got = con.sql("SELECT start_ns, bytes, address, device_type, iteration, tid FROM memory_events "
                      "WHERE rank = $1 ORDER BY start_ns", params=[rank]).fetchall()
        assert [g[:5] for g in got] == sorted(events)
        assert {g[5] for g in got} == {truth.rank_pid[rank]}  # the main thread (tid = pid)


def test_each_event_names_the_nvtx_range_of_its_call(job):
    """By the generator's plan (_Rank._memory_*): in each step the 8 MiB activations are made at
    the end of forward and freed in backward, the 12 MiB workspace lives inside optimizer, each
    range inside its ProfilerStep; what comes before the first step and after the last is outside
    every range (train:begin and train:end are marks). nsys has no CPU ops."""
    truth, con = job
    phase = {8 * MIB: "forward", -8 * MIB: "backward", 12 * MIB: "optimizer", -12 * MIB: "optimizer"}
    for rank, events in truth.memory.items():
        got = con.sql("SELECT m.start_ns, m.bytes, n.name, n.depth, m.cpu_op_id FROM memory_events m "
                      "LEFT JOIN nvtx_ranges n ON n.file_id = m.file_id AND n.range_id = m.nvtx_range_id "
                      "WHERE m.rank = $1 ORDER BY m.start_ns", params=[rank]).fetchall()
        assert got == [(e.start_ns, e.bytes, None if e.iteration is None else phase[e.bytes],
                        None if e.iteration is None else 1, None)
                       for e in sorted(events)]


def test_known_peaks_and_counts(job):
    truth, con = job
    rows = run_metric(con, find_metric("memory_peaks")).to_pylist()
    for rank in truth.memory:
        got = {(r["device_type"], r["iteration"]): r for r in rows if r["rank"] == rank}
        # by hand: 64 MiB of weights + LAYERS activations of 8 MiB at each step's peak
        for n in (1, 2, 3):
            assert got["GPU", n]["peak_allocated"] == (64 + 8 * LAYERS) * MIB
            assert (got["GPU", n]["allocations"], got["GPU", n]["frees"]) == (LAYERS + 1, LAYERS + 1)
        # before the first step: the free of memory allocated before the capture and the weights
        # the capture never frees, both unpaired
        assert (got["GPU", None]["frees"], got["GPU", None]["unpaired"]) == (1, 2)
        assert got["CPU", None]["peak_allocated"] == 2 * MIB  # pinned host memory
        assert all(r["derived"] for r in got.values())
        # and the same from the generator's own event list
        assert {k: r["peak_allocated"] for k, r in got.items()} == _running_peaks(truth.memory[rank])


def test_at_peak_sums_to_the_peak(job):
    _, con = job
    peaks = {(r["rank"], r["device_type"], r["iteration"]): r["peak_allocated"]
             for r in run_metric(con, find_metric("memory_peaks")).to_pylist()}
    held = defaultdict(int)
    for r in run_metric(con, find_metric("memory_at_peak")).to_pylist():
        held[r["rank"], r["device_type"], r["iteration"]] += r["bytes"]
    assert held and all(held[k] == peaks[k] for k in held)
    assert sorted(k[2] for k in held if k[0] == 0 and k[1] == "GPU") == [1, 2, 3]


def test_at_peak_names_the_nvtx_range_that_allocated(job):
    """nsys has no CPU ops: the innermost NVTX range on the allocating thread is the op. At each
    step's peak the activations (made inside 'forward', after the NCCL ranges there ended) and the
    weights (made before any range) are live."""
    _, con = job
    got = [(r["iteration"], r["op"], r["module"], r["bytes"], r["allocations"])
           for r in run_metric(con, find_metric("memory_at_peak"), {"rank": "1"}).to_pylist()
           if r["device_type"] == "GPU"]
    assert got == [row for n in (1, 2, 3) for row in
                   ((n, None, None, 64 * MIB, 1), (n, "forward", None, 8 * LAYERS * MIB, LAYERS))]


def test_memory_by_phase_allocator_and_samples_side_by_side(job, tmp_path):
    """Allocator totals per phase by hand (64 MiB of weights; forward allocates LAYERS x 8 MiB,
    backward frees them, the optimizer allocates and frees 12 MiB), and a sampled series of the
    same GPUs beside them."""
    truth, con = job
    gpu_memory = con.execute("SELECT max(total_memory) FROM devices").fetchone()[0]
    phases = con.execute("""
        SELECT n.rank, n.name, n.start_ns, n.end_ns FROM nvtx_ranges n
        WHERE n.name IN ('forward', 'backward', 'optimizer') ORDER BY ALL""").fetchall()
    # a monitor CSV: every 100 us on each rank's GPU, mem_free = a known function of time
    hosts = dict(con.execute("SELECT rank, host FROM ranks").fetchall())
    first, last = min(p[2] for p in phases) - 1_000_000, max(p[3] for p in phases)
    times = range(first, last, 100_000)
    lines = ["device_id,timestamp,host,mem_free"]
    lines += [f"0,{ts},{hosts[rank]},{ts % 1000}" for ts in times for rank in hosts]
    csv = tmp_path / "monitor.csv"
    csv.write_text("\n".join(lines) + "\n")
    from tracewh.ingest import ingest_paths as ingest

    assert [r.status for r in ingest(con, [], run="m", series=[csv],
                                     series_options={"time_unit": "ns"})] == ["ingested"]
    got = run_metric(con, find_metric("memory_by_phase"), {"measure": "%"}).to_pylist()
    allocated = {(r["rank"], r["iteration"], r["phase"]): (r["min_value"], r["max_value"],
                                                            r["value_at_start"], r["samples"])
                 for r in got if r["measure"] == "allocated [B]"}
    top = (64 + 8 * LAYERS) * MIB
    for rank in truth.memory:
        for n in (1, 2, 3):
            assert allocated[rank, n, "forward"] == (72 * MIB, top, 64 * MIB, LAYERS)
            assert allocated[rank, n, "backward"] == (64 * MIB, top - 8 * MIB, top, LAYERS)
            assert allocated[rank, n, "optimizer"] == (64 * MIB, 76 * MIB, 64 * MIB, 2)
    free = [r for r in got if r["measure"] == "free [B]" and r["phase"] == "forward"]
    assert free and {r["min_value"] for r in free} == {gpu_memory - top}
    sampled = [r for r in got if r["source"] == "samples"]
    assert {r["measure"] for r in sampled} == {"mem_free"}
    for r in sampled:  # recomputed from the CSV
        inside = [ts % 1000 for ts in times if r["start_ns"] <= ts <= r["end_ns"]]
        assert (r["samples"], r["min_value"], r["max_value"]) == \
            (len(inside), min(inside, default=None), max(inside, default=None))
    assert {r["source"] for r in got} == {"allocator", "samples"}
    assert "reserved [B]" not in {r["measure"] for r in got}  # nsys gives no reserved total
