"""The synthetic nsys exports look like real ones and contain exactly what JobTruth says."""

import sqlite3
import statistics
from pathlib import Path

import pytest

from tracewh.generate.nsys import JobSpec, generate_job

PID_MASK = "0xFFFFFFFFFF000000"  # SQL hex literal (a signed 64-bit value): globalTid -> globalPid
NCCL_TEXT = "coalesce(n.text, (SELECT value FROM StringIds WHERE id = n.textId))"


def _open_ro(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


@pytest.fixture(scope="module")
def real(shared_data):
    """The real 2026.2.1 export and, for TARGET_INFO_GPU, the 2026.1.1 one (conftest skips without them)."""
    nsys_ai = shared_data / "nsys" / "nsys-ai"
    conns = {"main": _open_ro(nsys_ai / "mfu_2gpu_before.sqlite"), "gpu": _open_ro(nsys_ai / "mock.sqlite")}
    yield conns
    for c in conns.values():
        c.close()


@pytest.fixture(scope="module")
def multi(tmp_path_factory):
    """4 ranks, two processes per file (torchrun-style reports)."""
    spec = JobSpec(world_size=4, ranks_per_file=2, iterations=3, layers=3, seed=7)
    return generate_job(tmp_path_factory.mktemp("multi"), spec)


@pytest.fixture(scope="module")
def per_rank(tmp_path_factory):
    """3 ranks, one file each."""
    spec = JobSpec(world_size=3, iterations=2, layers=2, seed=3, prefix="job_")
    return generate_job(tmp_path_factory.mktemp("per_rank"), spec)


@pytest.fixture(params=["multi", "per_rank"])
def job(request):
    return request.getfixturevalue(request.param)


def _tables(conn) -> list[str]:
    return [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid")]


def _each_rank(truth):
    for path, ranks in truth.file_ranks.items():
        with sqlite3.connect(path) as conn:
            for rank in ranks:
                yield conn, rank, truth.rank_pid[rank]


def _gpid(pid: int) -> int:
    return (1 << 48) | (pid << 24)


# ---- format ------------------------------------------------------------------------------------


def test_schema_matches_real_export(real, multi):
    generated = sqlite3.connect(multi.files[0])
    real_tables = set(_tables(real["main"]))
    for table in _tables(generated):
        source = real["main"] if table in real_tables else real["gpu"]
        assert table in set(_tables(source)), f"{table} does not exist in the real exports"
        info = f"PRAGMA table_info('{table}')"
        assert generated.execute(info).fetchall() == source.execute(info).fetchall(), table
        ddl = "SELECT sql FROM sqlite_master WHERE name = ?"
        assert generated.execute(ddl, (table,)).fetchone() == source.execute(ddl, (table,)).fetchone(), table
        if table.startswith("ENUM_"):
            rows = f"SELECT * FROM {table} ORDER BY id"
            assert generated.execute(rows).fetchall() == source.execute(rows).fetchall(), table


def test_tables_are_lazy_and_metadata_is_present(job):
    always = {"StringIds", "META_DATA_EXPORT", "META_DATA_CAPTURE", "TARGET_INFO_SESSION_START_TIME",
              "TARGET_INFO_SYSTEM_ENV", "PROCESSES", "ThreadNames", "TARGET_INFO_GPU", "ENUM_NSYS_EVENT_TYPE",
              "ENUM_NSYS_EVENT_CLASS", "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND", "ENUM_CUDA_KERNEL_LAUNCH_TYPE"}
    for path in job.files:
        conn = sqlite3.connect(path)
        tables = _tables(conn)
        assert always <= set(tables)
        assert all(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] > 0 for t in tables)
        meta = dict(conn.execute("SELECT name, value FROM META_DATA_EXPORT"))
        assert meta["EXPORT_PRODUCT_VERSION"] == "2026.2.1.210"
        assert (meta["EXPORT_SCHEMA_VERSION"], meta["EXPORT_SCHEMA_VERSION_MINOR"]) == ("3.25.0", "25")
        assert (meta["EXPORT_PARAM_TIME_NORMALIZE"], meta["EXPORT_PARAM_TIME_SHIFT"]) == ("false", "0")
        env = dict(conn.execute("SELECT name, value FROM TARGET_INFO_SYSTEM_ENV"))
        assert env["Hostname"] == job.hostnames[path] and {"NvDriverVersion", "CudaDriverVersion"} <= set(env)
        (utc,) = conn.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()
        assert utc == job.utc_epoch_ns[path]
        gpus = conn.execute("SELECT id, name, smCount FROM TARGET_INFO_GPU ORDER BY id").fetchall()
        devices = sorted({k.device_id for r in job.file_ranks[path] for k in job.kernels[r]})
        assert gpus == [(d, "NVIDIA H100 80GB HBM3", 132) for d in devices]
        processes = dict(conn.execute("SELECT pid, name FROM PROCESSES"))
        assert {p: processes[p] for p in (job.rank_pid[r] for r in job.file_ranks[path])} == \
            {job.rank_pid[r]: "python3" for r in job.file_ranks[path]}
        assert list(processes.values()).count("torchrun") == 1


def test_per_rank_files_have_their_own_clock_and_host(per_rank):
    assert [p.name for p in per_rank.files] == ["job_rank0.sqlite", "job_rank1.sqlite", "job_rank2.sqlite"]
    epochs = [per_rank.utc_epoch_ns[p] for p in per_rank.files]
    assert epochs[0] == per_rank.spec.utc_start_ns
    assert all(1_000_000 <= b - a <= 5_000_000 for a, b in zip(epochs, epochs[1:]))
    assert len(set(per_rank.hostnames.values())) == 3


# ---- contents equal the truth ----------------------------------------------------------------------


def test_row_counts_equal_truth(job):
    for conn, rank, pid in _each_rank(job):
        count = lambda sql: conn.execute(sql, (_gpid(pid),)).fetchone()[0]  # noqa: E731
        assert count("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid = ?") == len(job.kernels[rank])
        assert count(f"SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE globalTid & {PID_MASK} = ?") == \
            job.runtime_calls[rank]
        assert count(f"SELECT count(*) FROM NVTX_EVENTS WHERE globalTid & {PID_MASK} = ? AND eventType != 75") == \
            job.nvtx_ranges[rank]
        assert count("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE globalPid = ?") == job.memset[rank]
        assert len(job.kernels[rank]) == job.spec.kernels_per_rank


def test_kernels_equal_truth(job):
    for conn, rank, pid in _each_rank(job):
        (epoch,) = conn.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()
        rows = conn.execute(
            """SELECT d.value, s.value, k.start + ?, k.end + ?, k.deviceId, k.streamId, k.correlationId
               FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds d ON d.id = k.demangledName
               JOIN StringIds s ON s.id = k.shortName WHERE k.globalPid = ? ORDER BY k.start""",
            (epoch, epoch, _gpid(pid))).fetchall()
        assert sorted(rows) == sorted(k[:7] for k in job.kernels[rank])
        memcpy = conn.execute(
            """SELECT m.bytes, e.label, m.start + ?, m.end + ? FROM CUPTI_ACTIVITY_KIND_MEMCPY m
               JOIN ENUM_CUDA_MEMCPY_OPER e ON e.id = m.copyKind WHERE m.globalPid = ? ORDER BY m.start""",
            (epoch, epoch, _gpid(pid))).fetchall()
        labels = {"HtoD": "Host-to-Device", "DtoH": "Device-to-Host", "DtoD": "Device-to-Device"}
        assert memcpy == [(m.bytes, labels[m.kind], m.start_ns, m.end_ns) for m in job.memcpy[rank]]
        steps = conn.execute(
            f"""SELECT CAST(substr(text, 14) AS INTEGER), start + ?, end + ? FROM NVTX_EVENTS
                WHERE text LIKE 'ProfilerStep#%' AND globalTid & {PID_MASK} = ? ORDER BY start""",
            (epoch, epoch, _gpid(pid))).fetchall()
        assert steps == job.iterations[rank]


def test_string_ids_resolve_and_nvtx_ranges_nest(job):
    references = {"CUPTI_ACTIVITY_KIND_KERNEL": ("demangledName", "shortName", "mangledName"),
                  "CUPTI_ACTIVITY_KIND_RUNTIME": ("nameId",), "NVTX_EVENTS": ("textId",), "ThreadNames": ("nameId",)}
    for conn, rank, pid in _each_rank(job):
        for table, columns in references.items():
            for column in columns:
                (dangling,) = conn.execute(f"""SELECT count(*) FROM {table} WHERE {column} IS NOT NULL
                                               AND {column} NOT IN (SELECT id FROM StringIds)""").fetchone()
                assert dangling == 0, (table, column)
        nested = conn.execute(
            f"""SELECT c.text, count(*) FROM NVTX_EVENTS c JOIN NVTX_EVENTS p
                  ON p.globalTid = c.globalTid AND p.text LIKE 'ProfilerStep#%' AND p.start < c.start AND c.end < p.end
                WHERE c.text IN ('forward', 'backward', 'optimizer') AND c.globalTid & {PID_MASK} = ?
                GROUP BY c.text""", (_gpid(pid),)).fetchall()
        assert sorted(nested) == [(name, job.spec.iterations) for name in ("backward", "forward", "optimizer")]
        marks = conn.execute(f"""SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34 AND end IS NULL
                                 AND globalTid & {PID_MASK} = ?""", (_gpid(pid),)).fetchone()
        assert marks == (2,)


def test_correlation_ids_repeat_across_processes(multi):
    conn = sqlite3.connect(multi.files[0])
    (shared,) = conn.execute(
        """SELECT count(*) FROM (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL
           GROUP BY correlationId HAVING count(DISTINCT globalPid) > 1)""").fetchone()
    assert shared > 0


def test_every_gpu_operation_has_its_launch_call(job):
    expected = {"CUPTI_ACTIVITY_KIND_MEMCPY": {("cudaMemcpyAsync_v3020", 0)},
                "CUPTI_ACTIVITY_KIND_MEMSET": {("cudaMemsetAsync_v3020", 0)},
                "CUPTI_ACTIVITY_KIND_KERNEL": {("cudaLaunchKernel_v7000", 0), ("cuLaunchKernelEx", 1)}}
    for path in job.files:
        conn = sqlite3.connect(path)
        for table, launches in expected.items():
            total, matched, names, bad_order = conn.execute(
                f"""SELECT (SELECT count(*) FROM {table}), count(*), group_concat(DISTINCT s.value || ':' ||
                           r.eventClass), sum(r.start >= g.start)
                    FROM {table} g JOIN CUPTI_ACTIVITY_KIND_RUNTIME r
                      ON r.correlationId = g.correlationId AND (r.globalTid & {PID_MASK}) = g.globalPid
                    JOIN StringIds s ON s.id = r.nameId""").fetchone()
            assert matched == total
            assert {(n, int(c)) for n, c in (x.split(":") for x in names.split(","))} == launches
            assert bad_order == 0
        nccl = conn.execute(
            f"""SELECT DISTINCT r.eventClass, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k
               JOIN StringIds n ON n.id = k.shortName JOIN CUPTI_ACTIVITY_KIND_RUNTIME r
                 ON r.correlationId = k.correlationId AND (r.globalTid & {PID_MASK}) = k.globalPid
               JOIN StringIds s ON s.id = r.nameId WHERE n.value LIKE 'ncclDevKernel%'""").fetchall()
        assert nccl == [(1, "cuLaunchKernelEx")]


def test_nccl_launches_lie_in_nccl_ranges(job):
    for conn, rank, pid in _each_rank(job):
        launches = conn.execute(
            f"""SELECT k.start - r.start, sn.value,
                  (SELECT {NCCL_TEXT} FROM NVTX_EVENTS n WHERE n.globalTid = r.globalTid AND n.domainId = d.domainId
                     AND n.eventType = 59 AND n.start <= r.start AND n.end >= r.end)
                FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds sn ON sn.id = k.shortName
                JOIN CUPTI_ACTIVITY_KIND_RUNTIME r
                  ON r.correlationId = k.correlationId AND (r.globalTid & {PID_MASK}) = k.globalPid
                JOIN NVTX_EVENTS d ON d.eventType = 75 AND d.text = 'NCCL' AND d.globalTid = r.globalTid
                WHERE k.streamId != 7 AND k.globalPid = ?""", (_gpid(pid),)).fetchall()
        ranges = {"ncclDevKernel_AllReduce_Sum_f32_RING_LL": "ncclAllReduce", "ncclDevKernel_SendRecv": "ncclGroupEnd"}
        assert len(launches) == len(job.nccl_ops[rank]) - sum(o.collective == "Recv" for o in job.nccl_ops[rank])
        assert all(ranges[kernel] == around for _, kernel, around in launches)
        assert all(200_000 <= delay <= 2_000_000 for delay, _, _ in launches)
        if job.spec.world_size > 1:  # one p2p group per iteration, in the real file's order
            names = [n for (n,) in conn.execute(
                f"""SELECT {NCCL_TEXT} FROM NVTX_EVENTS n WHERE domainId = 1 AND eventType = 59
                    AND globalTid & {PID_MASK} = ? ORDER BY start""", (_gpid(pid),))]
            group = ["ncclCommCount", "ncclGroupStart", "ncclSend", "ncclRecv", "ncclGroupEnd", "ncclAllReduce"]
            assert names == group * job.spec.iterations


def test_streams_never_overlap_and_comm_overlaps_compute(job):
    for conn, rank, pid in _each_rank(job):
        ops = conn.execute(
            """SELECT streamId, start, end FROM (
                 SELECT streamId, start, end, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL
                 SELECT streamId, start, end, globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL
                 SELECT streamId, start, end, globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET)
               WHERE globalPid = ? ORDER BY streamId, start""", (_gpid(pid),)).fetchall()
        for (stream_a, _, end_a), (stream_b, start_b, _) in zip(ops, ops[1:]):
            assert stream_a != stream_b or end_a < start_b
        assert job.comm_overlap_ns[rank] > 0
        compute = [(k.start_ns, k.end_ns) for k in job.kernels[rank] if k.kind == "compute"]
        comm = [(k.start_ns, k.end_ns) for k in job.kernels[rank] if k.kind == "comm"]
        brute = sum(max(0, min(b, d) - max(a, c)) for a, b in compute for c, d in comm)
        assert brute == job.comm_overlap_ns[rank]


def test_kernels_are_launched_inside_their_iteration(job):
    for rank, kernels in job.kernels.items():
        steps = {n: (start, end) for n, start, end in job.iterations[rank]}
        assert all(steps[k.iteration][0] < k.start_ns < k.end_ns < steps[k.iteration][1] for k in kernels)
        ops = job.nccl_ops[rank]
        assert [o.collective for o in ops].count("AllReduce") == job.spec.iterations
        assert all(o.bytes > 0 and steps[o.iteration][0] < o.start_ns for o in ops)


def test_allreduce_ends_together_on_all_ranks(multi):
    ends = {}
    for rank, ops in multi.nccl_ops.items():
        for o in ops:
            if o.collective == "AllReduce":
                ends.setdefault(o.iteration, []).append(o.end_ns)
    assert all(max(e) - min(e) < 5_000 for e in ends.values())


# ---- truth helpers, sizes, determinism ---------------------------------------------------------------


def test_kernel_summary_matches_file(multi):
    summary = multi.kernel_summary()
    durations = {}
    for path in multi.files:
        conn = sqlite3.connect(path)
        for name, d in conn.execute("SELECT s.value, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                                    "JOIN StringIds s ON s.id = k.demangledName"):
            durations.setdefault(name, []).append(d)
    assert summary.keys() == durations.keys()
    for name, d in durations.items():
        s = summary[name]
        assert (s["total_ns"], s["instances"], s["min_ns"], s["max_ns"]) == (sum(d), len(d), min(d), max(d))
        assert s["median_ns"] == statistics.median(d) and s["stddev_ns"] == pytest.approx(statistics.stdev(d))
    one = multi.kernel_summary(rank=0)
    assert sum(s["instances"] for s in one.values()) == len(multi.kernels[0])


def test_single_instance_stddev_is_zero(tmp_path):
    truth = generate_job(tmp_path, JobSpec(world_size=1, iterations=1, layers=1))
    allreduce = truth.kernel_summary(0)["ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage"
                                        "<(unsigned long)4096>)"]
    assert allreduce["instances"] == 1 and allreduce["stddev_ns"] == 0.0


def test_kernel_target_maps_to_layers():
    spec = JobSpec(world_size=8, iterations=5, kernels_per_rank_target=250_000)
    assert abs(spec.kernels_per_rank - 250_000) < 250_000 * 0.001
    assert JobSpec(layers=4, iterations=5, world_size=2).kernels_per_rank == 5 * (4 * 18 + 4 + 2)


def _dump(paths: list[Path]) -> list:
    dump = []
    for path in paths:
        conn = sqlite3.connect(path)
        dump += [(path.name, t, conn.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall()) for t in _tables(conn)]
    return dump


def test_same_seed_gives_identical_files(tmp_path):
    spec = JobSpec(world_size=2, ranks_per_file=2, iterations=2, layers=2, seed=11)
    first = generate_job(tmp_path / "a", spec)
    second = generate_job(tmp_path / "b", spec)
    assert _dump(first.files) == _dump(second.files)
    other = generate_job(tmp_path / "c", JobSpec(world_size=2, ranks_per_file=2, iterations=2, layers=2, seed=12))
    assert _dump(other.files) != _dump(first.files)
