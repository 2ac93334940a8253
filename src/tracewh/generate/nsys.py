"""Nsight Systems SQLite exports of a synthetic multi-rank training job whose true numbers are known.

The files mimic ``nsys export --type sqlite`` of nsys 2026.2.1 (schema 3.25.0): same tables, columns
and declared types (DDL copied verbatim into ``nsys_schema.sql``), lazily created (only tables with
rows, plus the always-present ones), session-relative timestamps (UTC = utcEpochNs + start).

Job model (per rank, per iteration ``N``; everything CPU-side on the rank's main thread)::

    ProfilerStep#N  [NVTX push/pop, domain 0]
      2x cudaMemcpyAsync HtoD, 1x cudaMemsetAsync
      forward   : layers x FORWARD kernels; after layer layers//2 the p2p group
                  (ncclCommCount, ncclGroupStart, ncclSend, ncclRecv, ncclGroupEnd ∋ cuLaunchKernelEx)
                  when world_size > 1 -> one ncclDevKernel_SendRecv on the NCCL stream
      backward  : layers x BACKWARD kernels; after layer layers//2 ncclAllReduce ∋ cuLaunchKernelEx
                  -> one ncclDevKernel_AllReduce_Sum_f32_RING_LL, overlapping the rest of backward
      optimizer : cudaStreamWaitEvent (the compute stream waits for the AllReduce), OPTIMIZER kernels,
                  cudaMemcpyAsync DtoD
      cudaMemcpyAsync DtoH (loss), cudaStreamSynchronize (waits for both streams)

Host-side causes of GPU idle time (``JobSpec`` options, off by default; ``JobTruth.host`` then lists
every main-thread activity, ``truth.py`` computes host_breakdown's and idle_gaps' answers from it):
``data_loader_ns`` starts each step with an ``enumerate(DataLoader)#...__next__`` NVTX range that
long (the GPU drains and waits); ``checkpoint_every`` ends every Nth step, after the sync, with a
checkpoint write as OS runtime calls (OSRT_API: open64, 4 x write, fsync, close); ``sync_stalls``
makes the input copy pageable, the loss copy a blocking ``cudaMemcpy``, writes the
CUPTI_ACTIVITY_KIND_SYNCHRONIZATION rows of the stream syncs and puts a ``cudaDeviceSynchronize``
before each checkpoint.

Sizes: kernels per iteration = layers * 18 + 4 + (2 if world_size > 1 else 1), see
``JobSpec.kernels_per_rank``; ``kernels_per_rank_target`` picks ``layers`` for a wanted total
(8 ranks x 250k kernels: ``JobSpec(world_size=8, iterations=5, kernels_per_rank_target=250_000)``).

Timing: the CPU launches kernels 0.3-1 ms ahead of the GPU (a bounded launch queue); kernels on a
stream run back to back (1-3 us apart, ~3% after an idle gap of 20-200 us). An NCCL kernel waits for
the work queued on the compute stream at its launch (cudaStreamWaitEvent), so it starts 0.2-~1 ms
after its cuLaunchKernelEx and overlaps the compute kernels launched after it: the SendRecv the
second half of forward, the AllReduce the second half of backward (``JobTruth.comm_overlap_ns``).
Ranks are simulated in lockstep, one iteration at a time, on one job clock: a SendRecv ends when
its slower peer has arrived, an AllReduce ends at the same time on every rank (the last arrival
plus the transfer), so NCCL kernel time includes waiting for the slowest rank (ranks drift apart by
~0.3% of the compute before the collective, e.g. ~15 ms per iteration at 250k kernels/rank). Rows are buffered per iteration, sorted by start and written with executemany.

Files: ``<prefix>rank<R>.sqlite`` (one report per rank, each with its own utcEpochNs 1-5 ms apart and
host ``node<k>``) or, with ``ranks_per_file > 1``, ``<prefix>node<k>.sqlite`` holding consecutive
ranks as processes of one torchrun report (one timeline, GPU ids 0..ranks_per_file-1).

``JobSpec(autograd_nvtx=True)`` adds what ``nsys profile --pytorch=autograd-nvtx`` records: one NVTX
push/pop range per aten op, nested as in a real capture (``ProfilerStep#N > forward > aten::linear >
aten::t > aten::transpose > aten::as_strided``: depth 5), each kernel's launching call inside its
innermost op's range, names with their ``seq`` and ``op_id`` suffixes; backward runs on the autograd
thread (``pt_autograd_0``: its launches, ranges and the AllReduce), as PyTorch's engine does.
``JobSpec(stray_nvtx=True)`` adds the ranges a range join gets wrong most easily: per step two
start/end ranges that overlap each other and cross the push/pop ranges without nesting, and ranges
that never end (a push/pop ``train`` range around the whole job, a start/end range opened in the
last step): their ``end`` is NULL, as in a capture stopped before they close.

``JobSpec(nccl_payloads=True)`` writes what ``nsys export --include-blobs=true`` exports of NCCL's
NVTX extended payloads (NCCL 2.27 schemas in NVTX_PAYLOAD_SCHEMAS/_ENTRIES, one blob per NCCL range
in NVTX_EVENTS.binaryData, ``payload_blob``) on two communicators: the world and a p2p one (same
ranks, another commHash, each made by an ncclCommInitRankConfig range at start-up). The p2p group
runs on the p2p communicator; after the AllReduce come a Broadcast (root 0), a grouped AllGather +
ReduceScatter (one kernel), a Reduce (max, root world-1, on the p2p communicator) and an AlltoAll:
4 more NCCL kernels per iteration. ``NcclOpTruth`` then carries each operation's communicator and
its sequence number on it. With ``include_blobs=False`` the same job is exported as nsys export
does by default: the schemas are there, the blobs are not.

``JobSpec(memory_usage=True)`` adds what ``nsys profile --cuda-memory-usage=true`` exports
(CUDA_GPU_MEMORY_USAGE_EVENTS, made by cudaMalloc/cudaFree calls; ``JobTruth.memory``); off by
default, so the default files stay byte-identical.

``JobSpec(gpu_metrics=True)`` adds what ``nsys profile --gpu-metrics-devices=all`` exports (GPU_METRICS,
TARGET_INFO_GPU_METRICS: one sample per GPU and metric every 100 us) and ``JobSpec(nic_metrics=True)`` what
``--nic-metrics`` exports (NET_NIC_METRIC and its name tables: one InfiniBand NIC per host, bytes sent and
received per 1 ms): each sample's value follows the GPU work in its interval (``counter_value``), and
``JobTruth.gpu_metrics`` / ``nic_metrics`` hold every value written, in UTC. Both off by default.

Deliberate realism traps: correlationIds restart from the same base in every process (they repeat
across processes and files), pids are only unique within a file, stream ids are the same in every
process, demangled names use the nsys spelling ``(int)4`` / ``(unsigned long)4096``.
"""

from __future__ import annotations

import gc
import math
import random
import sqlite3
import struct
from bisect import bisect_right
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from operator import itemgetter
from pathlib import Path
from typing import NamedTuple

from .truth import _merged, kernel_summary

SCHEMA_SQL = Path(__file__).with_name("nsys_schema.sql")
MEMORY_SCHEMA_SQL = Path(__file__).with_name("nsys_memory_schema.sql")
COUNTERS_SCHEMA_SQL = Path(__file__).with_name("nsys_counters_schema.sql")
# tables created on their first rows, as nsys leaves empty tables out: name -> CREATE TABLE
LAZY_TABLES = {ddl.split()[2]: ddl for ddl in (
    statement[statement.index("CREATE TABLE"):]
    for statement in Path(__file__).with_name("nsys_schema_lazy.sql").read_text().split(";\n")
    if "CREATE TABLE" in statement)}

VM_BITS = 1 << 48  # VM id 1 on a normal Linux capture
COMPUTE_STREAM = 7
NCCL_STREAM = 20
FIRST_STEP = 1
# CUDA memory usage rows (JobSpec.memory_usage): ENUM_CUDA_MEM_KIND and made-up device addresses
MEM_KIND_PINNED, MEM_KIND_DEVICE = 1, 2
EARLIER_ADDRESS, WEIGHTS_ADDRESS, WORKSPACE_ADDRESS = 0x7F0000000000, 0x7F0100000000, 0x7F0200000000
ACTIVATIONS_ADDRESS, PINNED_ADDRESS = 0x7F1000000000, 0x7E0000000000
P2P_BYTES = 8 << 20  # one activation tensor per p2p group
ALLREDUCE_BYTES = 25 << 20  # DDP's default 25 MiB gradient bucket
# JobSpec.nccl_payloads: the NCCL domain's payload schemas, as NCCL 2.27 registers them: schema id
# (1 << 24) + NVTX_SID_<function>, entries (name, NVTX_PAYLOAD_ENTRY_TYPE_*, offset), payload size.
# Types: 5 INT, 18 UINT64, 22 SIZE; REDOP_ENUM is NCCL's registered ncclRedOp_t enum (an int).
NCCL_DOMAIN = 1
REDOP_ENUM = (1 << 24) + 16
_COMM, _SIZE = ("NCCL communicator ID", 18, 0), ("Message size [bytes]", 22, 8)
NCCL_SCHEMAS = {  # NCCL API -> (schema id, entries, payload size)
    "ncclCommInitRankConfig": ((1 << 24) + 11, (_COMM, ("No. of ranks", 5, 8), ("Rank", 5, 12),
                                                ("CUDA device", 5, 16)), 24),
    "ncclAllGather": ((1 << 24) + 4, (_COMM, _SIZE), 16),
    "ncclAllReduce": ((1 << 24) + 5, (_COMM, _SIZE, ("Reduction operation", REDOP_ENUM, 16)), 24),
    "ncclBroadcast": ((1 << 24) + 6, (_COMM, _SIZE, ("Root", 5, 16)), 24),
    "ncclReduceScatter": ((1 << 24) + 7, (_COMM, _SIZE, ("Reduction operation", REDOP_ENUM, 16)), 24),
    "ncclReduce": ((1 << 24) + 8, (_COMM, _SIZE, ("Root", 5, 16), ("Reduction operation", REDOP_ENUM, 20)), 24),
    "ncclSend": ((1 << 24) + 9, (_COMM, _SIZE, ("Peer rank", 5, 16)), 24),
    "ncclRecv": ((1 << 24) + 10, (_COMM, _SIZE, ("Peer rank", 5, 16)), 24),
    "ncclAlltoAll": ((1 << 24) + 16, (_COMM, _SIZE), 16),
}
REDUCE_OPS = ("Sum", "Prod", "Max", "Min", "Avg")  # ncclRedOp_t
BROADCAST_BYTES, GATHER_BYTES, SCATTER_BYTES, REDUCE_BYTES, ALLTOALL_BYTES = \
    1 << 20, 2 << 20, 512 << 10, 64 << 10, 128 << 10  # per rank (NCCL's message size)


