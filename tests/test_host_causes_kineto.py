"""Why the GPU waits, on a generated Kineto job: host_breakdown, the causes of idle_gaps,
sync_stalls, the gpu_syncs and python_frames views and memory_at_peak's module column equal the
known truth of a job with a slow data loader, sync stalls (cuda_sync events), python frames,
## forward ## annotations and allocator events (truth.py recomputes the answers in plain Python
from every main-thread activity the generator wrote). Kineto has no OS runtime calls: the checkpoint write (os_call_ns) is the nsys
generator's (tests/test_host_causes.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from tracewh.generate import truth
from tracewh.generate.kineto import WEIGHT_BYTES, KinetoJobSpec, generate_kineto_job
from test_host_causes import check_gap_causes, check_host_breakdown, check_sync_calls, ingested, rows, steps_of

SPEC = KinetoJobSpec(world_size=2, iterations=4, layers=3, seed=7, data_loader_ns=3_000_000, sync_stalls=True,
                     python_frames=True, phase_annotations=True, profile_memory=True)


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    known, con = ingested(tmp_path_factory.mktemp("host_causes_kineto"), generate_kineto_job, SPEC)
    yield known, con
    con.close()


def test_host_breakdown_equals_the_truth(job):
    known, con = job
    got = rows(con, "host_breakdown")
    check_host_breakdown(known, got)
    for row in steps_of(got):  # what the job was built to show: the loader's 3 ms, the annotated phases, no OS calls
        assert row["data_loading_ns"] >= 3_000_000 and row["os_call_ns"] == 0
        assert min(row["forward_ns"], row["backward_ns"], row["optimizer_ns"], row["sync_wait_ns"]) > 0


@pytest.mark.parametrize("min_ns", [0, 30_000])
def test_idle_gap_causes_equal_the_truth(job, min_ns):
    known, con = job
    for rank, mine in check_gap_causes(known, rows(con, "idle_gaps", cause_min_ns=min_ns), min_ns).items():
        # the GPU waits for the loader in every step but the first
        assert truth.gap_causes(known.host[rank], known.gpu_busy[rank], min_ns)["data"] >= 3 * 2_900_000
        long_gaps = [r for r in mine if r["size_bucket"] == "1-10ms"]
        assert long_gaps and all(r["host_cause"] == "data loading" for r in long_gaps)


def test_sync_stalls_per_call_equal_the_truth(job):
    known, con = job
    got = rows(con, "sync_stalls", per_call=True)
    check_sync_calls(known, got)
    steps = SPEC.world_size * SPEC.iterations
    assert Counter((r["rule"], r["name"]) for r in got) == {
        ("pageable memcpy", "cudaMemcpyAsync"): steps, ("sync api", "cudaStreamSynchronize"): steps,
        ("sync api", "cudaDeviceSynchronize"): steps}
    # torch.cuda.synchronize() waits for the whole device: far longer than the call's overhead
    assert all(r["blocked_ns"] > 100_000 for r in got if r["name"] == "cudaDeviceSynchronize")


def test_gpu_syncs_equal_the_truth(job):
    known, con = job
    got = con.execute("SELECT rank, sync_kind, api_name, stream_id, wait_stream_id, start_ns, end_ns, api_start_ns, "
                      "api_end_ns, correlation_id, external_id, iteration FROM gpu_syncs").fetchall()
    want = [(rank, *s) for rank, syncs in known.syncs.items() for s in syncs]
    assert sorted(got) == sorted(want)
    assert Counter(s[1] for s in got) == {"Stream Wait Event": 16, "Context Sync": 8, "Stream Sync": 8}


def test_python_frames_equal_the_truth(job):
    known, con = job
    got = con.execute("SELECT rank, name, start_ns, end_ns, python_id, python_parent_id, iteration "
                      "FROM python_frames").fetchall()
    assert sorted(got) == sorted((rank, *f) for rank, frames in known.frames.items() for f in frames)
    # one nn.Module frame per module call, named by class and instance as with_stack=True does
    modules = Counter(name for rank, name, *_ in got if rank == 0 and name.startswith("nn.Module: "))
    layers = {f"nn.Module: {cls}_{i}": SPEC.iterations for cls in ("Block", "Linear", "GELU") for i in range(3)}
    assert modules == {"nn.Module: Model_0": SPEC.iterations, **layers}


def live_at_peaks(known, rank):
    """Per iteration, the (op, module) of the allocations live at its peak (the first event after
    which Total Allocated was highest), with their bytes and count, replayed from the events."""
    events, out = known.memory[rank], {}
    for n in {m.iteration for m in events}:
        mine = [i for i, m in enumerate(events) if m.iteration == n]
        peak = max(mine, key=lambda i: (events[i].total_allocated, -i))
        live = {}
        for m in events[:peak + 1]:
            if m.bytes > 0:
                live[m.address] = m
            else:
                live.pop(m.address)
        held = {}
        for m in live.values():
            nbytes, count = held.get((m.op, m.module), (0, 0))
            held[m.op, m.module] = (nbytes + m.bytes, count + 1)
        out[n] = {**held, ("(before the trace)", None): (WEIGHT_BYTES, 0)}
    return out


def test_memory_at_peak_names_the_op_and_module(job):
    known, con = job
    got = rows(con, "memory_at_peak")
    for rank in range(SPEC.world_size):
        want = live_at_peaks(known, rank)
        assert sorted(want) == [n for n, *_ in known.iterations[rank]]
        for n, held in want.items():
            mine = {(r["op"], r["module"]): (r["bytes"], r["allocations"]) for r in got
                    if (r["rank"], r["iteration"]) == (rank, n)}
            assert mine == held
            # every output of the forward pass, each in its module: Linear_0 made aten::addmm's
            assert held["aten::addmm", "Linear_0"] == (64 << 20, 1) and held["aten::add", "Block_2"] == (64 << 20, 1)
            assert len(held) == 4 * 3 + 1


def test_the_default_job_writes_none_of_these(tmp_path):
    known = generate_kineto_job(tmp_path, KinetoJobSpec(world_size=1, iterations=1))
    assert not known.host and not any(known.syncs.values()) and not any(known.frames.values())
    assert not any(known.memory.values())
    assert not {key for key in known.event_counts[0] if key[1] in ("cuda_sync", "python_function",
                                                                    "cpu_instant_event")}