def payload_blob(api: str, values: tuple) -> bytes:
    """NVTX_EVENTS.binaryData of one NCCL range, as nsys export --include-blobs writes it: a
    32-byte header of four little-endian u64 (domain, schema id, payload size, payload offset),
    then the payload struct, its padding left as garbage (0xAB), as a C struct's is."""
    schema, entries, size = NCCL_SCHEMAS[api]
    payload = bytearray(b"\xab" * size)
    for (_, type_id, offset), value in zip(entries, values):
        fmt = {5: "<i", 18: "<Q", 22: "<Q"}.get(type_id, "<i")
        struct.pack_into(fmt, payload, offset, value)
    return struct.pack("<QQQQ", NCCL_DOMAIN, schema, size, 32) + bytes(payload)
# Hardware counters (JobSpec.gpu_metrics, nic_metrics): metric -> (what it follows, its value while
# that runs all interval long); a sample's value is that times the covered share of its interval.
GPU_METRIC_SAMPLE_NS = 100_000  # nsys' default --gpu-metrics-frequency=10000
GPU_METRICS = {  # metricId -> (metricName, follows, value when busy); in the Hopper set's names
    0: ("GPC Clock Frequency [MHz]", None, 1980),
    1: ("SMs Active [Throughput %]", "compute", 100),
    2: ("PCIe RX Throughput [Throughput %]", "HtoD", 40),
    3: ("PCIe TX Throughput [Throughput %]", "DtoH", 40),
    4: ("NVLink RX Responses User Data [Throughput %]", "comm", 60),
    5: ("NVLink TX Responses User Data [Throughput %]", "comm", 60),
}
GPU_METRICS_TYPE = "GH100 General Metrics for NVIDIA NVLink"
NIC_SAMPLE_NS = 1_000_000
NIC_METRICS = {0: ("IB: Bytes sent", "comm", 25.0), 1: ("IB: Bytes received", "comm", 25.0)}  # bytes per ns busy
NIC_NAME, NIC_GUID = "mlx5_0", 0x146DAE0300A1B2C4


def global_tid(pid: int, tid: int) -> int:
    """nsys globalTid: <hw:8><vm:8><pid:24><tid:24>; the globalPid is the same with tid 0."""
    return VM_BITS | (pid << 24) | tid


# --------------------------------------------------------------------------------------------
# Public API


@dataclass(frozen=True)
class JobSpec:
    """What to generate; the same spec (incl. seed) always gives byte-identical table contents."""

    world_size: int = 2
    ranks_per_file: int = 1
    iterations: int = 3
    layers: int = 2
    seed: int = 0
    prefix: str = ""
    utc_start_ns: int = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z
    kernels_per_rank_target: int | None = None  # when set, overrides ``layers``
    # the kernels of each phase, as (name, kernel types) pairs; None: PHASES (pair.py changes them)
    phases: tuple[tuple[str, tuple[KernelType, ...]], ...] | None = None
    # nsys profile --cuda-memory-usage=true: CUDA_GPU_MEMORY_USAGE_EVENTS rows (see _Rank._memory_*)
    memory_usage: bool = False
    # Host-side causes of GPU idle time, all off by default (existing fixtures stay the same):
    data_loader_ns: int = 0  # each step starts with a DataLoader __next__ range this long (ns)
    checkpoint_every: int = 0  # every Nth step ends with a checkpoint write (OS runtime calls)
    sync_stalls: bool = False  # sync rows, a blocking cudaMemcpy, a pageable copy, cudaDeviceSynchronize
    # NVTX shapes of real captures, off by default (see the module docstring):
    autograd_nvtx: bool = False  # one nested push/pop range per aten op; backward on the autograd thread
    stray_nvtx: bool = False  # overlapping non-nested start/end ranges and ranges that never end
    # The export's time base (nsys export --ts-normalize / --ts-shift): with ts_normalize every
    # event time is written as UTC epoch ns (session start added); ts_shift_ns is added on top.
    # Both are recorded in the metadata table, as nsys does (_Report._export_meta).
    ts_normalize: bool = False
    ts_shift_ns: int = 0
    # "EXPORT_META_DATA": the 2023.2 exporter's metadata table (and its misspelled keys)
    export_meta_table: str = "META_DATA_EXPORT"
    # NCCL's NVTX payloads as blobs (nsys export --include-blobs), two communicators and every
    # collective kind (see the module docstring)
    nccl_payloads: bool = False
    # with nccl_payloads: False writes the schemas but no blob, as nsys export does without
    # --include-blobs=true (its default)
    include_blobs: bool = True
    # Hardware counters, off by default: --gpu-metrics-devices=all and --nic-metrics (GPU_METRICS above)
    gpu_metrics: bool = False
    nic_metrics: bool = False

    @property
    def host_causes(self) -> bool:
        """Whether the main thread's activities are recorded in the truth (JobTruth.host)."""
        return bool(self.data_loader_ns or self.checkpoint_every or self.sync_stalls)

    def __post_init__(self) -> None:
        if min(self.world_size, self.ranks_per_file, self.iterations, self.layers) < 1:
            raise ValueError("world_size, ranks_per_file, iterations and layers must be >= 1")

    @property
    def comm_kernels_per_iteration(self) -> int:
        return (2 if self.world_size > 1 else 1) + (4 if self.nccl_payloads else 0)

    @property
    def kernel_phases(self) -> dict[str, tuple[KernelType, ...]]:
        return dict(self.phases) if self.phases is not None else PHASES

    @property
    def resolved_layers(self) -> int:
        if self.kernels_per_rank_target is None:
            return self.layers
        phases = self.kernel_phases
        fixed = len(phases["optimizer"]) + self.comm_kernels_per_iteration
        per_layer = len(phases["forward"]) + len(phases["backward"])
        return max(1, round((self.kernels_per_rank_target / self.iterations - fixed) / per_layer))

    @property
    def kernels_per_iteration(self) -> int:
        layers = self.resolved_layers
        phases = self.kernel_phases
        return (layers * (len(phases["forward"]) + len(phases["backward"])) + len(phases["optimizer"])
                + self.comm_kernels_per_iteration)

    @property
    def kernels_per_rank(self) -> int:
        return self.iterations * self.kernels_per_iteration

    @property
    def file_count(self) -> int:
        return math.ceil(self.world_size / self.ranks_per_file)


class KernelTruth(NamedTuple):
    name: str  # demangled
    short_name: str
    start_ns: int  # UTC
    end_ns: int  # UTC
    device_id: int
    stream_id: int
    correlation_id: int
    iteration: int
    kind: str  # 'compute' | 'comm'


class MemcpyTruth(NamedTuple):
    bytes: int
    kind: str  # 'HtoD' | 'DtoH' | 'DtoD'
    start_ns: int  # UTC
    end_ns: int  # UTC
    iteration: int


class MemoryTruth(NamedTuple):
    start_ns: int  # UTC
    bytes: int  # signed: > 0 allocation, < 0 free
    address: int
    device: str  # 'GPU' | 'CPU' (pinned host memory)
    iteration: int | None  # None: outside every ProfilerStep range


class NcclOpTruth(NamedTuple):
    collective: str  # 'AllReduce' | 'Send' | 'Recv' (nccl_payloads: every kind)
    short_name: str  # of the kernel that ran it
    start_ns: int  # kernel start, UTC
    end_ns: int  # kernel end, UTC
    bytes: int  # message size as passed to the NCCL API (NCCL's payload: one rank's share)
    iteration: int
    peer: int | None  # peer rank of a Send/Recv
    # JobSpec.nccl_payloads only:
    comm: int | None = None  # commHash of its communicator
    seq: int | None = None  # the n-th collective on comm on this rank (p2p: n-th to/from that peer)
    root: int | None = None  # Broadcast, Reduce
    reduce_op: str | None = None  # AllReduce, ReduceScatter, Reduce
    group_size: int | None = None  # ranks of comm


@dataclass
class JobTruth:
    """What the generator wrote, per rank unless keyed by file. Times are UTC epoch ns (utcEpochNs + start)."""

    spec: JobSpec
    layers: int
    files: list[Path] = field(default_factory=list)
    file_ranks: dict[Path, list[int]] = field(default_factory=dict)
    rank_file: dict[int, Path] = field(default_factory=dict)
    rank_pid: dict[int, int] = field(default_factory=dict)
    hostnames: dict[Path, str] = field(default_factory=dict)
    utc_epoch_ns: dict[Path, int] = field(default_factory=dict)
    kernels: dict[int, list[KernelTruth]] = field(default_factory=dict)
    memcpy: dict[int, list[MemcpyTruth]] = field(default_factory=dict)
    memset: dict[int, int] = field(default_factory=dict)
    runtime_calls: dict[int, int] = field(default_factory=dict)
    nvtx_ranges: dict[int, int] = field(default_factory=dict)  # ranges + marks, no domain-create rows
    iterations: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict)  # (N, start, end) UTC
    nccl_ops: dict[int, list[NcclOpTruth]] = field(default_factory=dict)
    comm_overlap_ns: dict[int, int] = field(default_factory=dict)  # comm kernels ∩ compute kernels
    memory: dict[int, list[MemoryTruth]] = field(default_factory=dict)  # JobSpec.memory_usage only
    # spec.host_causes only: the main thread's activities as (category, start, end) UTC ns, the
    # categories of HOST_CATEGORIES, and every GPU op's (start, end) UTC ns (truth.py reads them)
    host: dict[int, list[tuple[str, int, int]]] = field(default_factory=dict)
    gpu_busy: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    # spec.gpu_metrics: per rank (its GPU) every sample as (UTC ns, metricName, value);
    # spec.nic_metrics: per host every interval as (start, end UTC ns, counter name, value)
    gpu_metrics: dict[int, list[tuple[int, str, int]]] = field(default_factory=dict)
    nic_metrics: dict[str, list[tuple[int, int, str, int]]] = field(default_factory=dict)

    def kernel_summary(self, rank: int | None = None) -> dict[str, dict]:
        """Per kernel name, the numbers of nsys stats -r cuda_gpu_kern_sum (see truth.py)."""
        return kernel_summary(self.kernels, rank)


def generate_job(out_dir: str | Path, spec: JobSpec) -> JobTruth:
    """Write the job's .sqlite files into ``out_dir`` (overwriting) and return what was written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    truth = JobTruth(spec=spec, layers=spec.resolved_layers)
    with _gc_paused():
        reports = _open_reports(out_dir, spec)
        ranks = [rank for report in reports for rank in report.ranks]
        for rank in ranks:
            rank.begin()
        for n in range(FIRST_STEP, FIRST_STEP + spec.iterations):
            for rank in ranks:
                rank.forward_backward(n, truth.layers)
            _resolve_nccl(ranks)
            for rank in ranks:
                rank.optimizer_and_sync(n)
            for report in reports:
                report.flush()
        for rank in ranks:
            rank.end()
        for report in reports:
            report.close()
            report.record(truth)
    return truth


@contextmanager
def _gc_paused():
    """Millions of new tuples trigger full collections (a third of the run time); nothing here forms cycles."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# --------------------------------------------------------------------------------------------
# Kernel catalog: launch configurations and names as seen in real H100 exports (GEMM names per
# cuBLAS' sm90 naming). cluster = (x, y, z, schedulingPolicy, maxPotentialClusterSize, maxActive).


class KernelType(NamedTuple):
    name: str
    short: str
    mangled: str | None
    regs: int
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    static_smem: int
    dynamic_smem: int
    local_total: int
    smem_executed: int
    smem_limit_config: int
    cluster: tuple[int, int, int, int, int, int]
    base_ns: int  # mean duration


KERNEL_STAGE_COLUMNS = ("start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "gridId")
NO_CLUSTER = (0, 0, 0, 1, 0, 0)
LOCAL = 250871808


def _aten(name, short, mangled, regs, grid, block, base_ns, static_smem=0, smem_executed=32768):
    return KernelType(name, short, mangled, regs, grid, block, static_smem, 0, LOCAL, smem_executed, 0,
                      NO_CLUSTER, base_ns)


def _gemm(name, grid, dyn_smem, base_ns):
    # cuBLAS/nvjet kernels are extern "C": nsys stores the same string in all three name columns
    return KernelType(name, name, name, 168, grid, (384, 1, 1), 0, dyn_smem, LOCAL, 233472, 1,
                      (2, 1, 1, 1, 16, 66), base_ns)


def _nccl(short):
    name = f"{short}(ncclDevKernelArgsStorage<(unsigned long)4096>)"
    mangled = f"_Z{len(short)}{short}24ncclDevKernelArgsStorageILm4096EE"
    return KernelType(name, short, mangled, 96, (32, 1, 1), (640, 1, 1), 21568, 82240, 787218432, 135168, 1,
                      (4, 1, 1, 1, 8, 30), 0)


LAYER_NORM = _aten(
    "void at::native::<unnamed>::vectorized_layer_norm_kernel<float, float, (bool)0>(int, T2, const T1 *, "
    "const T1 *, const T1 *, T2 *, T2 *, T1 *)",
    "vectorized_layer_norm_kernel",
    "_ZN2at6native53_GLOBAL__N__21739cd4_20_layer_norm_kernel_cu_9c5ada8a28vectorized_layer_norm_kernelIffLb0EE"
    "EviT0_PKT_S6_S6_PS3_S7_PS4_",
    39, (15600, 1, 1), (32, 4, 1), 42_000)
FLASH_FWD = KernelType(
    "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<(int)128, (int)128, (int)64, (int)4, (bool)0, (bool)0, "
    "cutlass::bfloat16_t, Flash_kernel_traits<(int)128, (int)128, (int)64, (int)4, cutlass::bfloat16_t>>, (bool)0, "
    "(bool)0, (bool)0, (bool)0, (bool)0, (bool)1, (bool)0, (bool)0>(flash::Flash_fwd_params)",
    "flash_fwd_kernel",
    "_ZN5flash16flash_fwd_kernelI23Flash_fwd_kernel_traitsILi128ELi128ELi64ELi4ELb0ELb0EN7cutlass10bfloat16_tE19"
    "Flash_kernel_traitsILi128ELi128ELi64ELi4ES3_EELb0ELb0ELb0ELb0ELb0ELb1ELb0ELb0EEEvNS_16Flash_fwd_paramsE",
    255, (244, 1, 6), (128, 1, 1), 0, 65536, 285474816, 135168, 1, NO_CLUSTER, 310_000)
GEMM_QKV = _gemm("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_"
                 "k_off_kernel__5x_cublas", (132, 1, 1), 213196, 180_000)
GEMM_MLP_UP = _gemm("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_"
                    "segment_k_off_kernel__5x_cublas", (132, 1, 1), 221388, 290_000)
GEMM_DGRAD = _gemm("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
                   "segment_k_off_kernel__5x_cublas", (132, 1, 1), 213196, 260_000)
GEMM_WGRAD = _gemm("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x256x64_warpgroupsize2x1x1_execute_"
                   "segment_k_off_kernel__5x_cublas", (132, 1, 1), 221388, 330_000)
NVJET_OUT = _gemm("nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN", (2, 66, 1), 213196, 120_000)
NVJET_MLP_DOWN = _gemm("nvjet_tst_192x208_64x4_1x1_h_bz_coopB_bias_TNT", (1, 132, 1), 221388, 270_000)
NVJET_SMALL = _gemm("nvjet_tst_96x64_64x10_1x2_h_bz_bias_TNN", (2, 64, 1), 221500, 9_000)
GELU = _aten(
    "void at::native::vectorized_elementwise_kernel<(int)8, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase &, "
    "at::native::GeluType)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 4)]::operator ()() "
    "const::[lambda(c10::BFloat16) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)",
    "vectorized_elementwise_kernel",
    "_ZN2at6native29vectorized_elementwise_kernelILi8EZZZNS0_18GeluCUDAKernelImplERNS_18TensorIteratorBaseENS0_8Gelu"
    "TypeEENKUlvE_clEvENKUlvE2_clEvEUlN3c108BFloat16EE_St5arrayIPcLm2EEEEviT0_T1_",
    32, (136500, 1, 1), (128, 1, 1), 60_000)
ADD_BF16 = _aten(
    "void at::native::vectorized_elementwise_kernel<(int)8, at::native::CUDAFunctor_add<c10::BFloat16>, "
    "std::array<char *, (unsigned long)3>>(int, T2, T3)",
    "vectorized_elementwise_kernel",
    "_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_15CUDAFunctor_addIN3c108BFloat16EEESt5arrayIPcLm3EEEEviT0_T1_",
    34, (23400, 1, 1), (128, 1, 1), 30_000)
MUL_BF16 = _aten(
    "void at::native::elementwise_kernel<(int)128, (int)4, void at::native::gpu_kernel_impl_nocast<at::native::"
    "BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float>>>"
    "(at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)",
    "elementwise_kernel",
    "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_22gpu_kernel_impl_nocastINS0_13BinaryFunctorIN3c108BFloat16ES5_S5_"
    "NS0_15binary_internal10MulFunctorIfEEEEEEvRNS_18TensorIteratorBaseERKT_EUliE_EEviT1_",
    18, (46800, 1, 1), (128, 1, 1), 50_000)
NEG = _aten(
    "void at::native::elementwise_kernel<(int)128, (int)2, void at::native::gpu_kernel_impl_nocast<at::native::"
    "neg_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 2)]::operator ()() const::[lambda() (instance 7)]"
    "::operator ()() const::[lambda(float) (instance 1)]>(at::TensorIteratorBase &, const T1 &)::[lambda(int) "
    "(instance 1)]>(int, T3)",
    "elementwise_kernel",
    "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastIZZZNS0_15neg_kernel_cudaERNS_18Tensor"
    "IteratorBaseEENKUlvE0_clEvENKUlvE5_clEvEUlfE_EEvS4_RKT_EUliE_EEviT1_",
    18, (93600, 1, 1), (128, 1, 1), 40_000)
CAT = _aten(
    "void at::native::<unnamed>::CatArrayBatchedCopy_vectorized<at::native::<unnamed>::OpaqueType<(unsigned int)2>, "
    "unsigned int, (int)2, (int)128, (int)1, (int)16, (int)8>(char *, at::native::<unnamed>::CatArrInputTensorMetadata"
    "<T1, T2, T4, T5>, at::native::<unnamed>::TensorSizeStride<T2, (unsigned int)4>, int, T2)",
    "CatArrayBatchedCopy_vectorized",
    "_ZN2at6native40_GLOBAL__N__0f1a8107_8_Shape_cu_49f7391c30CatArrayBatchedCopy_vectorizedINS1_10OpaqueTypeILj2EEEjLi2"
    "ELi128ELi1ELi16ELi8EEEvPcNS1_25CatArrInputTensorMetadataIT_T0_XT2_EXT3_EEENS1_16TensorSizeStrideIS8_Lj4EEEiS8_",
    18, (4224, 2, 1), (128, 1, 1), 90_000)
ADD_F32_UNROLLED = _aten(
    "void at::native::unrolled_elementwise_kernel<at::native::CUDAFunctor_add<float>, std::array<char *, "
    "(unsigned long)3>, (int)4, TrivialOffsetCalculator<(int)2, unsigned int>, TrivialOffsetCalculator<(int)1, "
    "unsigned int>, at::native::memory::LoadWithCast<(int)2>, at::native::memory::StoreWithCast<(int)1>>(int, T1, T2, "
    "T4, T5, T6, T7)",
    "unrolled_elementwise_kernel",
    "_ZN2at6native27unrolled_elementwise_kernelINS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EELi4E23TrivialOffsetCalculator"
    "ILi2EjES7_ILi1EjENS0_6memory12LoadWithCastILi2EEENSA_13StoreWithCastILi1EEEEEviT_T0_T2_T3_T4_T5_",
    32, (46800, 1, 1), (128, 1, 1), 60_000)
MEAN = _aten(
    "void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, at::native::MeanOps<float, float, "
    "float, float>, unsigned int, float, (int)4, (int)4>>(T3)",
    "reduce_kernel",
    "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_7MeanOpsIffffEEjfLi4ELi4EEEEEvT1_",
    32, (975, 1, 1), (32, 16, 1), 25_000, static_smem=16, smem_executed=16384)
BF16_COPY = _aten(
    "void at::native::vectorized_elementwise_kernel<(int)8, at::native::bfloat16_copy_kernel_cuda(at::TensorIterator"
    "Base &)::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)",
    "vectorized_elementwise_kernel",
    "_ZN2at6native29vectorized_elementwise_kernelILi8EZNS0_25bfloat16_copy_kernel_cudaERNS_18TensorIteratorBaseEEUlfE_"
    "St5arrayIPcLm2EEEEviT0_T1_",
    32, (46800, 1, 1), (128, 1, 1), 15_000)
FILL = _aten(
    "void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, std::array<char *, "
    "(unsigned long)1>>(int, T2, T3)",
    "vectorized_elementwise_kernel",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_",
    16, (46800, 1, 1), (128, 1, 1), 8_000, smem_executed=16384)
SUM = _aten(
    "void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
    "at::native::sum_functor<float, float, float>::operator ()(at::TensorIterator &)::[lambda(float, float) (instance "
    "1)]>, unsigned int, float, (int)4>>(T3)",
    "reduce_kernel",
    "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_14func_wrapper_tIfZNS0_11sum_functorIfffEclERNS_14Tensor"
    "IteratorEEUlffE_EEjfLi4EEEEEvT1_",
    28, (264, 1, 1), (32, 16, 1), 20_000, static_smem=16)
MUL_F32 = _aten(
    "void at::native::elementwise_kernel<(int)128, (int)4, void at::native::gpu_kernel_impl<at::native::BinaryFunctor"
    "<float, float, float, at::native::binary_internal::MulFunctor<float>>>(at::TensorIteratorBase &, const T1 &)::"
    "[lambda(int) (instance 1)]>(int, T3)",
    "elementwise_kernel",
    "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_15gpu_kernel_implINS0_13BinaryFunctorIfffNS0_15binary_internal10"
    "MulFunctorIfEEEEEEvRNS_18TensorIteratorBaseERKT_EUliE_EEviT1_",
    32, (46800, 1, 1), (128, 1, 1), 100_000)
ADD_F32 = _aten(
    "void at::native::elementwise_kernel<(int)128, (int)4, void at::native::gpu_kernel_impl<at::native::CUDAFunctor_add"
    "<float>>(at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)",
    "elementwise_kernel",
    "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_15gpu_kernel_implINS0_15CUDAFunctor_addIfEEEEvRNS_18TensorIterator"
    "BaseERKT_EUliE_EEviT1_",
    32, (46800, 1, 1), (128, 1, 1), 90_000)

FORWARD = (LAYER_NORM, GEMM_QKV, FLASH_FWD, NVJET_OUT, ADD_BF16, GEMM_MLP_UP, GELU, NVJET_MLP_DOWN)
BACKWARD = (NVJET_SMALL, GEMM_DGRAD, GEMM_WGRAD, MUL_BF16, NEG, CAT, GEMM_DGRAD, ADD_F32_UNROLLED, MEAN, BF16_COPY)
OPTIMIZER = (FILL, SUM, MUL_F32, ADD_F32)
PHASES = {"forward": FORWARD, "backward": BACKWARD, "optimizer": OPTIMIZER}
ALLREDUCE = _nccl("ncclDevKernel_AllReduce_Sum_f32_RING_LL")
SENDRECV = _nccl("ncclDevKernel_SendRecv")
BROADCAST = _nccl("ncclDevKernel_Broadcast_RING_LL")  # nccl_payloads only, as the next two
GENERIC = _nccl("ncclDevKernel_Generic")  # a group of collectives of several kinds
REDUCE = _nccl("ncclDevKernel_Reduce_Sum_f32_RING_LL")

# copy kind -> (ENUM_CUDA_MEMCPY_OPER id, srcKind, dstKind, bytes per ns); mem kinds: 0 pageable, 1 pinned, 2 device
COPY_KINDS = {"HtoD": (1, 1, 2, 24.0), "DtoH": (2, 2, 0, 12.0), "DtoD": (8, 2, 2, 1500.0)}

# autograd_nvtx: the ops around a launch (outermost first; the last one's call launches the kernel)
ATEN_CHAINS = {
    "gemm": ("aten::linear", "aten::addmm"),
    "other": ("aten::to", "aten::_to_copy", "aten::copy_"),
    "backward_gemm": ("autograd::engine::evaluate_function: AddmmBackward0", "AddmmBackward0", "aten::mm"),
    "backward": ("autograd::engine::evaluate_function: MulBackward0", "MulBackward0", "aten::mul"),
}
AUTOGRAD_TID = 50  # pt_autograd_0's tid - pid (ThreadNames)
DATA_LOADER_RANGE = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
GPU = dict(name="NVIDIA H100 80GB HBM3", l2=52428800, memory=85899345920, bandwidth=3352320000000,
           clock=1980000000, sms=132, chip="GH100")
BUS_IDS = ("18", "2A", "3A", "5D", "9A", "AB", "BA", "DB")


# --------------------------------------------------------------------------------------------
# One output file (one nsys report)


class _Report:
    def __init__(self, path: Path, index: int, spec: JobSpec, utc_epoch_ns: int, job_clock_offset: int):
        self.path, self.index, self.spec = path, index, spec
        self.utc_epoch_ns = utc_epoch_ns
        self.offset = job_clock_offset  # session time = job time - offset
        self.rng = random.Random(f"{spec.seed}/file/{index}")
        self.host = f"node{index}"
        self.launcher_pid = self.rng.randrange(100, 4000)
        self.strings: dict[str, int] = {}
        self.kernel_type_ids: dict[KernelType, int] = {}
        self.kernels: list[tuple] = []  # KERNEL_STAGE_COLUMNS + kernel type id
        self.runtime: list[tuple] = []
        self.memcpy: list[tuple] = []
        self.memset: list[tuple] = []
        self.nvtx: list[tuple] = []
        self.memory: list[tuple] = []
        self.syncs: list[tuple] = []
        self.osrt: list[tuple] = []
        self.lazy_created: set[str] = set()
        self.ranks: list[_Rank] = []
        path.unlink(missing_ok=True)
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536;"
                                + SCHEMA_SQL.read_text())
        if spec.memory_usage:
            self.conn.executescript(MEMORY_SCHEMA_SQL.read_text())
        if spec.gpu_metrics or spec.nic_metrics:
            self.conn.executescript(COUNTERS_SCHEMA_SQL.read_text())
        self.gpu_samples: dict[int, list[tuple[int, str, int]]] = {}  # device -> (session ns, name, value)
        self.nic_samples: list[tuple[int, int, str, int]] = []
        self.conn.execute("BEGIN")
        self._create_kernel_staging()

    def _create_kernel_staging(self) -> None:
        """Kernel rows are 40 columns wide, most fixed per kernel type: binding only the varying ones
        and joining the rest in SQL is ~3x faster than executemany over full rows."""
        columns = [c for _, c, *_ in self.conn.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")]
        fixed = [c for c in columns if c not in KERNEL_STAGE_COLUMNS]
        self.conn.execute(f"CREATE TEMP TABLE kernel_stage ({', '.join(KERNEL_STAGE_COLUMNS)}, kernelType)")
        self.conn.execute(f"CREATE TEMP TABLE kernel_type (kernelType INTEGER PRIMARY KEY, {', '.join(fixed)})")
        select = ", ".join(f"s.{c}" if c in KERNEL_STAGE_COLUMNS else f"t.{c}" for c in columns)
        self.kernel_sql = (f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT {select} FROM kernel_stage s "
                           "JOIN kernel_type t USING (kernelType) ORDER BY s.rowid")

    def sid(self, value: str) -> int:
        """Intern a string into StringIds."""
        i = self.strings.get(value)
        if i is None:
            i = self.strings[value] = len(self.strings)
        return i

    def kernel_type(self, kt: KernelType) -> int:
        """Id of the kernel's fixed columns (greenContextId, names, launch config) in kernel_type."""
        i = self.kernel_type_ids.get(kt)
        if i is None:
            i = self.kernel_type_ids[kt] = len(self.kernel_type_ids)
            mangled = None if kt.mangled is None else self.sid(kt.mangled)
            self.insert("kernel_type", [(i, 0, self.sid(kt.name), self.sid(kt.short), mangled, 1, 1, kt.regs,
                                         *kt.grid, *kt.block, kt.static_smem, kt.dynamic_smem, 0, kt.local_total,
                                         kt.smem_executed, None, kt.smem_limit_config, None, None, None, None,
                                         *kt.cluster, None, "[]")])
        return i

    def insert(self, table: str, rows: list[tuple]) -> None:
        if rows:
            marks = ",".join("?" * len(rows[0]))
            self.conn.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)

    def flush(self) -> None:
        """Write the buffered events sorted by start, as nsys does."""
        self.kernels.sort(key=itemgetter(0))
        self.insert("kernel_stage", self.kernels)
        self.conn.execute(self.kernel_sql)
        self.conn.execute("DELETE FROM kernel_stage")
        self.kernels.clear()
        for table, rows in (("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", self.syncs), ("OSRT_API", self.osrt)):
            if rows and table in LAZY_TABLES and table not in self.lazy_created:
                self.conn.execute(LAZY_TABLES[table])
                self.lazy_created.add(table)
        for table, rows in (("CUPTI_ACTIVITY_KIND_RUNTIME", self.runtime),
                            ("CUPTI_ACTIVITY_KIND_MEMCPY", self.memcpy), ("CUPTI_ACTIVITY_KIND_MEMSET", self.memset),
                            ("NVTX_EVENTS", self.nvtx), ("CUDA_GPU_MEMORY_USAGE_EVENTS", self.memory),
                            ("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", self.syncs), ("OSRT_API", self.osrt)):
            rows.sort(key=itemgetter(0))
            self.insert(table, rows)
            rows.clear()

    def close(self) -> None:
        self.flush()
        if self.spec.gpu_metrics:
            self._write_gpu_metrics()
        if self.spec.nic_metrics:
            self._write_nic_metrics()
        duration = max(rank.cpu for rank in self.ranks) - self.offset + 50_000_000
        system_clock = self.rng.randrange(5_000_000_000, 50_000_000_000)
        self.insert("TARGET_INFO_SESSION_START_TIME",
                    [(self.utc_epoch_ns, _iso(self.utc_epoch_ns), _iso(self.utc_epoch_ns), system_clock)])
        # 2026.x semantics: startTime is the target system clock at session start
        self.insert("ANALYSIS_DETAILS", [(VM_BITS, duration, system_clock, system_clock + duration)])
        self.insert("TARGET_INFO_SYSTEM_ENV", self._system_env())
        self.insert("TARGET_INFO_GPU", [self._gpu_row(rank.device_id) for rank in self.ranks])
        self.insert("PROCESSES", self._processes())
        self.insert("ThreadNames", self._thread_names())
        self.insert("META_DATA_CAPTURE", self._capture_meta(duration))
        if self.spec.nccl_payloads:
            self._payload_schemas()
        if self.spec.export_meta_table != "META_DATA_EXPORT":
            self.conn.execute(f"ALTER TABLE META_DATA_EXPORT RENAME TO {self.spec.export_meta_table}")
        self.insert(self.spec.export_meta_table, self._export_meta(self.utc_epoch_ns + duration + 60_000_000_000))
        self._shift_times()
        self.insert("StringIds", [(i, s) for s, i in self.strings.items()])
        self.conn.execute("COMMIT")
        self.conn.close()

    @property
    def time_shift_ns(self) -> int:
        """What nsys export added to every session-relative event time (EXPORT_CONFIG_TIME_SHIFT)."""
        return (self.utc_epoch_ns if self.spec.ts_normalize else 0) + self.spec.ts_shift_ns

    def _shift_times(self) -> None:
        """Event times as `nsys export --ts-normalize/--ts-shift` writes them: shifted in place."""
        shift = self.time_shift_ns
        if not shift:
            return
        tables = [t for (t,) in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            columns = {c for _, c, *_ in self.conn.execute(f'PRAGMA table_info("{table}")')}
            times = [c for c in ("start", "end", "timestamp") if c in columns]
            if times and table not in ("TARGET_INFO_SESSION_START_TIME", "ANALYSIS_DETAILS"):
                self.conn.execute(f'UPDATE "{table}" SET ' + ", ".join(f'"{c}" = "{c}" + {shift}' for c in times))

    def record(self, truth: JobTruth) -> None:
        truth.files.append(self.path)
        truth.file_ranks[self.path] = [rank.rank for rank in self.ranks]
        truth.hostnames[self.path] = self.host
        truth.utc_epoch_ns[self.path] = self.utc_epoch_ns
        for rank in self.ranks:
            rank.record(truth, self.path)
            if self.spec.gpu_metrics:
                truth.gpu_metrics[rank.rank] = [(self.utc_epoch_ns + t, name, v)
                                                for t, name, v in self.gpu_samples[rank.device_id]]
        if self.spec.nic_metrics:
            truth.nic_metrics[self.host] = [(self.utc_epoch_ns + a, self.utc_epoch_ns + b, name, v)
                                            for a, b, name, v in self.nic_samples]

    # ---- hardware counters (JobSpec.gpu_metrics, nic_metrics) ----------------------------------

    def _busy(self, device: int | None) -> dict[str, list[tuple[int, int]]]:
        """Session-time intervals of the device's (None: every device's) compute and NCCL
        kernels and HtoD / DtoH copies, as written."""
        names = {i: s for s, i in self.strings.items()}
        where, args = ("WHERE deviceId = ?", (device,)) if device is not None else ("", ())
        busy: dict[str, list[tuple[int, int]]] = {"compute": [], "comm": [], "HtoD": [], "DtoH": []}
        for start, end, short in self.conn.execute(
                f"SELECT start, end, shortName FROM CUPTI_ACTIVITY_KIND_KERNEL {where}", args):
            busy["comm" if names[short].startswith("nccl") else "compute"].append((start, end))
        for start, end, kind in self.conn.execute(
                f"SELECT start, end, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY {where}", args):
            if kind in (1, 2):
                busy["HtoD" if kind == 1 else "DtoH"].append((start, end))
        return busy

    def _write_gpu_metrics(self) -> None:
        rows, names = [], []
        for device in sorted({rank.device_id for rank in self.ranks}):
            type_id = VM_BITS | (2 << 32) | (0x18 << 8) | device  # <HW:8><VM:8><Source:16><Type:32>
            names += [(type_id, 2, GPU_METRICS_TYPE, m, name) for m, (name, _, _) in GPU_METRICS.items()]
            busy = self._busy(device)
            first = min(s for spans in busy.values() for s, _ in spans)
            last = max(e for spans in busy.values() for _, e in spans)
            t0 = first - first % GPU_METRIC_SAMPLE_NS
            bins = -(-(last - t0) // GPU_METRIC_SAMPLE_NS)
            samples = self.gpu_samples[device] = []
            for metric, (name, follows, busy_value) in GPU_METRICS.items():
                covered = covered_per_bin(busy[follows], t0, GPU_METRIC_SAMPLE_NS, bins) if follows else None
                for b in range(bins):
                    ts = t0 + (b + 1) * GPU_METRIC_SAMPLE_NS  # a sample closes its interval
                    value = busy_value if covered is None else counter_value(covered[b], GPU_METRIC_SAMPLE_NS,
                                                                             busy_value)
                    samples.append((ts, name, value))
                    rows.append((ts, ts, type_id, metric, value))
        rows.sort(key=itemgetter(1))
        self.insert("TARGET_INFO_GPU_METRICS", names)
        self.insert("GPU_METRICS", rows)

    def _write_nic_metrics(self) -> None:
        busy = self._busy(None)["comm"]
        first, last = min(s for s, _ in busy), max(e for _, e in busy)
        t0 = first - first % NIC_SAMPLE_NS
        bins = -(-(last - t0) // NIC_SAMPLE_NS)
        covered = covered_per_bin(busy, t0, NIC_SAMPLE_NS, bins)
        global_id = VM_BITS | (3 << 32) | 1
        self.insert("TARGET_INFO_NIC_INFO", [(NIC_GUID, "Active", 0, NIC_NAME, 4129, 5555, 2)])
        self.insert("NIC_ID_MAP", [(0, global_id)])
        self.insert("TARGET_INFO_NETWORK_METRICS", [(1, m, name, name, "bytes") for m, (name, _, _) in
                                                    NIC_METRICS.items()])
        rows = []
        for b in range(bins):
            start, end = t0 + b * NIC_SAMPLE_NS, t0 + (b + 1) * NIC_SAMPLE_NS
            for metric, (name, _, rate) in NIC_METRICS.items():
                value = round(covered[b] * rate)
                rows.append((start, end, global_id, 1, 1, metric, value))
                self.nic_samples.append((start, end, name, value))
        self.insert("NET_NIC_METRIC", rows)

    def _payload_schemas(self) -> None:
        """NCCL's payload schemas, once per process (nsys repeats them so); the first entry's
        offset NULL (0), as in real exports."""
        for table in ("NVTX_PAYLOAD_SCHEMAS", "NVTX_PAYLOAD_SCHEMA_ENTRIES"):
            self.conn.execute(LAZY_TABLES[table])
        for _ in self.ranks:
            for schema, entries, size in NCCL_SCHEMAS.values():
                self.insert("NVTX_PAYLOAD_SCHEMAS", [(NCCL_DOMAIN, schema, None, 1, None, len(entries), size, None)])
                self.insert("NVTX_PAYLOAD_SCHEMA_ENTRIES", [
                    (NCCL_DOMAIN, schema, idx, None, type_id, name, None, None, offset or None)
                    for idx, (name, type_id, offset) in enumerate(entries)])

    def _system_env(self) -> list[tuple]:
        values = (("CpuCores", 1, "96"), ("CpuArchitecture", 3, "x86_64"),
                  ("TargetInstallDir", 170, "/opt/nvidia/nsight-systems-cli/2026.2.1/target-linux-x64"),
                  ("NvDriverVersion", 205, "580.95.05"), ("OsDescription", 605, "Ubuntu 22.04.5 LTS"),
                  ("CudaDriverVersion", 611, "13000"), ("Hostname", 619, self.host), ("GpuInfo", 897, "{}"),
                  ("SupportsNCCL", 925, "1"))
        return [(VM_BITS, "Local (CLI)", name, enum, value) for name, enum, value in values]

    def _gpu_row(self, device: int) -> tuple:
        uuid = "-".join(f"{self.rng.getrandbits(b * 4):0{b}x}" for b in (8, 4, 4, 4, 12))
        return (VM_BITS, device, GPU["name"], f"0000:{BUS_IDS[device % 8]}:00.0", 1, GPU["l2"], GPU["memory"],
                GPU["bandwidth"], GPU["clock"], GPU["sms"], 0, uuid, 0, GPU["chip"], device, "", "", 161, 0,
                65536, 4, 65536, 49152, 232448, 233472, 65536, 32, 3, 64, 32, 1024, 1024, 1024, 64,
                2147483647, 65535, 65535, 9, 0, 9, 0)

    def _processes(self) -> list[tuple]:
        rows = [(global_tid(self.launcher_pid, 0), self.launcher_pid, "torchrun")]
        return rows + [(rank.gpid, rank.pid, "python3") for rank in self.ranks]

    def _thread_names(self) -> list[tuple]:
        pid = self.launcher_pid
        threads = [(pid, "pt_elastic", 20), (pid + 13, "torchrun", 20), (pid + 18, "pt_tcpstore_uv", 20)]
        rows = [(self.sid(name), prio, global_tid(pid, tid)) for tid, name, prio in threads]
        for rank in self.ranks:
            threads = [(0, "python3", 20), (2, "[NSys]", 20), (11, "CUPTI worker th", 20),
                       (44, "pt_nccl_watchdg", 20), (AUTOGRAD_TID, "pt_autograd_0", 20)]
            rows += [(self.sid(name), prio, global_tid(rank.pid, rank.pid + dt)) for dt, name, prio in threads]
        return rows

    def _capture_meta(self, duration: int) -> list[tuple]:
        spec = self.spec
        args = (f"--nnodes={spec.file_count}", f"--nproc_per_node={len(self.ranks)}", f"--node_rank={self.index}",
                "train.py")
        rows = [("DEVICE_ID", "Local (CLI)"), ("CAPTURE_EVENT_TYPE", "NvtxEvents"), ("CAPTURE_EVENT_TYPE", "Cuda"),
                ("DEVICE_TYPE", "Unix"), ("DEVICE_DISPLAY_NAME", self.host), ("PROCESS_0:COMMAND", "torchrun")]
        rows += [(f"PROCESS_0:ARGUMENT_{i}", a) for i, a in enumerate(args)]
        rows += [("PROCESS_0:WORKING_DIR", "/workspace"),
                 ("PROCESS_0:ENVIRONMENT_VARIABLE", 'NCCL_VERSION="2.25.1-1"'),
                 ("PROFILING_SESSION_UUID", "-".join(f"{self.rng.getrandbits(b * 4):0{b}x}" for b in (8, 4, 4, 4, 12))),
                 ("RUN_DURATION_MS", str(duration // 1_000_000))]
        return rows

    def _export_meta(self, export_utc_ns: int) -> list[tuple]:
        stem = self.path.stem
        when = _iso(export_utc_ns)
        normalize, shift = str(self.spec.ts_normalize).lower(), str(self.spec.ts_shift_ns)
        rows = [
            ("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"), ("EXPORT_PRODUCT_VERSION", "2026.2.1.210"),
            ("EXPORT_PRODUCT_DATE", "2026.2"), ("EXPORT_SCHEMA_VERSION", "3.25.0"),
            ("EXPORT_SCHEMA_VERSION_MAJOR", "3"), ("EXPORT_SCHEMA_VERSION_MINOR", "25"),
            ("EXPORT_SCHEMA_VERSION_MICRO", "0"), ("EXPORT_SCHEMA_VERSION_CKSUM", "306658267 182758"),
            ("EXPORT_PLATFORM", "linux-desktop"), ("EXPORT_ARCH", "x64"), ("EXPORT_TIME_UTC", when),
            ("EXPORT_TIME_LOCAL", f"{when} +0000 UTC"), ("EXPORT_HOST", self.host), ("EXPORT_USER", ""),
            ("EXPORT_PARAM_EXPORT_TYPE", "SQLite"), ("EXPORT_PARAM_INPUT_FILE", f"{stem}.nsys-rep"),
            ("EXPORT_PARAM_OUTPUT_FILE", f"{stem}.sqlite"), ("EXPORT_PARAM_INPUT_PATH", f"/tmp/{stem}.nsys-rep"),
            ("EXPORT_PARAM_OUTPUT_PATH", f"/tmp/{stem}.sqlite"),
            ("EXPORT_PARAM_INPUT_PATH_ABS", f"/tmp/{stem}.nsys-rep"),
            ("EXPORT_PARAM_OUTPUT_PATH_ABS", f"/tmp/{stem}.sqlite"), ("EXPORT_PARAM_PROGRESS", "true"),
            ("EXPORT_PARAM_OVERWRITE", "true"), ("EXPORT_PARAM_APPEND", "false"), ("EXPORT_PARAM_LAZY", "true"),
            ("EXPORT_PARAM_USE_SHUFFLE", "true"), ("EXPORT_PARAM_INCLUDE_JSON", "false"),
            ("EXPORT_PARAM_INCLUDE_BLOBS", str(self.spec.nccl_payloads and self.spec.include_blobs).lower()), ("EXPORT_PARAM_TIME_NORMALIZE", normalize),
            ("EXPORT_PARAM_TIME_SHIFT", shift), ("EXPORT_PARAM_TABLES_TO_EXPORT", ""),
            ("EXPORT_PARAM_TIMES_TO_EXPORT", ""), ("EXPORT_CONFIG_TIME_SHIFT", str(self.time_shift_ns)),
            ("EXPORT_TIME", "12.41 sec"),
        ]
        if self.spec.export_meta_table == "EXPORT_META_DATA":  # the 2023.2 exporter
            versions = {"EXPORT_PRODUCT_VERSION": "2023.2.3.1001", "EXPORT_PRODUCT_DATE": "2023.2",
                        "EXPORT_SCHEMA_VERSION": "3.3.0", "EXPORT_SCHEMA_VERSION_MINOR": "3"}
            rows = [(k.replace("OUTPUT", "OUTUPT"), versions.get(k, v)) for k, v in rows]
        return rows


def _iso(utc_ns: int) -> str:
    return datetime.fromtimestamp(utc_ns // 1_000_000_000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


def _open_reports(out_dir: Path, spec: JobSpec) -> list[_Report]:
    """One report per file; files start their sessions a few ms apart on the job clock."""
    rng = random.Random(f"{spec.seed}/job")
    offsets = [0]
    for _ in range(spec.file_count - 1):
        offsets.append(offsets[-1] + rng.randrange(1_000_000, 5_000_000))
    # ranks start after every session has started (process start-up)
    job_start = offsets[-1] + rng.randrange(400_000_000, 500_000_000)
    corr_base = rng.randrange(1_000, 3_000_000)
    reports = []
    for f, offset in enumerate(offsets):
        first = f * spec.ranks_per_file
        ranks = range(first, min(first + spec.ranks_per_file, spec.world_size))
        name = f"{spec.prefix}rank{first}.sqlite" if spec.ranks_per_file == 1 else f"{spec.prefix}node{f}.sqlite"
        report = _Report(out_dir / name, f, spec, spec.utc_start_ns + offset, offset)
        report.ranks = [_Rank(report, r, local, job_start, corr_base) for local, r in enumerate(ranks)]
        reports.append(report)
    return reports


# --------------------------------------------------------------------------------------------
# One rank (process): CPU timeline on the main thread, a compute stream and an NCCL stream


class _PendingNccl(NamedTuple):
    corr: int
    ready: int  # launch start + launch latency (job clock)
    iteration: int
    ops: tuple = ()  # nccl_payloads: the ops it runs, NcclOpTruth fields from collective on


class _Rank:
    def __init__(self, report: _Report, rank: int, local: int, job_start: int, corr_base: int):
        spec = report.spec
        self.report, self.rank, self.world = report, rank, spec.world_size
        self.rng = random.Random(f"{spec.seed}/rank/{rank}")
        self.pid = report.launcher_pid + 19 + local
        self.gpid = global_tid(self.pid, 0)
        self.gtid = global_tid(self.pid, self.pid)  # main thread: tid == pid
        self.autograd_gtid = global_tid(self.pid, self.pid + AUTOGRAD_TID)
        self.op_id = 990_000  # autograd_nvtx: the next aten op's op_id (and seq)
        self.device_id, self.context_id = local, local + 1
        self.off, self.utc0 = report.offset, spec.utc_start_ns
        self.cpu = job_start + self.rng.randrange(0, 3_000_000)
        self.compute_free = self.nccl_free = 0
        self.corr, self.grid_id = corr_base, 160_000
        self.kernels: list[KernelTruth] = []
        self.memcpys: list[MemcpyTruth] = []
        self.memory: list[MemoryTruth] = []
        self.live: dict[int, tuple[int, int]] = {}  # address -> (bytes, memKind) of live allocations
        self.nccl_ops: list[NcclOpTruth] = []
        self.steps: list[tuple[int, int, int]] = []
        self.runtime_calls = self.nvtx_ranges = self.memsets = 0
        self.pending: dict[str, _PendingNccl] = {}
        self.step_start = 0
        self.fwd = self.bwd = (0, 0)
        self.phases = {name: [(kt, report.kernel_type(kt)) for kt in kernels] for name, kernels in
                       spec.kernel_phases.items()}
        self.ids = {name: report.sid(name) for name in (
            "cudaLaunchKernel_v7000", "cuLaunchKernelEx", "cudaMemcpyAsync_v3020", "cudaMemsetAsync_v3020",
            "cudaEventRecord_v3020", "cudaStreamWaitEvent_v3020", "cudaStreamSynchronize_v3020",
            "ncclAllReduce", "ncclCommCount", "ncclGroupStart", "ncclSend", "ncclRecv", "ncclGroupEnd")}
        if spec.nccl_payloads:
            self.ids.update({name: report.sid(name) for name in NCCL_SCHEMAS})
            rng = random.Random(f"{spec.seed}/comms")  # commHashes, the same on every rank
            self.world_comm, self.p2p_comm = rng.getrandbits(64) | (1 << 63), rng.getrandbits(62)
            self.seqs: dict[tuple, int] = {}
        if spec.sync_stalls:  # interned only when used: the default exports stay the same
            self.ids.update({name: report.sid(name) for name in ("cudaMemcpy_v3020", "cudaDeviceSynchronize_v3020")})
        self.host: list[tuple[str, int, int]] | None = [] if spec.host_causes else None
        self.memset_spans: list[tuple[int, int]] = []
        self.phase_spans: list[tuple[str, int, int]] = []

    # ---- primitives -------------------------------------------------------------------------

    def _step(self, lo: int, spread: int) -> int:
        """Advance the CPU by a random pause; returns the new time."""
        self.cpu += lo + int(spread * self.rng.random())
        return self.cpu

    def _api(self, name: str, event_class: int = 0, dur: int = 2_000, spread: int = 3_000,
             returns_after: int = 0, category: str | None = None) -> tuple[int, int]:
        """One CUDA API call on the main thread; returns (start, correlationId). ``category``:
        what the call is in the host truth (launch, sync; None: neither)."""
        start = self._step(800, 1_500)
        end = self.cpu = max(self._step(dur, spread), returns_after)
        corr = self.corr
        self.corr += 1
        self.runtime_calls += 1
        self.report.runtime.append((start - self.off, end - self.off, event_class, self.gtid, corr, self.ids[name], 0,
                                    None))
        if category:
            self._log(category, start, end)
        return start, corr

    def _log(self, category: str, start: int, end: int) -> None:
        """Record a main-thread activity in the host truth (job clock in, UTC out)."""
        if self.host is not None:
            self.host.append((category, self.utc0 + start, self.utc0 + end))

    def _sync_row(self, start: int, end: int, corr: int, sync_type: int, stream: int = 4294967295) -> None:
        """The CUPTI record of a host wait (3 = stream sync, 4 = context sync; 2^32 - 1 = none)."""
        self.report.syncs.append((start - self.off, end - self.off, self.device_id, self.context_id, None, stream,
                                  corr, self.gpid, None, sync_type, 4294967295, None))

    def _os_call(self, name: str, dur: int, returns: int = 0) -> None:
        """One OS runtime call on the main thread (OSRT_API, event class 27 as nsys writes it)."""
        start = self._step(2_000, 0)
        end = self.cpu = start + dur
        self.report.osrt.append((start - self.off, end - self.off, 27, self.gtid, 0, self.report.sid(name), returns, 0,
                                 0))
        self._log("os", start, end)

    def _range(self, start: int, end: int, text: str | None = None, text_id: int | None = None,
               domain: int = 0, event_type: int = 59, blob: bytes | None = None) -> None:
        """A push/pop range (event type 59), or a start/end range (60) on the same thread."""
        self.nvtx_ranges += 1
        self._nvtx(start, end, event_type, text, text_id, domain, blob)

    def _nvtx(self, start: int, end: int | None, event_type: int, text: str | None, text_id: int | None,
              domain: int, blob: bytes | None = None) -> None:
        end = None if end is None else end - self.off
        self.report.nvtx.append((start - self.off, end, event_type, None, None, None, text, self.gtid, None, text_id,
                                 domain, None, None, None, None, None, None, None, None, blob))

    def _nccl_range(self, name: str, dur: int, inner=None, payload: tuple | None = None) -> None:
        """An NCCL API call seen through its NVTX range (registered string, domain 1), with its
        payload's values as a blob (nccl_payloads)."""
        start = self._step(300, 400)
        if inner:
            inner()
        blob = None if payload is None or not self.report.spec.include_blobs else payload_blob(name, payload)
        self._range(start, self._step(dur, dur // 3), text_id=self.ids[name], domain=1, blob=blob)

    def _nccl_op(self, api: str, comm: int, nbytes: int, peer: int | None = None, root: int | None = None,
                 redop: int | None = None) -> tuple[tuple, tuple]:
        """One NCCL operation issued (nccl_payloads): its truth fields (NcclOpTruth from collective on)
        and its payload's values (in the order of NCCL_SCHEMAS' entries)."""
        collective = "AllToAll" if api == "ncclAlltoAll" else api[4:]
        key = (comm,) if peer is None else (comm, collective, peer)
        seq = self.seqs[key] = self.seqs.get(key, 0) + 1
        op = (collective, nbytes, peer, comm, seq, root, None if redop is None else REDUCE_OPS[redop], self.world)
        return op, (comm, nbytes, *(v for v in (peer, root, redop) if v is not None))

    # ---- GPU work -----------------------------------------------------------------------------

    def _compute(self, phase: str, n: int) -> None:
        """Launch a phase's kernels back to back on the compute stream (the hot path)."""
        kernels, rnd, report = self.phases[phase], self.rng.random, self.report
        off, utc0, gtid, gpid, dev, ctx = self.off, self.utc0, self.gtid, self.gpid, self.device_id, self.context_id
        launch_id = self.ids["cudaLaunchKernel_v7000"]
        runtime, rows, truth = report.runtime.append, report.kernels.append, self.kernels.append
        host = None if self.host is None else self.host.append
        new_tuple = tuple.__new__
        t, free, corr, grid_id = self.cpu, self.compute_free, self.corr, self.grid_id
        aten = self._aten_ranges if report.spec.autograd_nvtx else None
        for kt, type_id in kernels:
            api_start = t + 800 + int(1_500 * rnd())
            paced = free - 300_000 - int(700_000 * rnd())  # the CPU runs 0.3-1 ms ahead of the GPU
            if api_start < paced:
                api_start = paced
            t = api_start + 2_500 + int(4_000 * rnd())
            runtime((api_start - off, t - off, 0, gtid, corr, launch_id, 0, None))
            if aten is not None:
                aten(phase, kt, api_start, t)
            if host is not None:
                host(("launch", utc0 + api_start, utc0 + t))
            u = rnd()  # ~3% of kernels follow an idle gap, the rest ~1-3 us after their predecessor
            gap = 1_000 + int(2_000 * u) if u >= 0.03 else 20_000 + int(6_000_000 * u)
            start = free + gap
            if start < api_start + 3_000:
                start = api_start + 3_000
            free = start + int(kt.base_ns * (0.85 + 0.3 * rnd()))
            rows((start - off, free - off, dev, ctx, COMPUTE_STREAM, corr, gpid, grid_id, type_id))
            # tuple.__new__ skips the NamedTuple's Python-level __new__: a third of the loop's time
            truth(new_tuple(KernelTruth, (kt.name, kt.short, utc0 + start, utc0 + free, dev, COMPUTE_STREAM, corr, n,
                                          "compute")))
            corr += 1
            grid_id += 1
        self.runtime_calls += len(kernels)
        self.cpu, self.compute_free, self.corr, self.grid_id = t, free, corr, grid_id

    def _aten_ranges(self, phase: str, kt: KernelType, api_start: int, api_end: int) -> None:
        """autograd_nvtx: the aten op ranges around one launch (api_start..api_end), as PyTorch's
        autograd NVTX writes them: the op, a child that launches nothing (aten::t > aten::transpose >
        aten::as_strided) and the chain down to the op whose call launches the kernel. All within
        500 ns before and 200 ns after the call, so neighbouring launches' ranges never touch."""
        gemm = kt.mangled == kt.name  # cuBLAS / nvjet
        chain = (ATEN_CHAINS["gemm" if gemm else "other"] if phase != "backward"
                 else ATEN_CHAINS["backward_gemm" if gemm else "backward"])
        a, b = api_start, api_end
        names = [chain[0], "aten::t", "aten::transpose", "aten::as_strided", *chain[1:]]
        spans = [(a - 500, b + 200), (a - 450, a - 250), (a - 420, a - 280), (a - 390, a - 310)]
        spans += [(a - 200 + 20 * i, b + 150 - 20 * i) for i in range(len(chain) - 1)]
        for name, (start, end) in zip(names, spans):
            self.op_id += 1
            self._range(start, end, f"{name}, seq = {self.op_id // 3}, op_id = {self.op_id}"
                        if name == chain[0] else f"{name}, op_id = {self.op_id}")

    def _gpu_op_start(self, api_start: int) -> int:
        """Memory operations queue on the compute stream like kernels."""
        return max(self.compute_free + 1_500, api_start + 4_000)

    def _memcpy(self, kind: str, nbytes: int, n: int, api: str = "cudaMemcpyAsync_v3020",
                pageable: bool = False) -> None:
        """A copy on the compute stream. ``api`` cudaMemcpy: the call returns after the copy ends
        (blocking); ``pageable``: the host side is pageable memory (the call stages it: a stall)."""
        copy_kind, src, dst, bytes_per_ns = COPY_KINDS[kind]
        if pageable:
            src, dst = (0 if src == 1 else src), (0 if dst == 1 else dst)
        blocking = not api.startswith("cudaMemcpyAsync")
        api_start, corr = self._api(api, dur=5_000, spread=8_000)
        start = self._gpu_op_start(api_start)
        end = self.compute_free = start + 1_500 + int(nbytes / bytes_per_ns)
        if blocking:  # the call returns 2 us after its copy ends
            row = self.report.runtime[-1]
            self.cpu = max(self.cpu, end + 2_000)
            self.report.runtime[-1] = (row[0], self.cpu - self.off, *row[2:])
        self._log("sync" if blocking or pageable else "launch", api_start, self.cpu)
        self.report.memcpy.append((start - self.off, end - self.off, self.device_id, self.context_id, 0, COMPUTE_STREAM,
                                   corr, self.gpid, nbytes, copy_kind, None, src, dst, None, None, None, None, None,
                                   None, None, 1))
        self.memcpys.append(MemcpyTruth(nbytes, kind, self.utc0 + start, self.utc0 + end, n))

    def _memset(self, nbytes: int) -> None:
        api_start, corr = self._api("cudaMemsetAsync_v3020", dur=3_000, spread=3_000, category="launch")
        start = self._gpu_op_start(api_start)
        end = self.compute_free = start + 1_000 + nbytes // 2_000
        self.memset_spans.append((self.utc0 + start, self.utc0 + end))
        self.report.memset.append((start - self.off, end - self.off, self.device_id, self.context_id, 0, COMPUTE_STREAM,
                                   corr, self.gpid, 0, nbytes, None, 2))
        self.memsets += 1

    def _launch_nccl(self, kernel: KernelType, n: int, key: str | None = None, ops: tuple = ()) -> None:
        """The NCCL stream waits for the work queued so far on the compute stream, then runs the kernel
        (pending under `key`, else its short name; `ops`: what it runs, when issued with payloads)."""
        self._api("cudaEventRecord_v3020")
        self._api("cudaStreamWaitEvent_v3020")
        start, corr = self._api("cuLaunchKernelEx", event_class=1, dur=6_000, spread=4_000, category="launch")
        self._api("cudaEventRecord_v3020")
        ready = max(start + 200_000 + int(300_000 * self.rng.random()), self.compute_free + 2_000)
        self.pending[key or kernel.short] = _PendingNccl(corr, ready, n, ops)

    def finish_nccl(self, kernel: KernelType, start: int, end: int, ops: list[tuple[str, int, int | None]],
                    key: str | None = None) -> None:
        p = self.pending.pop(key or kernel.short)
        ops = p.ops or ops
        self.report.kernels.append((start - self.off, end - self.off, self.device_id, self.context_id, NCCL_STREAM,
                                    p.corr, self.gpid, self.grid_id, self.report.kernel_type(kernel)))
        self.grid_id += 1
        self.nccl_free = end
        utc_start, utc_end = self.utc0 + start, self.utc0 + end
        self.kernels.append(KernelTruth(kernel.name, kernel.short, utc_start, utc_end, self.device_id, NCCL_STREAM,
                                        p.corr, p.iteration, "comm"))
        self.nccl_ops += [NcclOpTruth(coll, kernel.short, utc_start, utc_end, nbytes, p.iteration, peer, *rest)
                          for coll, nbytes, peer, *rest in ops]

    def nccl_start(self, kernel: KernelType, key: str | None = None) -> int:
        """Earliest start of a launched NCCL kernel: after its launch latency, on a free NCCL stream."""
        return max(self.pending[key or kernel.short].ready, self.nccl_free + 2_000)

    def transfer_ns(self, nbytes: int, bytes_per_ns: float) -> int:
        return int((5_000 + nbytes / bytes_per_ns) * (1 + 0.05 * self.rng.random()))

    # ---- the training loop -------------------------------------------------------------------

    def _mark(self, text: str) -> None:
        self.nvtx_ranges += 1
        self._nvtx(self._step(1_000_000, 1_000_000), None, 34, text, None, 0)

    def begin(self) -> None:
        self._nvtx(self._step(0, 1_000), None, 75, "NCCL", None, 1)  # NCCL registers its domain at init
        if self.report.spec.nccl_payloads:  # the two communicators
            for comm in (self.world_comm, self.p2p_comm):
                self._nccl_range("ncclCommInitRankConfig", 40_000,
                                 payload=(comm, self.world, self.rank, self.device_id))
        self._mark("train:begin")
        if self.report.spec.stray_nvtx:  # pushed and never popped: the capture stops first
            self.nvtx_ranges += 1
            self._nvtx(self._step(1_000, 1_000), None, 59, "train", None, 0)
        if self.report.spec.memory_usage:
            self._memory_begin()

    def forward_backward(self, n: int, layers: int) -> None:
        self.step_start = self._step(50_000, 250_000)
        if self.report.spec.data_loader_ns:  # the next batch, on the main thread (the GPU waits)
            end = self.cpu = self.step_start + self.report.spec.data_loader_ns
            self._range(self.step_start, end, DATA_LOADER_RANGE)
            self._log("data", self.step_start, end)
        self._memcpy("HtoD", 262_144, n, pageable=self.report.spec.sync_stalls)  # input ids
        self._memcpy("HtoD", 262_144, n)  # labels
        self._memset(4 << 20)
        fwd_start = self._step(5_000, 5_000)
        for layer in range(layers):
            self._compute("forward", n)
            if layer == layers // 2 and self.world > 1:
                self._p2p_group(n)
        if self.report.spec.memory_usage:
            self._memory_forward(n, layers)
        self.fwd = (fwd_start, self._step(2_000, 2_000))
        bwd_start = self._step(5_000, 5_000)
        main = self.gtid
        if self.report.spec.autograd_nvtx:  # PyTorch's autograd engine runs backward on its own thread
            self.gtid = self.autograd_gtid
        for layer in range(layers):
            self._compute("backward", n)
            if layer == layers // 2:
                if self.report.spec.nccl_payloads:
                    op, values = self._nccl_op("ncclAllReduce", self.world_comm, ALLREDUCE_BYTES, redop=0)
                    self._nccl_range("ncclAllReduce", 8_000, lambda: self._launch_nccl(ALLREDUCE, n, ops=(op,)),
                                     values)
                else:
                    self._nccl_range("ncclAllReduce", 8_000, lambda: self._launch_nccl(ALLREDUCE, n))
        self.gtid = main
        if self.report.spec.nccl_payloads:
            self._more_collectives(n)
        if self.report.spec.memory_usage:
            self._memory_backward(n, layers)
        self.bwd = (bwd_start, self._step(2_000, 2_000))

    def _p2p_group(self, n: int) -> None:
        self._nccl_range("ncclCommCount", 1_000)
        self._nccl_range("ncclGroupStart", 500)
        if not self.report.spec.nccl_payloads:
            self._nccl_range("ncclSend", 3_800)
            self._nccl_range("ncclRecv", 500)
            self._nccl_range("ncclGroupEnd", 10_000, lambda: self._launch_nccl(SENDRECV, n))
            return
        send = self._nccl_op("ncclSend", self.p2p_comm, P2P_BYTES, peer=(self.rank + 1) % self.world)
        recv = self._nccl_op("ncclRecv", self.p2p_comm, P2P_BYTES, peer=(self.rank - 1) % self.world)
        self._nccl_range("ncclSend", 3_800, payload=send[1])
        self._nccl_range("ncclRecv", 500, payload=recv[1])
        self._nccl_range("ncclGroupEnd", 10_000, lambda: self._launch_nccl(SENDRECV, n, ops=(send[0], recv[0])))

    def _more_collectives(self, n: int) -> None:
        """nccl_payloads: after backward, a Broadcast, a grouped AllGather + ReduceScatter, a Reduce
        on the p2p communicator and an AlltoAll, each its own kernel (see _resolve_nccl)."""
        world, p2p = self.world_comm, self.p2p_comm
        op, values = self._nccl_op("ncclBroadcast", world, BROADCAST_BYTES, root=0)
        self._nccl_range("ncclBroadcast", 6_000, lambda: self._launch_nccl(BROADCAST, n, ops=(op,)), values)
        self._nccl_range("ncclGroupStart", 500)
        gather = self._nccl_op("ncclAllGather", world, GATHER_BYTES)
        scatter = self._nccl_op("ncclReduceScatter", world, SCATTER_BYTES, redop=0)
        self._nccl_range("ncclAllGather", 2_000, payload=gather[1])
        self._nccl_range("ncclReduceScatter", 2_000, payload=scatter[1])
        self._nccl_range("ncclGroupEnd", 10_000,
                         lambda: self._launch_nccl(GENERIC, n, ops=(gather[0], scatter[0])))
        op2, values2 = self._nccl_op("ncclReduce", p2p, REDUCE_BYTES, root=self.world - 1, redop=2)
        self._nccl_range("ncclReduce", 6_000, lambda: self._launch_nccl(REDUCE, n, ops=(op2,)), values2)
        op3, values3 = self._nccl_op("ncclAlltoAll", world, ALLTOALL_BYTES)
        self._nccl_range("ncclAlltoAll", 6_000,
                         lambda: self._launch_nccl(SENDRECV, n, key="alltoall", ops=(op3,)), values3)

    def optimizer_and_sync(self, n: int) -> None:
        opt_start = self._step(5_000, 5_000)
        self._api("cudaStreamWaitEvent_v3020")  # the optimizer needs the reduced gradients
        self.compute_free = max(self.compute_free, self.nccl_free)
        self._compute("optimizer", n)
        self._memcpy("DtoD", 4 << 20, n)
        if self.report.spec.memory_usage:
            self._memory_optimizer(n)
        opt_end = self._step(2_000, 2_000)
        spec = self.report.spec
        self._memcpy("DtoH", 4, n, api="cudaMemcpy_v3020" if spec.sync_stalls else "cudaMemcpyAsync_v3020")  # loss.item()
        drained = max(self.compute_free, self.nccl_free) + 3_000 + int(5_000 * self.rng.random())
        start, corr = self._api("cudaStreamSynchronize_v3020", dur=1_000, spread=1_000, returns_after=drained,
                                category="sync")
        if spec.sync_stalls:
            self._sync_row(start, self.cpu, corr, 3, COMPUTE_STREAM)
        if spec.checkpoint_every and n % spec.checkpoint_every == 0:
            self._checkpoint()
        step_end = self._step(5_000, 10_000)
        self._range(self.step_start, step_end, f"ProfilerStep#{n}")
        self._range(*self.fwd, "forward")
        self._range(*self.bwd, "backward")
        self._range(opt_start, opt_end, "optimizer")
        if spec.stray_nvtx:
            self._stray_ranges(n, step_end)
        if self.host is not None:
            self.phase_spans += [("forward", *self.fwd), ("backward", *self.bwd), ("optimizer", opt_start, opt_end)]
        self.steps.append((n, self.utc0 + self.step_start, self.utc0 + step_end))

    def _stray_ranges(self, n: int, step_end: int) -> None:
        """stray_nvtx: two start/end ranges that overlap each other and cross forward, backward and
        the step's end without nesting (the second a phase by its name); in the last step one more
        that never ends."""
        (f0, f1), (b0, b1) = self.fwd, self.bwd
        self._range(f0 + (f1 - f0) // 3, b0 + (b1 - b0) // 2, "prefetch", event_type=60)
        self._range(f0 + 2 * (f1 - f0) // 3, step_end + 20_000, "zero.optimizer_step", event_type=60)
        if n == FIRST_STEP + self.report.spec.iterations - 1:
            self.nvtx_ranges += 1
            self._nvtx(f0 + (f1 - f0) // 2, None, 60, "checkpoint_pending", None, 0)

    def _checkpoint(self) -> None:
        """torch.save of the state: wait for the whole device, then open, write, fsync, close."""
        if self.report.spec.sync_stalls:
            start, corr = self._api("cudaDeviceSynchronize_v3020", dur=3_000, spread=0,
                                    returns_after=max(self.compute_free, self.nccl_free) + 1_000, category="sync")
            self._sync_row(start, self.cpu, corr, 4)
        self._os_call("open64", 20_000, returns=3)
        for _ in range(4):
            self._os_call("write", 1_500_000, returns=64 << 20)
        self._os_call("fsync", 3_000_000)
        self._os_call("close", 5_000)

    def end(self) -> None:
        self._mark("train:end")
        if self.report.spec.memory_usage:
            self._free(PINNED_ADDRESS, None)

    # ---- CUDA memory usage (JobSpec.memory_usage) ---------------------------------------------
    # Per rank: before the first step, a free of 1 MiB allocated before the capture (no
    # allocation in the trace), 64 MiB of weights never freed (the capture ends first) and 2 MiB
    # of pinned host memory freed after the last step; per step, `layers` activations of 8 MiB
    # allocated at the end of forward and freed in backward, and a 12 MiB optimizer workspace.
    # The device's derived total is then 64 + 8 * layers MiB at each step's peak (the running sum
    # raised by the 1 MiB freed first), 76 MiB in the optimizer.

    def _memory_begin(self) -> None:
        self.ids.update({name: self.report.sid(name) for name in ("cudaMalloc_v3020", "cudaFree_v3020",
                                                                   "cudaHostAlloc_v3020", "cudaFreeHost_v3020")})
        self.live[EARLIER_ADDRESS] = (1 << 20, MEM_KIND_DEVICE)
        self._free(EARLIER_ADDRESS, None)
        self._alloc(64 << 20, WEIGHTS_ADDRESS, None)
        self._alloc(2 << 20, PINNED_ADDRESS, None, MEM_KIND_PINNED)

    def _memory_forward(self, n: int, layers: int) -> None:
        for layer in range(layers):
            self._alloc(8 << 20, ACTIVATIONS_ADDRESS + (layer << 24), n)

    def _memory_backward(self, n: int, layers: int) -> None:
        for layer in reversed(range(layers)):
            self._free(ACTIVATIONS_ADDRESS + (layer << 24), n)

    def _memory_optimizer(self, n: int) -> None:
        self._alloc(12 << 20, WORKSPACE_ADDRESS, n)
        self._free(WORKSPACE_ADDRESS, n)

    def _alloc(self, nbytes: int, address: int, n: int | None, kind: int = MEM_KIND_DEVICE) -> None:
        self.live[address] = (nbytes, kind)
        self._memory_event(address, nbytes, kind, 0, n)

    def _free(self, address: int, n: int | None) -> None:
        nbytes, kind = self.live.pop(address)
        self._memory_event(address, nbytes, kind, 1, n)

    def _memory_event(self, address: int, nbytes: int, kind: int, operation: int, n: int | None) -> None:
        """One allocation (operation 0) or free (1), made by a CUDA call on the main thread."""
        pinned = kind == MEM_KIND_PINNED
        api = (("cudaMalloc_v3020", "cudaFree_v3020"), ("cudaHostAlloc_v3020", "cudaFreeHost_v3020"))[pinned]
        api_start, corr = self._api(api[operation])
        start = api_start + 1_000
        self.report.memory.append((start - self.off, self.gpid, self.device_id, self.context_id, address, 0, nbytes,
                                   kind, operation, None, corr, None, None, None, None, None, None))
        self.memory.append(MemoryTruth(self.utc0 + start, -nbytes if operation else nbytes, address,
                                       "CPU" if pinned else "GPU", n))

    def record(self, truth: JobTruth, path: Path) -> None:
        r = self.rank
        truth.rank_file[r], truth.rank_pid[r] = path, self.pid
        truth.kernels[r] = sorted(self.kernels, key=itemgetter(2))  # by start
        truth.memcpy[r], truth.nccl_ops[r], truth.iterations[r] = self.memcpys, self.nccl_ops, self.steps
        truth.memset[r], truth.runtime_calls[r] = self.memsets, self.runtime_calls
        truth.nvtx_ranges[r] = self.nvtx_ranges
        truth.memory[r] = self.memory
        if self.host is not None:
            phases = [(name, self.utc0 + lo, self.utc0 + hi) for name, lo, hi in self.phase_spans]
            truth.host[r] = self.host + phases
            truth.gpu_busy[r] = ([(k.start_ns, k.end_ns) for k in truth.kernels[r]]
                                 + [(m.start_ns, m.end_ns) for m in self.memcpys] + self.memset_spans)
        truth.comm_overlap_ns[r] = _overlap(
            [(k.start_ns, k.end_ns) for k in truth.kernels[r] if k.kind == "compute"],
            [(k.start_ns, k.end_ns) for k in truth.kernels[r] if k.kind == "comm"])


def _resolve_nccl(ranks: list[_Rank]) -> None:
    """Finish the iteration's NCCL kernels on all ranks: a kernel ends when its peers have arrived."""
    world = len(ranks)
    if world > 1:
        starts = {r.rank: r.nccl_start(SENDRECV) for r in ranks}
        for r in ranks:
            send_to, recv_from = (r.rank + 1) % world, (r.rank - 1) % world
            end = max(starts[r.rank], starts[send_to], starts[recv_from]) + r.transfer_ns(P2P_BYTES, 40.0)
            r.finish_nccl(SENDRECV, starts[r.rank], end,
                          [("Send", P2P_BYTES, send_to), ("Recv", P2P_BYTES, recv_from)])
    starts = {r.rank: r.nccl_start(ALLREDUCE) for r in ranks}
    # ring all-reduce moves 2(n-1)/n of the buffer over the slowest link
    done = max(starts.values()) + ranks[0].transfer_ns(2 * (world - 1) * ALLREDUCE_BYTES // world, 100.0)
    for r in ranks:
        end = done + int(3_000 * r.rng.random())
        r.finish_nccl(ALLREDUCE, starts[r.rank], end, [("AllReduce", ALLREDUCE_BYTES, None)])
    if ranks[0].report.spec.nccl_payloads:  # in launch order (_Rank._more_collectives)
        for kernel, key, wire_bytes in ((BROADCAST, None, BROADCAST_BYTES), (GENERIC, None, GATHER_BYTES * world),
                                        (REDUCE, None, REDUCE_BYTES), (SENDRECV, "alltoall", ALLTOALL_BYTES * world)):
            starts = {r.rank: r.nccl_start(kernel, key) for r in ranks}
            done = max(starts.values()) + ranks[0].transfer_ns(wire_bytes, 100.0)
            for r in ranks:
                r.finish_nccl(kernel, starts[r.rank], done + int(3_000 * r.rng.random()), [], key)


def counter_value(covered_ns: int, interval_ns: int, busy_value: int) -> int:
    """A throughput counter's sample: its busy value times the share of the interval covered."""
    return round(busy_value * covered_ns / interval_ns)


def covered_per_bin(spans: list[tuple[int, int]], t0: int, width: int, bins: int) -> list[int]:
    """Per bin [t0 + b*width, t0 + (b+1)*width): ns covered by the union of ``spans``."""
    covered = [0] * bins
    for lo, hi in _merged(spans):
        b = (lo - t0) // width
        while lo < hi and b < bins:
            edge = t0 + (b + 1) * width
            covered[b] += min(hi, edge) - lo
            lo, b = edge, b + 1
    return covered


def _overlap(many: list[tuple[int, int]], few: list[tuple[int, int]]) -> int:
    """Total length of the intersection of two lists of disjoint intervals, ``many`` sorted by start."""
    starts = [s for s, _ in many]
    total = 0
    for lo, hi in few:
        i = max(bisect_right(starts, lo) - 1, 0)
        while i < len(many) and many[i][0] < hi:
            total += max(0, min(hi, many[i][1]) - max(lo, many[i][0]))
            i += 1
    return total
