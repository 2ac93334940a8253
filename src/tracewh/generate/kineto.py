"""PyTorch-profiler (Kineto) Chrome traces of a synthetic multi-rank training job whose true numbers are known.

The files mimic ``torch.profiler.tensorboard_trace_handler`` output of PyTorch 2.12/2.13 (kineto 2026),
one file per rank, named ``<host>_<pid>.<time_ns>.pt.trace.json[.gz]`` (the rank is only in
``distributedInfo``). Layout as kineto prints it (checked against the real torch-2.13 file
``kineto/generated/rank-0.json``): the top-level keys ``schemaVersion``, ``deviceProperties`` (every GPU of
the node), the metadata map (``cupti_version``, ``cuda_runtime_version``, ``cuda_driver_version``,
``distributedInfo``, ``record_shapes``, ``trace_id``, ``host_name``: PyTorch puts ``distributedInfo`` in
the metadata map, *before* ``traceEvents``, in every real file of the corpus), then ``displayTimeUnit``,
``baseTimeNanoseconds``, ``traceEvents`` and ``traceName``; one event per ``{ ... }`` block with one key
per line, ``"dur": 1.234\\n    ,\\n    "args"`` and ``"External id": 7,"Record function id": 0, ...``
(no space after the first comma), ``ts``/``dur`` relative to ``baseTimeNanoseconds`` in µs with exactly
three decimals (integer ns). Event and arg layout follow the real B200 trace (TraceLens ``b200``):
``cpu_op``/``user_annotation`` on the host pid/tid, ``cuda_runtime``/``cuda_driver`` launches with
``cbid``/``correlation``, ``kernel``/``gpu_memcpy``/``gpu_memset`` on pid = device, tid = stream, ``ac2g``
flows keyed by correlation, ``fwdbwd`` flows, ``M`` metadata, the ``Trace`` span and the two global
instants. Event order as kineto writes it: metadata, host events (per iteration: main thread, then
the autograd thread; kineto groups whole threads, an order no reader may rely on), then the CUPTI
activities (GPU op, its ``f`` flow, the launching API call, its ``s`` flow), the ``gpu_user_annotation``
copies, and the ``Trace`` span, ``Iteration Start`` and ``Record Window End``.

Job model, per rank and iteration ``N`` (``ProfilerStep#N``, numbered from ``first_step``)::

    main thread    ProfilerStep#N  [user_annotation]
                     2x aten::to > aten::_to_copy > aten::copy_ > cudaMemcpyAsync   (Memcpy HtoD (Pinned -> Device))
                     Optimizer.zero_grad#SGD.zero_grad > aten::zero_ > cudaMemsetAsync  (Memset (Device))
                     forward, per layer: aten::linear (> aten::t > aten::transpose > aten::as_strided,
                         aten::addmm > cuLaunchKernelEx nvjet GEMM), aten::gelu, aten::mm, aten::add
                       after layer layers//2: c10d::_allgather_base_ > record_param_comms >
                         nccl:_all_gather_base > cudaEventRecord, cudaStreamWaitEvent, cudaLaunchKernelExC
                         -> ncclDevKernel_AllGather_RING_LL on the NCCL stream, process group "1".."k"
                         (sub-groups of ``subgroup_size`` consecutive ranks)
    autograd thread  backward, per layer (reverse): evaluate_function: AddBackward0 / MmBackward0 (2 GEMMs)
                       / GeluBackward0 / AddmmBackward0 (2 GEMMs + aten::sum) / AccumulateGrad (aten::add_)
                       after layers//2 layers: DDP's bucket all-reduce: c10d::allreduce_ > record_param_comms
                         > nccl:all_reduce > cudaEventRecord, cudaStreamWaitEvent, cudaLaunchKernelExC
                         -> ncclDevKernel_AllReduce_Sum_f32_RING_LL on the NCCL stream, process group "0"
    main thread    Optimizer.step#SGD.step > aten::_foreach_add_ > cudaStreamWaitEvent (compute waits for NCCL),
                       one multi_tensor_apply kernel per layer
                   aten::item > aten::_local_scalar_dense > cudaMemcpyAsync (DtoH), cudaStreamSynchronize

Host-side causes of GPU idle time (``KinetoJobSpec`` options, off by default, so the default files stay
byte-identical; ``KinetoTruth.host`` then lists every activity of the main thread and ``gpu_busy`` every GPU op,
from which ``truth.py`` computes host_breakdown's, idle_gaps' and sync_stalls' answers): ``data_loader_ns``
starts each step with an ``enumerate(DataLoader)#...__next__`` cpu_op that long (``slow_data_loader``: longer
for one rank in chosen steps, which makes it the straggler there); ``sync_stalls`` adds
``torch.cuda.synchronize()`` (cudaDeviceSynchronize) after the optimizer, makes ``loss.item()``'s
cudaStreamSynchronize last until the GPU is drained (without it the call returns at once and the host idles
until then) and writes the ``cuda_sync`` events of these and of the collectives' cudaStreamWaitEvent
(``KinetoTruth.syncs``); ``comm_stream_waits`` records an event on the NCCL stream before the optimizer's
cudaStreamWaitEvent and writes that wait's ``cuda_sync`` event, naming the record (the compute stream waits for
the AllReduce); ``python_frames`` writes ``python_function`` frames (``with_stack=True``) around the
forward pass: ``nn.Module: Model_0`` > ``Block_i`` > ``Linear_i`` / ``GELU_i``, each module frame over
module.py's ``_call_impl`` and the module's ``forward``, as the b200 trace nests them (``KinetoTruth.frames``);
``phase_annotations`` wraps the phases in ``## forward ##``, ``## backward ##`` (on the main thread, which
waits while autograd's thread works) and ``## optimizer ##``. ``Optimizer.step#SGD.step`` is a phase by its
name in every job. ``profile_memory`` writes ``[memory]`` events: each forward op (addmm, gelu, mm, add)
allocates its 64 MiB output inside the op, freed after the layer's AccumulateGrad in backward, over 1 GiB of
weights allocated before the trace (``KinetoTruth.memory``, with the op and nn.Module of each allocation). ``inter_node_gbps``
makes the transfers of groups whose ranks span hosts (host = rank // gpus_per_node) move their wire bytes at that
rate instead of ``LINK_BYTES_PER_NS`` (``KinetoTruth.link_gbps``). Kineto records no OS runtime calls: checkpoint writes are the nsys generator's.

GEMMs are launched through the driver API (``cuda_driver`` ``cuLaunchKernelEx``, as cuBLASLt does on
B200), the other kernels through ``cudaLaunchKernel``; memcpy/memset/NCCL through the runtime.

Timing (as in the nsys generator): the CPU runs 0.3-1 ms ahead of the GPU (a bounded launch queue);
kernels on the compute stream run back to back (1-3 µs apart, ~3 % after an idle gap). An NCCL kernel
waits for the work queued on the compute stream at its launch (cudaStreamWaitEvent) and then overlaps
the compute kernels launched after it: the AllGather the second half of forward, the AllReduce the
second half of backward (``KinetoTruth.comm_overlap_ns``). Ranks are simulated in lockstep on one job
clock; a collective ends at the same time (+0-3 µs) on every member, so NCCL time includes waiting for
the slowest member. ``clock_skew_ns[rank]`` is added to every timestamp of that rank's file (the truth
holds the file's times, i.e. skewed: ``baseTimeNanoseconds + round(ts * 1000)``).

Collective metadata as kineto 2026 writes it: ``record_param_comms`` args (Collective name, dtype,
In/Out msg nelems, Group size, Process Group Name/Description/Ranks, Rank, Seq, Comms Id, ...) and the
same copied onto the NCCL kernel (kineto ``appendCollectiveArgs``; ``Rank`` stays on the CPU op). ``Seq`` is
the per-process-group sequence number, equal on every member rank for the same collective; the
AllGather group's numbers overlap the default group's on purpose (match on (group, Seq), not Seq
alone). ``Comms Id`` is the communicator's 64-bit hash, the same on every member; the default group's is
above the int64 range (as in real traces).

Deliberate realism traps: ids (correlation, External id, flow ids) are per file and start from
different bases per rank; kernels of one cpu op share its External id; NCCL kernels carry the
``record_param_comms`` op's External id, not the ``nccl:*`` annotation's; backward ops run on a second
thread; a ``gpu_user_annotation`` copy exists per stream for each host annotation that launched GPU work
from its own thread while open (``ProfilerStep#N`` on the compute and the NCCL stream), spanning those ops
shifted by -1 ns / +2 ns as kineto does; ``deviceProperties`` lists all
GPUs of the node while the rank uses one (device = rank % gpus_per_node); with ``gzip=True``
``traceName`` holds a temp file name.

Speed: event text is produced with ``%`` templates and written per iteration (GPU activities spill to a
temporary file and are appended at the end): about 1.1 s per 100 MB rank file (~90 MB/s of JSON on one
core; ``gzip=True`` takes about twice as long), memory bounded by one iteration of all ranks.
"""

from __future__ import annotations

import gzip as gzip_module
import json
import os
import random
import shutil
import tempfile
from bisect import bisect_right
from collections import Counter
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from .truth import kernel_summary

COMPUTE_STREAM = 7
NCCL_STREAM = 40
INT64_MAX = (1 << 63) - 1
HIDDEN = 4096
TOKENS = 8192
ALLREDUCE_NELEMS = 6_553_600  # DDP's 25 MiB gradient bucket, fp32
ALLGATHER_IN_NELEMS = 1_048_576  # a 2 MiB bf16 parameter shard per rank
LINK_BYTES_PER_NS = 350.0  # the wire rate of a collective's transfer (GB/s per rank, one direction)
DTYPE_BYTES = {"Float": 4, "BFloat16": 2}
NUM_SMS = 148  # B200
NCCL_VERSION = "2.27.5"
CBID = {"cudaLaunchKernel": 211, "cudaLaunchKernelExC": 430, "cudaMemcpyAsync": 41, "cudaMemsetAsync": 51,
        "cudaEventRecord": 135, "cudaStreamWaitEvent": 147, "cudaStreamSynchronize": 131,
        "cuLaunchKernelEx": 652, "cudaDeviceSynchronize": 165}
CALL_IMPL = "torch/nn/modules/module.py(1779): _call_impl"  # the frame under every nn.Module frame

# --------------------------------------------------------------------------------------------
# Public API


@dataclass(frozen=True)
class KinetoJobSpec:
    """What to generate; the same spec (incl. seed) always gives byte-identical files."""

    world_size: int = 2
    iterations: int = 3
    layers: int = 2
    seed: int = 0
    gzip: bool = False
    base_time_ns: int = 1_790_857_026_000_000_000  # a kineto "trimonth" base: 227 x 7,889,238 s
    clock_skew_ns: dict[int, int] = field(default_factory=dict)  # rank -> offset added to its timestamps
    base_time_overrides: dict[int, int] = field(default_factory=dict)  # rank -> its own baseTimeNanoseconds
    gpus_per_node: int = 8  # device = rank % gpus_per_node, host = node<rank // gpus_per_node>
    subgroup_size: int | None = None  # AllGather group size; default 2 when world_size is even, else 1
    first_step: int = 2  # schedule(wait=1, warmup=1, active=...) -> ProfilerStep#2, #3, ...
    host_prefix: str = "node"
    target_bytes_per_rank: int | None = None  # when set, overrides ``layers`` (file size per rank)
    record_shapes: bool = True  # False: cpu_op args without Input Dims/type/Strides/Concrete Inputs
    data_loader_ns: int = 0  # > 0: each step starts with a DataLoader __next__ cpu_op this long (slow input)
    # (rank, step) -> ns that rank's DataLoader takes on top of data_loader_ns in that step: one slow batch
    # makes that rank the straggler of the step's collectives (straggler_cause's known truth)
    slow_data_loader: dict[tuple[int, int], int] = field(default_factory=dict)
    # the optimizer's wait for the AllReduce as a Stream Wait Event (cuda_sync) on an event recorded after it
    comm_stream_waits: bool = False
    data_loader_ranks: tuple[int, ...] | None = None  # the ranks with that loader (None: every rank)
    sync_stalls: bool = False  # loss.item() waits for the GPU, torch.cuda.synchronize() before it, cuda_sync events
    python_frames: bool = False  # with_stack=True: python_function frames, nn.Module: Block_i > Linear_i / GELU_i
    phase_annotations: bool = False  # record_function("## forward ##" / "## backward ##" / "## optimizer ##")
    profile_memory: bool = False  # [memory] events: each forward op's output, freed in backward (KinetoTruth.memory)
    # a collective whose group spans hosts moves its wire bytes at this rate (GB/s = bytes/ns) instead of
    # LINK_BYTES_PER_NS; None: every group as if inside one host (KinetoTruth.link_gbps says what each used)
    inter_node_gbps: float | None = None

    def __post_init__(self) -> None:
        if min(self.world_size, self.iterations, self.layers, self.gpus_per_node) < 1:
            raise ValueError("world_size, iterations, layers and gpus_per_node must be >= 1")
        g = self.group_size
        if g < 1 or self.world_size % g:
            raise ValueError(f"subgroup_size {g} must divide world_size {self.world_size}")

    @property
    def group_size(self) -> int:
        if self.subgroup_size is not None:
            return self.subgroup_size
        return 2 if self.world_size % 2 == 0 else 1

    @property
    def resolved_layers(self) -> int:
        if self.target_bytes_per_rank is None:
            return self.layers
        return _layers_for_size(self.target_bytes_per_rank, self.iterations, self.world_size,
                                self.gpus_per_node, self.group_size)

    def base_for(self, rank: int) -> int:
        return self.base_time_overrides.get(rank, self.base_time_ns)

    @property
    def host_causes(self) -> bool:
        """Whether the main thread's activities are recorded in the truth (KinetoTruth.host)."""
        return bool(self.data_loader_ns or self.slow_data_loader or self.sync_stalls or self.python_frames
                    or self.phase_annotations)

    def loader_ns(self, rank: int, step: int) -> int:
        """How long the rank's DataLoader takes at the start of the step (0: no DataLoader op)."""
        everyone = self.data_loader_ranks is None or rank in self.data_loader_ranks
        return self.data_loader_ns * everyone + self.slow_data_loader.get((rank, step), 0)


class KernelTruth(NamedTuple):
    name: str
    start_ns: int  # UTC = baseTimeNanoseconds + round(ts * 1000), skew included
    end_ns: int
    device_id: int
    stream_id: int
    correlation_id: int
    external_id: int
    iteration: int
    kind: str  # 'compute' | 'comm'


class MemOpTruth(NamedTuple):
    kind: str  # 'HtoD' | 'DtoH' | 'memset'
    name: str  # the event name, e.g. 'Memcpy HtoD (Pinned -> Device)'
    bytes: int
    start_ns: int
    end_ns: int
    correlation_id: int
    iteration: int


class NcclOpTruth(NamedTuple):
    collective: str  # 'AllReduce' | 'AllGather'
    c10d_name: str  # 'allreduce' | '_allgather_base' (args "Collective name")
    kernel_name: str
    dtype: str  # 'Float' | 'BFloat16'
    in_nelems: int
    out_nelems: int
    in_bytes: int
    out_bytes: int
    bytes: int  # nccl-tests size ("full bytes"): AllReduce = in bytes, AllGather = out bytes
    group_size: int
    pg_name: str
    pg_desc: str
    pg_ranks: tuple[int, ...]
    seq: int
    comms_id: int  # unsigned 64-bit
    start_ns: int  # kernel, UTC
    end_ns: int
    stream_id: int
    correlation_id: int
    external_id: int  # of record_param_comms (== the kernel's)
    iteration: int


class AnnotationTruth(NamedTuple):
    name: str
    start_ns: int
    end_ns: int
    stream_id: int | None  # None for the host event
    external_id: int


class SyncTruth(NamedTuple):
    kind: str  # cuda_sync_kind: 'Stream Sync' | 'Context Sync' | 'Stream Wait Event'
    api_name: str  # the runtime call that waited
    stream_id: int | None  # the stream synchronized or made to wait (None: context sync)
    wait_stream_id: int | None  # Stream Wait Event: the stream whose event it waits on
    start_ns: int  # the cuda_sync event, UTC
    end_ns: int
    api_start_ns: int  # the runtime call, UTC
    api_end_ns: int
    correlation_id: int
    external_id: int
    iteration: int


class FrameTruth(NamedTuple):
    name: str  # 'nn.Module: Linear_0', 'torch/nn/modules/module.py(1779): _call_impl', ...
    start_ns: int  # UTC
    end_ns: int
    python_id: int
    python_parent_id: int
    iteration: int


class AllocationTruth(NamedTuple):
    start_ns: int  # the [memory] event, UTC
    bytes: int  # > 0 allocation, < 0 free
    address: int
    total_allocated: int  # the event's Total Allocated (WEIGHT_BYTES, allocated before the trace, included)
    tid: int
    op: str | None  # the innermost cpu_op around it (None: none, the frees in backward)
    module: str | None  # the innermost nn.Module frame around it ('Linear_0'; None: none or no python_frames)
    iteration: int


@dataclass
class KinetoTruth:
    """What the generator wrote, per rank unless keyed by file. Times are UTC epoch ns as in the file."""

    spec: KinetoJobSpec
    layers: int
    files: list[Path] = field(default_factory=list)
    file_rank: dict[Path, int] = field(default_factory=dict)
    rank_file: dict[int, Path] = field(default_factory=dict)
    base_time_ns: dict[Path, int] = field(default_factory=dict)
    trace_names: dict[Path, str] = field(default_factory=dict)
    hostnames: dict[int, str] = field(default_factory=dict)
    pids: dict[int, int] = field(default_factory=dict)
    devices: dict[int, int] = field(default_factory=dict)
    threads: dict[int, tuple[int, int]] = field(default_factory=dict)  # (main tid, autograd tid)
    clock_skew_ns: dict[int, int] = field(default_factory=dict)
    kernels: dict[int, list[KernelTruth]] = field(default_factory=dict)
    memcpy: dict[int, list[MemOpTruth]] = field(default_factory=dict)
    memset: dict[int, list[MemOpTruth]] = field(default_factory=dict)
    runtime_calls: dict[int, int] = field(default_factory=dict)  # cat cuda_runtime
    driver_calls: dict[int, int] = field(default_factory=dict)  # cat cuda_driver
    cpu_ops: dict[int, int] = field(default_factory=dict)  # cat cpu_op
    user_annotations: dict[int, list[AnnotationTruth]] = field(default_factory=dict)  # host
    gpu_annotations: dict[int, list[AnnotationTruth]] = field(default_factory=dict)
    iterations: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict)  # (N, start, end) UTC
    nccl_ops: dict[int, list[NcclOpTruth]] = field(default_factory=dict)
    comm_overlap_ns: dict[int, int] = field(default_factory=dict)  # |comm kernels ∩ compute kernels|
    event_counts: dict[int, Counter] = field(default_factory=dict)  # (ph, cat or None) -> events in the file
    data_loader: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # DataLoader ops (start, end) UTC
    # with spec.host_causes: the main thread's activities (category of truth.HOST_CATEGORIES, start, end) UTC,
    # as truth.host_split and truth.gap_causes take them, and each rank's GPU ops (start, end)
    host: dict[int, list[tuple[str, int, int]]] = field(default_factory=dict)
    gpu_busy: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    syncs: dict[int, list[SyncTruth]] = field(default_factory=dict)  # cuda_sync events (sync_stalls)
    frames: dict[int, list[FrameTruth]] = field(default_factory=dict)  # python_function events (python_frames)
    memory: dict[int, list[AllocationTruth]] = field(default_factory=dict)  # [memory] events (profile_memory)
    link_gbps: dict[str, float] = field(default_factory=dict)  # process group -> its transfer's wire rate (GB/s)

    def memcpy_bytes(self, rank: int) -> int:
        return sum(m.bytes for m in self.memcpy[rank])

    def memset_bytes(self, rank: int) -> int:
        return sum(m.bytes for m in self.memset[rank])

    def kernel_summary(self, rank: int | None = None) -> dict[str, dict]:
        """Per kernel name, the numbers of nsys stats -r cuda_gpu_kern_sum (see truth.py)."""
        return kernel_summary(self.kernels, rank)


def generate_kineto_job(out_dir: str | Path, spec: KinetoJobSpec) -> KinetoTruth:
    """Write one trace file per rank into ``out_dir`` and return what was written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    truth = KinetoTruth(spec=spec, layers=spec.resolved_layers)
    job = _Job(spec, truth.layers)
    with tempfile.TemporaryDirectory(prefix="tracewh-kineto-") as tmp:
        sinks = {r.rank: _FileSink(out_dir, Path(tmp), r, spec) for r in job.ranks}
        job.run(sinks)
        for r in job.ranks:
            path = sinks[r.rank].close(r)
            r.record(truth, path, sinks[r.rank].trace_name)
    truth.files = [truth.rank_file[r] for r in sorted(truth.rank_file)]
    truth.link_gbps = {g.name: job.link_rate(g) for g in [job.default_pg, *job.subgroups]}
    return truth


# --------------------------------------------------------------------------------------------
# Kernel catalog: names and launch configurations as a B200 trace shows them


class KernelType(NamedTuple):
    name: str
    regs: int
    smem: int
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    occupancy: int
    base_ns: int
    args: str  # the constant part of the kernel's args, formatted once


def _kernel(name, regs, smem, grid, block, occupancy, base_ns) -> KernelType:
    blocks = grid[0] * grid[1] * grid[2]
    warps = -(-block[0] * block[1] * block[2] // 32)
    per_sm = blocks / NUM_SMS
    args = (f'"registers per thread": {regs}, "shared memory": {smem}, "blocks per SM": {per_sm:.6f}, '
            f'"warps per SM": {per_sm * warps:.6f}, "grid": [{grid[0]}, {grid[1]}, {grid[2]}], '
            f'"block": [{block[0]}, {block[1]}, {block[2]}], "est. achieved occupancy %": {occupancy}')
    return KernelType(name, regs, smem, grid, block, occupancy, base_ns, args)


def _elementwise(functor: str, arrays: int) -> str:
    return (f"void at::native::vectorized_elementwise_kernel<4, {functor}, std::array<char*, {arrays}ul> >"
            f"(int, {functor}, std::array<char*, {arrays}ul>)")


_GELU_F = ("at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() "
           "const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}")
_GELU_B = ("at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::"
           "operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}")
_SUM_OP = ("at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<"
           "c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned "
           "int, c10::BFloat16, 4, 4>")
_FOREACH = ("at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::"
            "BinaryOpListAlphaFunctor<c10::BFloat16, 2, 2, 0>, std::plus<float>, float")

GEMM_FWD = _kernel("nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN", 168, 213656, (148, 1, 1), (384, 1, 1), 0,
                   160_000)
GEMM_FWD_MM = _kernel("nvjet_tst_192x208_64x4_1x1_h_bz_coopB_TNT", 168, 221512, (148, 1, 1), (384, 1, 1), 0,
                      150_000)
GEMM_DGRAD = _kernel("nvjet_tst_256x128_64x4_2x1_v_bz_coopA_NNN", 168, 217680, (148, 1, 1), (384, 1, 1), 0,
                     170_000)
GEMM_WGRAD = _kernel("nvjet_tst_128x256_64x4_1x2_h_bz_coopB_NTN", 168, 217680, (148, 1, 1), (384, 1, 1), 0,
                     190_000)
GELU = _kernel(_elementwise(_GELU_F, 2), 28, 0, (32768, 1, 1), (128, 1, 1), 91, 42_000)
GELU_BWD = _kernel(_elementwise(_GELU_B, 3), 32, 0, (32768, 1, 1), (128, 1, 1), 88, 61_000)
ADD = _kernel(_elementwise("at::native::CUDAFunctor_add<c10::BFloat16>", 3), 26, 0, (32768, 1, 1), (128, 1, 1),
              90, 38_000)
SUM = _kernel(f"void at::native::reduce_kernel<512, 1, {_SUM_OP}>({_SUM_OP})", 40, 16, (32, 64, 1),
              (32, 16, 1), 71, 22_000)
FOREACH_ADD = _kernel(f"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<{_FOREACH}>({_FOREACH})",
                      38, 0, (320, 1, 1), (512, 1, 1), 62, 26_000)
NCCL_ALLREDUCE = _kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 96, 103808,
                         (16, 1, 1), (512, 1, 1), 0, 0)
NCCL_ALLGATHER = _kernel("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 96, 103808,
                         (11, 1, 1), (512, 1, 1), 0, 0)

# --------------------------------------------------------------------------------------------
# cpu_op args (record_shapes=True): the middle part between "Record function id" and "Ev Idx"

_BF = "c10::BFloat16"


def _shapes(concrete, types, strides, dims) -> str:
    def lst(xs):
        return "[" + ", ".join(xs) + "]"

    return (f'"Concrete Inputs": {lst(f"{chr(34)}{c}{chr(34)}" for c in concrete)}, '
            f'"Input type": {lst(f"{chr(34)}{t}{chr(34)}" for t in types)}, '
            f'"Input Strides": {lst(lst(map(str, s)) for s in strides)}, '
            f'"Input Dims": {lst(lst(map(str, d)) for d in dims)}, ')


X2D, W2D = [TOKENS, HIDDEN], [HIDDEN, HIDDEN]
S2D, ST2D = [HIDDEN, 1], [1, HIDDEN]
ACTIVATION_BYTES = TOKENS * HIDDEN * 2  # a forward op's bf16 output
WEIGHT_BYTES = 1 << 30  # allocated before the trace: in every Total Allocated, in no event
RESERVED_BYTES = 8 << 30
ACTIVATION_ADDRESS = 0x7F00_0000_0000  # + (4 * layer + k) * 2^27: the k-th output of a layer
DATA_LOADER_OP = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
MID = {
    "aten::linear": _shapes(["", "", ""], [_BF] * 3, [S2D, S2D, [1]], [X2D, W2D, [HIDDEN]]),
    "aten::t": _shapes([""], [_BF], [S2D], [W2D]),
    "aten::transpose": _shapes(["", "0", "1"], [_BF, "Scalar", "Scalar"], [S2D, [], []], [W2D, [], []]),
    "aten::as_strided": _shapes(["", f"[{HIDDEN}, {HIDDEN}]", f"[1, {HIDDEN}]", ""],
                                [_BF, "ScalarList", "ScalarList", ""], [S2D, [], [], []], [W2D, [], [], []]),
    "aten::addmm": _shapes(["", "", "", "1", "1"], [_BF, _BF, _BF, "Scalar", "Scalar"],
                           [[1], S2D, ST2D, [], []], [[HIDDEN], X2D, W2D, [], []]),
    "aten::gelu": _shapes(["", "none"], [_BF, "String"], [S2D, []], [X2D, []]),
    "aten::mm": _shapes(["", ""], [_BF, _BF], [S2D, ST2D], [X2D, W2D]),
    "aten::add": _shapes(["", "", "1"], [_BF, _BF, "Scalar"], [S2D, S2D, []], [X2D, X2D, []]),
    "aten::add_": _shapes(["", "", "1"], [_BF, _BF, "Scalar"], [S2D, S2D, []], [W2D, W2D, []]),
    "aten::gelu_backward": _shapes(["", "", "none"], [_BF, _BF, "String"], [S2D, S2D, []], [X2D, X2D, []]),
    "aten::sum": _shapes(["", "[0]", "True", ""], [_BF, "ScalarList", "Scalar", ""], [S2D, [], [], []],
                         [X2D, [], [], []]),
    "backward_node": _shapes([""], [_BF], [S2D], [X2D]),
    "aten::to": _shapes(["", "4", "0", "", "", "True", "False", ""],
                        ["int", "Scalar", "Scalar", "", "", "Scalar", "Scalar", ""],
                        [[2048, 1], [], [], [], [], [], [], []], [[32, 2048], [], [], [], [], [], [], []]),
    "aten::_to_copy": _shapes(["", "4", "0", "", "", "True", ""], ["int", "Scalar", "Scalar", "", "", "Scalar", ""],
                              [[2048, 1], [], [], [], [], [], []], [[32, 2048], [], [], [], [], [], []]),
    "aten::copy_": _shapes(["", "", "True"], ["long int", "int", "Scalar"], [[2048, 1], [2048, 1], []],
                           [[32, 2048], [32, 2048], []]),
    "aten::zero_": _shapes([""], ["float"], [[1]], [[1_048_576]]),
    "aten::_foreach_add_": _shapes(["", "", "-0.001"], ["TensorList", "TensorList", "Scalar"], [[], [], []],
                                   [[], [], []]),
    "aten::item": _shapes([""], ["float"], [[]], [[]]),
    "aten::_local_scalar_dense": _shapes([""], ["float"], [[]], [[]]),
    "c10d::allreduce_": _shapes(["", "", "", "", "False", "-1"], ["float", "", "", "", "Scalar", "Scalar"],
                                [[1], [], [], [], [], []], [[ALLREDUCE_NELEMS], [], [], [], [], []]),
    "c10d::_allgather_base_": _shapes(["", "", "", "False", "-1"], [_BF, _BF, "", "Scalar", "Scalar"],
                                      [[1], [1], [], [], []], [[0], [ALLGATHER_IN_NELEMS], [], [], []]),
    "nccl:all_reduce": _shapes([""], ["float"], [[1]], [[ALLREDUCE_NELEMS]]),
    "nccl:_all_gather_base": _shapes([""], [_BF], [[1]], [[ALLGATHER_IN_NELEMS]]),
}

# --------------------------------------------------------------------------------------------
# Event templates: kineto 2026 print style (one key per line)

_X = ('\n  {\n    "ph": "X",\n    "cat": "%s",\n    "name": "%s",\n    "pid": %d,\n    "tid": %d,\n'
      '    "ts": %d.%03d,\n    "dur": %d.%03d\n    ,\n    "args": {\n      %s\n    }\n  },')
_CPU = ('\n  {\n    "ph": "X",\n    "cat": "%s",\n    "name": "%s",\n    "pid": %d,\n    "tid": %d,\n'
        '    "ts": %d.%03d,\n    "dur": %d.%03d\n    ,\n    "args": {\n      "External id": %d,%s'
        '"Record function id": 0, '
        '%s"Ev Idx": %d\n    }\n  },')
_KERNEL = ('\n  {\n    "ph": "X",\n    "cat": "kernel",\n    "name": "%s",\n    "pid": %d,\n    "tid": %d,\n'
           '    "ts": %d.%03d,\n    "dur": %d.%03d\n    ,\n    "args": {\n      "External id": %d,"queued": 0, '
           '"device": %d, "context": 1, "stream": %d, "correlation": %d, %s%s\n    }\n  },'
           '\n  {\n    "ph": "f",\n    "id": %d,\n    "pid": %d,\n    "tid": %d,\n    "ts": %d.%03d,\n'
           '    "cat": "ac2g",\n    "name": "ac2g"\n    , "bp": "e"\n  },')
_API = ('\n  {\n    "ph": "X",\n    "cat": "%s",\n    "name": "%s",\n    "pid": %d,\n    "tid": %d,\n'
        '    "ts": %d.%03d,\n    "dur": %d.%03d\n    ,\n    "args": {\n      "External id": %d,"cbid": %d, '
        '"correlation": %d\n    }\n  },')
_FLOW_S = ('\n  {\n    "ph": "s",\n    "id": %d,\n    "pid": %d,\n    "tid": %d,\n    "ts": %d.%03d,\n'
           '    "cat": "%s",\n    "name": "%s"\n    \n  },')
_FLOW_F = ('\n  {\n    "ph": "f",\n    "id": %d,\n    "pid": %d,\n    "tid": %d,\n    "ts": %d.%03d,\n'
           '    "cat": "%s",\n    "name": "%s"\n    , "bp": "e"\n  },')
_MEM = ('\n  {\n    "ph": "X",\n    "cat": "%s",\n    "name": "%s",\n    "pid": %d,\n    "tid": %d,\n'
        '    "ts": %d.%03d,\n    "dur": %d.%03d\n    ,\n    "args": {\n      "External id": %d,"device": %d, '
        '"context": 1, "stream": %d, "correlation": %d, "bytes": %d, "memory bandwidth (GB/s)": %r\n    }\n  },'
        '\n  {\n    "ph": "f",\n    "id": %d,\n    "pid": %d,\n    "tid": %d,\n    "ts": %d.%03d,\n'
        '    "cat": "ac2g",\n    "name": "ac2g"\n    , "bp": "e"\n  },')
# cuda_sync as PyTorch 2.x writes it (CUPTI synchronization activity): on pid = device, tid = stream
# (-1 for a context sync), args as in HTA's critical_path/alexnet trace; %s: the Stream Wait Event's
# wait_on_* keys
_SYNC = ('\n  {\n    "ph": "X",\n    "cat": "cuda_sync",\n    "name": "%s",\n    "pid": %d,\n    "tid": %d,\n'
         '    "ts": %d.%03d,\n    "dur": %d.%03d\n    ,\n    "args": {\n      "External id": %d,"cuda_sync_kind": "%s", '
         '%s"stream": %d, "correlation": %d, "device": %d, "context": 1\n    }\n  },')
# python_function (with_stack=True), as in TraceLens' b200 trace; %s: '"Python module id": 0, ' on nn.Module frames
_PY = ('\n  {\n    "ph": "X",\n    "cat": "python_function",\n    "name": "%s",\n    "pid": %d,\n    "tid": %d,\n'
       '    "ts": %d.%03d,\n    "dur": %d.%03d\n    ,\n    "args": {\n      "Python parent id": %d, "Python id": %d, '
       '%s"Ev Idx": %d\n    }\n  },')
_MEMORY = ('\n  {\n    "ph": "i",\n    "cat": "cpu_instant_event",\n    "s": "t",\n    "name": "[memory]",\n'
           '    "pid": %d,\n    "tid": %d,\n    "ts": %d.%03d,\n    "args": {\n      "Total Reserved": %d, '
           '"Total Allocated": %d, "Bytes": %d, "Addr": %d, "Device Id": %d, "Device Type": 1, "Ev Idx": %d\n    }\n  },')
_META = ('\n  {\n    "ph": "M",\n    "name": "%s",\n    "ts": %d.%03d,\n    "pid": %s,\n    "tid": %d,\n'
         '    "args": {\n      "%s": %s\n    }\n  },')

_DEVICE = ('\n      {\n      "id": %d, "name": "NVIDIA B200", "totalGlobalMem": 191503138816,\n'
           '      "computeMajor": 10, "computeMinor": 0,\n'
           '      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,\n'
           '      "regsPerBlock": 65536, "warpSize": 32,\n'
           '      "sharedMemPerBlock": 49152, "numSms": 148\n'
           '    , "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448, '
           '"sharedMemPerMultiprocessor": 233472\n    }')


def _fmt_ts(ns: int) -> str:
    return "%d.%03d" % (ns // 1000, ns % 1000)


# --------------------------------------------------------------------------------------------
# The job: ranks in lockstep


class _Group(NamedTuple):
    name: str
    desc: str
    ranks: tuple[int, ...]
    comms_id: int


class _Job:
    def __init__(self, spec: KinetoJobSpec, layers: int):
        self.spec, self.layers = spec, layers
        rng = random.Random(f"{spec.seed}/job")
        g = spec.group_size
        # the default group's communicator hash is above int64 max, as in real traces
        self.default_pg = _Group("0", "default_pg", tuple(range(spec.world_size)),
                                 rng.randrange(INT64_MAX + 1, 1 << 64))
        self.subgroups = [_Group(str(k + 1), "undefined", tuple(range(k * g, (k + 1) * g)),
                                 rng.randrange(1 << 40, INT64_MAX))
                          for k in range(spec.world_size // g)]
        self.job_start = rng.randrange(20 * 86_400, 80 * 86_400) * 1_000_000_000 + rng.randrange(1_000_000_000)
        self.ranks = [_Rank(self, r) for r in range(spec.world_size)]

    def subgroup_of(self, rank: int) -> _Group:
        return self.subgroups[rank // self.spec.group_size]

    def run(self, sinks: dict[int, _Sink]) -> None:
        for r in self.ranks:
            r.sink = sinks[r.rank]
            r.begin()
        for n in range(self.spec.first_step, self.spec.first_step + self.spec.iterations):
            for r in self.ranks:
                r.step_begin(n)
                r.forward(n)
            for group in self.subgroups:
                self._resolve([self.ranks[i] for i in group.ranks], "AllGather", 2 * ALLGATHER_IN_NELEMS
                              * (len(group.ranks) - 1), self.link_rate(group))
            for r in self.ranks:
                r.backward(n)
            world = self.spec.world_size
            self._resolve(self.ranks, "AllReduce", 2 * (world - 1) * ALLREDUCE_NELEMS * 4 // world,
                          self.link_rate(self.default_pg))
            for r in self.ranks:
                r.optimizer_and_step_end(n)
                r.flush()
        for r in self.ranks:
            r.end()

    def link_rate(self, group: _Group) -> float:
        """The wire rate of the group's transfers: inter_node_gbps when its ranks span hosts."""
        hosts = {rank // self.spec.gpus_per_node for rank in group.ranks}
        if len(hosts) > 1 and self.spec.inter_node_gbps is not None:
            return self.spec.inter_node_gbps
        return LINK_BYTES_PER_NS

    @staticmethod
    def _resolve(members: list[_Rank], collective: str, wire_bytes: int, rate: float) -> None:
        """A collective ends (+0-3 us) at the same job time on every member: the last arrival plus the transfer."""
        starts = {r.rank: r.nccl_start(collective) for r in members}
        done = max(starts.values()) + 8_000 + int(wire_bytes / rate * (1 + 0.05 * members[0].rng.random()))
        for r in members:
            r.finish_nccl(collective, starts[r.rank], done + int(3_000 * r.rng.random()))


class _Annotation:
    """A host user_annotation whose GPU copies (one per stream) span the GPU ops launched inside it."""

    __slots__ = ("name", "external_id", "tid", "spans")

    def __init__(self, name: str, external_id: int, tid: int):
        self.name, self.external_id, self.tid = name, external_id, tid
        self.spans: dict[int, list[int]] = {}

    def cover(self, stream: int, start: int, end: int) -> None:
        span = self.spans.get(stream)
        if span is None:
            self.spans[stream] = [start, end]
        else:
            if start < span[0]:
                span[0] = start
            if end > span[1]:
                span[1] = end


class _Pending(NamedTuple):
    corr: int
    ext: int
    ready: int
    iteration: int
    annotations: tuple[_Annotation, ...]
    group: _Group
    seq: int


class _Rank:
    def __init__(self, job: _Job, rank: int):
        spec = job.spec
        self.job, self.spec, self.rank = job, spec, rank
        self.rng = random.Random(f"{spec.seed}/rank/{rank}")
        rnd = self.rng.randrange
        self.host = f"{spec.host_prefix}{rank // spec.gpus_per_node}"
        self.device = rank % spec.gpus_per_node
        self.pid = 20_000 + 7919 * (rank % spec.gpus_per_node) + rnd(0, 5_000)
        self.tid_main, self.tid_bwd = self.pid, self.pid + 150 + rnd(0, 100)
        self.skew = spec.clock_skew_ns.get(rank, 0)
        self.base = spec.base_for(rank)
        # written relative ts = job time + skew + (job base - this file's base)
        self.shift = self.skew + spec.base_time_ns - self.base
        self.t = job.job_start + rnd(0, 3_000_000)  # CPU clock (job ns since spec.base_time_ns)
        self.compute_free = self.nccl_free = 0
        self.corr = rnd(1_000, 40_000)
        self.ext = rnd(1, 3) if rank % 2 else 1
        self.ev_idx = 0
        self.seq_nr = rnd(100, 400)  # autograd sequence numbers
        self.flow_id = 1
        self.cpu_main: list[str | None] = []
        self.cpu_bwd: list[str | None] = []
        self.gpu: list[str] = []
        self.anns: list[_Annotation] = []  # open annotations (both threads)
        self.done_anns: list[_Annotation] = []
        self.pending: dict[str, _Pending] = {}
        self.kernels: list[KernelTruth] = []
        self.memcpy: list[MemOpTruth] = []
        self.memset: list[MemOpTruth] = []
        self.nccl: list[NcclOpTruth] = []
        self.steps: list[tuple[int, int, int]] = []
        self.host_anns: list[AnnotationTruth] = []
        self.gpu_anns: list[AnnotationTruth] = []
        self.counts: Counter = Counter()
        self.n_cpu_ops = self.n_runtime = self.n_driver = 0
        self.n_ac2g = self.n_fwdbwd = 0
        self.sink: _Sink | None = None
        self.window_start = self.t - rnd(200_000, 600_000)
        self.iteration = 0
        self.fwd_seqs: list[tuple[int, int]] = []
        self.loader_spans: list[tuple[int, int]] = []
        self.host_log: list[tuple[str, int, int]] | None = [] if spec.host_causes else None
        self.syncs: list[SyncTruth] = []
        self.frames: list[FrameTruth] = []
        self.py_buf: list[str | None] = []
        self.frame_stack: list[tuple[int, int, int, int, str]] = []  # (slot, python id, parent id, start, name)
        self.allocations: list[AllocationTruth] = []
        self.allocated = WEIGHT_BYTES
        self.job_frame_id = self.py_id = 1_000_000 * (rank + 1)  # the frames' caller: outside the trace

    # ---- primitives -------------------------------------------------------------------------

    def _adv(self, lo: int, spread: int) -> int:
        self.t += lo + int(spread * self.rng.random())
        return self.t

    def _open(self, buf: list, name: str, tid: int) -> tuple[int, int, int, int]:
        """Reserve a slot for a cpu op whose duration is known once its children are done."""
        start = self._adv(1_000, 2_000)
        ext = self.ext
        self.ext += 1
        ev = self.ev_idx
        self.ev_idx += 1
        buf.append(None)
        return len(buf) - 1, start, ext, ev

    def _close(self, buf: list, slot: tuple[int, int, int, int], cat: str, name: str, tid: int, mid: str,
               seq: str = "", tail: int = 1_500) -> int:
        idx, start, ext, ev = slot
        end = self._adv(tail, tail)
        s, d = start + self.shift, end - start
        if cat == "cpu_op" and not self.job.spec.record_shapes:
            mid = ""  # profile(record_shapes=False) writes no shapes, types or concrete inputs
        buf[idx] = _CPU % (cat, name, self.pid, tid, s // 1000, s % 1000, d // 1000, d % 1000, ext, seq, mid, ev)
        if cat == "cpu_op":
            self.n_cpu_ops += 1
        return end

    def _leaf(self, buf: list, name: str, tid: int, mid_key: str | None = None, seq: str = "") -> None:
        slot = self._open(buf, name, tid)
        self._adv(2_000, 6_000)
        self._close(buf, slot, "cpu_op", name, tid, MID.get(mid_key or name, ""), seq)

    def _api(self, cat: str, name: str, tid: int, ext: int, dur: int = 2_500, spread: int = 4_000,
             returns_after: int = 0, category: str | None = None) -> tuple[int, int, int]:
        """One CUDA API call; returns (start, end, correlation). The text goes to the GPU section. A call
        that waits for the GPU returns at ``returns_after`` at the earliest; ``category``: what the call is
        in the host truth (launch, sync; None: neither)."""
        start = self._adv(800, 1_500)
        end = self._adv(dur, spread)
        if returns_after > end:
            end = self.t = returns_after
        self._log(category, start, end, tid)
        corr = self.corr
        self.corr += 1
        s, d = start + self.shift, end - start
        self.gpu.append(_API % (cat, name, self.pid, tid, s // 1000, s % 1000, d // 1000, d % 1000, ext, CBID[name],
                                corr))
        if cat == "cuda_runtime":
            self.n_runtime += 1
        else:
            self.n_driver += 1
        return start, end, corr

    def _log(self, category: str | None, start: int, end: int, tid: int | None = None) -> None:
        """Record an activity of the main thread (tid None: a phase, on any thread) in the host truth."""
        if self.host_log is not None and category is not None and tid in (None, self.tid_main):
            self.host_log.append((category, self.base + start + self.shift, self.base + end + self.shift))

    def _sync(self, api: str, kind: str, stream: int | None, tid: int, ext: int, returns_after: int) -> None:
        """A call that waits for the GPU (until ``returns_after``) and its cuda_sync event."""
        start, end, corr = self._api("cuda_runtime", api, tid, ext, dur=1_000, spread=1_000,
                                     returns_after=returns_after, category="sync")
        self._sync_event(kind, api, tid, start, end, corr, ext, stream)

    def _sync_event(self, kind: str, api: str, api_tid: int, api_start: int, api_end: int, corr: int, ext: int,
                    stream: int | None, wait_stream: int | None = None, record_corr: int = 0) -> None:
        """The cuda_sync event of a runtime call: from 0.5 us after its start to 0.2 us before its end
        (the call's own overhead around the wait), with its ac2g flow."""
        start, end = api_start + 500, api_end - 200
        s, d = start + self.shift, end - start
        tid = -1 if stream is None else stream
        wait = "" if wait_stream is None else (f'"wait_on_stream": {wait_stream}, "wait_on_cuda_event_record_corr_id": '
                                               f'{record_corr}, "wait_on_cuda_event_id": 1, ')
        self.gpu.append(_SYNC % (kind, self.device, tid, s // 1000, s % 1000, d // 1000, d % 1000, ext, kind, wait,
                                 4294967295 if stream is None else stream, corr, self.device)
                        + _FLOW_F % (corr, self.device, tid, s // 1000, s % 1000, "ac2g", "ac2g"))
        self.n_ac2g += 1
        self._flow_s(corr, api_tid, api_start)
        utc = self.base + self.shift
        self.syncs.append(SyncTruth(kind, api, stream, wait_stream, utc + start, utc + end, utc + api_start,
                                    utc + api_end, corr, ext, self.iteration))

    def _flow_s(self, corr: int, tid: int, start: int) -> None:
        s = start + self.shift
        self.gpu.append(_FLOW_S % (corr, self.pid, tid, s // 1000, s % 1000, "ac2g", "ac2g"))
        self.n_ac2g += 1

    def _cover(self, tid: int, stream: int, start: int, end: int) -> None:
        for a in self.anns:
            if a.tid == tid:
                a.cover(stream, start, end)

    def _launch(self, kt: KernelType, tid: int, ext: int) -> None:
        """Launch a compute kernel on the compute stream (the hot path)."""
        rnd = self.rng.random
        api_start = self.t + 800 + int(1_500 * rnd())
        paced = self.compute_free - 300_000 - int(700_000 * rnd())  # the CPU runs 0.3-1 ms ahead
        if api_start < paced:
            api_start = paced
        api_end = api_start + 2_500 + int(4_000 * rnd())
        self.t = api_end
        if self.host_log is not None:
            self._log("launch", api_start, api_end, tid)
        corr = self.corr
        self.corr += 1
        u = rnd()  # ~3% of kernels follow an idle gap, the rest 1-3 us after their predecessor
        gap = 1_000 + int(2_000 * u) if u >= 0.03 else 20_000 + int(6_000_000 * u)
        start = self.compute_free + gap
        if start < api_start + 3_000:
            start = api_start + 3_000
        end = self.compute_free = start + int(kt.base_ns * (0.85 + 0.3 * rnd()))
        sh, dev, pid = self.shift, self.device, self.pid
        ks, d, a, ad = start + sh, end - start, api_start + sh, api_end - api_start
        if kt.name.startswith("nvjet"):
            cat, api = "cuda_driver", "cuLaunchKernelEx"
            self.n_driver += 1
        else:
            cat, api = "cuda_runtime", "cudaLaunchKernel"
            self.n_runtime += 1
        self.gpu.append(
            _KERNEL % (kt.name, dev, COMPUTE_STREAM, ks // 1000, ks % 1000, d // 1000, d % 1000, ext, dev,
                       COMPUTE_STREAM, corr, kt.args, "", corr, dev, COMPUTE_STREAM, ks // 1000, ks % 1000)
            + _API % (cat, api, pid, tid, a // 1000, a % 1000, ad // 1000, ad % 1000, ext, CBID[api], corr)
            + _FLOW_S % (corr, pid, tid, a // 1000, a % 1000, "ac2g", "ac2g"))
        self.n_ac2g += 2
        self.kernels.append(tuple.__new__(KernelTruth, (kt.name, self.base + ks, self.base + ks + d, dev,
                                                        COMPUTE_STREAM, corr, ext, self.iteration, "compute")))
        for a_ in self.anns:
            if a_.tid == tid:
                a_.cover(COMPUTE_STREAM, start, end)

    def _op_launch(self, buf: list, name: str, tid: int, kernels: tuple[KernelType, ...], seq: str = "",
                   mid_key: str | None = None, output: int | None = None) -> tuple[int, int, int, int]:
        """A cpu_op launching kernels; ``output``: the address of the activation it allocates first
        (with profile_memory)."""
        slot = self._open(buf, name, tid)
        if output is not None and self.spec.profile_memory:
            self._memory(buf, tid, ACTIVATION_BYTES, output, name)
        for kt in kernels:
            self._launch(kt, tid, slot[2])
        self._close(buf, slot, "cpu_op", name, tid, MID[mid_key or name], seq)
        return slot

    def _memory(self, buf: list, tid: int, nbytes: int, address: int, op: str | None) -> None:
        """A [memory] event (allocation: nbytes > 0; free: < 0) now on the thread."""
        t = self._adv(300, 400) + self.shift
        self.allocated += nbytes
        module = next((f[4][11:] for f in reversed(self.frame_stack) if f[4].startswith("nn.Module: ")), None)
        buf.append(_MEMORY % (self.pid, tid, t // 1000, t % 1000, RESERVED_BYTES, self.allocated, nbytes, address,
                              self.device, self.ev_idx))
        self.ev_idx += 1
        self.allocations.append(AllocationTruth(self.base + t, nbytes, address, self.allocated, tid, op, module,
                                                self.iteration))

    def _mem(self, kind: str, name: str, nbytes: int, tid: int, ext: int) -> None:
        cat, api = ("gpu_memset", "cudaMemsetAsync") if kind == "memset" else ("gpu_memcpy", "cudaMemcpyAsync")
        # an async copy to or from pageable memory waits while the driver stages it (sync_stalls' rule)
        api_start, api_end, corr = self._api("cuda_runtime", api, tid, ext, dur=5_000, spread=8_000,
                                             category="sync" if "Pageable" in name else "launch")
        self._flow_s(corr, tid, api_start)
        start = max(self.compute_free + 1_500, api_start + 4_000)
        rate = 2.0 if kind == "memset" else 20.0  # bytes per ns
        end = self.compute_free = start + 1_000 + int(nbytes / rate)
        s, d, dev = start + self.shift, end - start, self.device
        bandwidth = round(nbytes / d, 6)
        self.gpu.append(_MEM % (cat, name, dev, COMPUTE_STREAM, s // 1000, s % 1000, d // 1000, d % 1000, ext, dev,
                                COMPUTE_STREAM, corr, nbytes, bandwidth, corr, dev, COMPUTE_STREAM, s // 1000,
                                s % 1000))
        self.n_ac2g += 1
        truth = MemOpTruth(kind, name, nbytes, self.base + s, self.base + s + d, corr, self.iteration)
        (self.memset if kind == "memset" else self.memcpy).append(truth)
        self._cover(tid, COMPUTE_STREAM, start, end)

    def _annotation_open(self, buf: list, name: str, tid: int) -> tuple[tuple[int, int, int, int], _Annotation]:
        slot = self._open(buf, name, tid)
        ann = _Annotation(name, slot[2], tid)
        self.anns.append(ann)
        return slot, ann

    def _annotation_close(self, buf: list, slot, ann: _Annotation, mid: str = "", tail: int = 1_500) -> int:
        end = self._close(buf, slot, "user_annotation", ann.name, ann.tid, mid, tail=tail)
        self.anns.remove(ann)
        self.done_anns.append(ann)
        start = slot[1] + self.shift + self.base
        self.host_anns.append(AnnotationTruth(ann.name, start, end + self.shift + self.base, None, ann.external_id))
        return end

    def _fwd_seq(self) -> tuple[str, int]:
        nr = self.seq_nr
        self.seq_nr += 1
        return f'"Sequence number": {nr}, "Fwd thread id": 0, ', nr

    def _fwdbwd_start(self, nr: int, slot) -> None:
        """Flow from a forward op to the backward node with the same sequence number."""
        fid = self.flow_id
        self.flow_id += 1
        self.fwd_seqs.append((nr, fid))  # per layer: linear (addmm), gelu, mm, add
        s = slot[1] + self.shift
        self.cpu_main.append(_FLOW_S % (fid, self.pid, self.tid_main, s // 1000, s % 1000, "fwdbwd", "fwdbwd"))
        self.n_fwdbwd += 1

    # ---- collectives --------------------------------------------------------------------------

    def _collective(self, buf: list, tid: int, collective: str) -> None:
        """c10d op > record_param_comms > nccl:* annotation > event record/wait + cudaLaunchKernelExC."""
        if collective == "AllReduce":
            c10d, coll, ann_name, group = "c10d::allreduce_", "allreduce", "nccl:all_reduce", self.job.default_pg
            dtype, in_n, out_n, seq = "Float", ALLREDUCE_NELEMS, ALLREDUCE_NELEMS, self.iteration + 1
            dims = f"[[{ALLREDUCE_NELEMS}], [], [], [], [], [], [], [], [], []]"
            strides, types = "[[1], [], [], [], [], [], [], [], [], []]", '"float"'
        else:
            c10d, coll, ann_name, group = ("c10d::_allgather_base_", "_allgather_base", "nccl:_all_gather_base",
                                           self.job.subgroup_of(self.rank))
            dtype, in_n, seq = "BFloat16", ALLGATHER_IN_NELEMS, self.iteration
            out_n = in_n * len(group.ranks)
            dims = f"[[1, {ALLGATHER_IN_NELEMS}], [], [], [], [], [], [], [], [], []]"
            strides, types = f"[[{ALLGATHER_IN_NELEMS}, 1], [], [], [], [], [], [], [], [], []]", '"c10::BFloat16"'
        ranks = "[" + ", ".join(map(str, group.ranks)) + "]"
        outer = self._open(buf, c10d, tid)
        rpc = self._open(buf, "record_param_comms", tid)
        ext = rpc[2]
        ann_slot, ann = self._annotation_open(buf, ann_name, tid)
        _, _, record = self._api("cuda_runtime", "cudaEventRecord", tid, ext)
        wait_start, wait_end, wait = self._api("cuda_runtime", "cudaStreamWaitEvent", tid, ext)
        if self.spec.sync_stalls:  # the NCCL stream waits for the work queued on the compute stream
            self._sync_event("Stream Wait Event", "cudaStreamWaitEvent", tid, wait_start, wait_end, wait, ext,
                             NCCL_STREAM, COMPUTE_STREAM, record)
        api_start, _, corr = self._api("cuda_runtime", "cudaLaunchKernelExC", tid, ext, dur=6_000, spread=4_000,
                                       category="launch")
        self._flow_s(corr, tid, api_start)
        ready = max(api_start + 200_000 + int(300_000 * self.rng.random()), self.compute_free + 2_000)
        open_anns = tuple(a for a in self.anns if a.tid == tid)
        self.pending[collective] = _Pending(corr, ext, ready, self.iteration, open_anns, group, seq)
        self._annotation_close(buf, ann_slot, ann, MID[ann_name])
        rpc_mid = (f'"Collective name": "{coll}", "Process Group Description": "{group.desc}", "dtype": "{dtype}", '
                   f'"Rank": {self.rank}, "Input Strides": {strides}, "Concrete Inputs": ["", "", "", "0", "", '
                   f'"[]", "[]", "{group.ranks[0]}", "1", "{len(group.ranks)}"], "Out msg nelems": {out_n}, '
                   f'"Process Group Name": "{group.name}", "Input type": [{types}, "", "", "Scalar", "", '
                   f'"ScalarList", "ScalarList", "Scalar", "Scalar", "Scalar"], "Global rank stride": 1, '
                   f'"Out split size": "[]", "In split size": "[]", "Seq": {seq}, "Process Group Ranks": "{ranks}", '
                   f'"Group size": {len(group.ranks)}, "Comms Id": {group.comms_id}, "Input Dims": {dims}, '
                   f'"Global rank start": {group.ranks[0]}, ')
        # "In msg nelems" comes after "Ev Idx" in real files (an unordered map): keep it in the middle here
        rpc_mid += f'"In msg nelems": {in_n}, '
        self._close(buf, rpc, "cpu_op", "record_param_comms", tid, rpc_mid)
        self._close(buf, outer, "cpu_op", c10d, tid, MID[c10d])

    def nccl_start(self, collective: str) -> int:
        return max(self.pending[collective].ready, self.nccl_free + 2_000)

    def finish_nccl(self, collective: str, start: int, end: int) -> None:
        p = self.pending.pop(collective)
        kt = NCCL_ALLREDUCE if collective == "AllReduce" else NCCL_ALLGATHER
        group = p.group
        if collective == "AllReduce":
            coll, dtype, in_n, out_n = "allreduce", "Float", ALLREDUCE_NELEMS, ALLREDUCE_NELEMS
        else:
            coll, dtype, in_n = "_allgather_base", "BFloat16", ALLGATHER_IN_NELEMS
            out_n = in_n * len(group.ranks)
        ranks = "[" + ", ".join(map(str, group.ranks)) + "]"
        extra = (f', "Collective name": "{coll}", "In msg nelems": {in_n}, "Out msg nelems": {out_n}, '
                 f'"Group size": {len(group.ranks)}, "dtype": "{dtype}", "In split size": "[]", "Out split size": '
                 f'"[]", "Process Group Name": "{group.name}", "Process Group Description": "{group.desc}", '
                 f'"Process Group Ranks": "{ranks}", "Seq": {p.seq}, "Comms Id": {group.comms_id}')
        s, d, dev = start + self.shift, end - start, self.device
        self.gpu.append(_KERNEL % (kt.name, dev, NCCL_STREAM, s // 1000, s % 1000, d // 1000, d % 1000, p.ext, dev,
                                   NCCL_STREAM, p.corr, kt.args, extra, p.corr, dev, NCCL_STREAM, s // 1000,
                                   s % 1000))
        self.n_ac2g += 1
        self.nccl_free = end
        u_start, u_end = self.base + s, self.base + s + d
        self.kernels.append(KernelTruth(kt.name, u_start, u_end, dev, NCCL_STREAM, p.corr, p.ext, p.iteration,
                                        "comm"))
        size = DTYPE_BYTES[dtype]
        self.nccl.append(NcclOpTruth(
            collective, coll, kt.name, dtype, in_n, out_n, in_n * size, out_n * size,
            (in_n if collective == "AllReduce" else out_n) * size, len(group.ranks), group.name, group.desc,
            group.ranks, p.seq, group.comms_id, u_start, u_end, NCCL_STREAM, p.corr, p.ext, p.iteration))
        for a in p.annotations:
            a.cover(NCCL_STREAM, start, end)

    # ---- the training loop -------------------------------------------------------------------

    def begin(self) -> None:
        self.sink.begin(self)

    def step_begin(self, n: int) -> None:
        self.iteration = n
        buf, tid = self.cpu_main, self.tid_main
        self._adv(30_000, 150_000)
        self.step_slot, self.step_ann = self._annotation_open(buf, f"ProfilerStep#{n}", tid)
        self.step_start = self.step_slot[1]
        loader_ns = self.spec.loader_ns(self.rank, n)
        if loader_ns:  # the next batch, on the loop's thread: the GPU waits
            slot = self._open(buf, DATA_LOADER_OP, tid)
            self.t = slot[1] + loader_ns - 1_500
            end = self._close(buf, slot, "cpu_op", DATA_LOADER_OP, tid, "", tail=1_500)
            self.loader_spans.append((self.base + slot[1] + self.shift, self.base + end + self.shift))
            self._log("data", slot[1], end, tid)
        for nbytes in (262_144, 262_144):  # input ids, labels
            to = self._open(buf, "aten::to", tid)
            tc = self._open(buf, "aten::_to_copy", tid)
            self._leaf(buf, "aten::empty_strided", tid, "none")
            cp = self._open(buf, "aten::copy_", tid)
            self._mem("HtoD", "Memcpy HtoD (Pinned -> Device)", nbytes, tid, cp[2])
            self._close(buf, cp, "cpu_op", "aten::copy_", tid, MID["aten::copy_"])
            self._close(buf, tc, "cpu_op", "aten::_to_copy", tid, MID["aten::_to_copy"])
            self._close(buf, to, "cpu_op", "aten::to", tid, MID["aten::to"])
        zslot, zann = self._annotation_open(buf, "Optimizer.zero_grad#SGD.zero_grad", tid)
        z = self._open(buf, "aten::zero_", tid)
        self._mem("memset", "Memset (Device)", 4 << 20, tid, z[2])
        self._close(buf, z, "cpu_op", "aten::zero_", tid, MID["aten::zero_"])
        self._annotation_close(buf, zslot, zann)

    def forward(self, n: int) -> None:
        buf, tid = self.cpu_main, self.tid_main
        self.fwd_seqs = []
        phase = self._phase_open("## forward ##")
        with self._module("Model", 0, "train.py(52): forward"):
            for layer in range(self.job.layers):
                with self._module("Block", layer, "train.py(31): forward"):
                    self._layer_forward(buf, tid, layer)
                if layer == self.job.layers // 2:
                    self._collective(buf, tid, "AllGather")
        with self._frames("torch/nn/functional.py(3858): mse_loss"):  # loss
            self._leaf(buf, "aten::mse_loss", tid, "backward_node")
        self._phase_close(phase, "forward")

    def _layer_forward(self, buf: list, tid: int, layer: int) -> None:
        """x = x + mm(gelu(linear(x)), w): nn.Linear and nn.GELU modules, torch.mm and the + operator."""
        seq, nr = self._fwd_seq()
        with self._module("Linear", layer, "torch/nn/modules/linear.py(125): forward", "<built-in function linear>"):
            lin = self._open(buf, "aten::linear", tid)
            t = self._open(buf, "aten::t", tid)
            tr = self._open(buf, "aten::transpose", tid)
            self._leaf(buf, "aten::as_strided", tid)
            self._close(buf, tr, "cpu_op", "aten::transpose", tid, MID["aten::transpose"])
            self._close(buf, t, "cpu_op", "aten::t", tid, MID["aten::t"])
            self._op_launch(buf, "aten::addmm", tid, (GEMM_FWD,), output=ACTIVATION_ADDRESS + (4 * layer << 27))
            self._close(buf, lin, "cpu_op", "aten::linear", tid, MID["aten::linear"], seq)
        self._fwdbwd_start(nr, lin)
        frames = {"aten::gelu": self._module("GELU", layer, "torch/nn/modules/activation.py(734): forward",
                                             "<built-in function gelu>"),
                  "aten::mm": self._frames("<built-in method mm of type object at 0x7f3a2c1e4f40>"),
                  "aten::add": nullcontext()}  # Python's + calls no function
        for k, (name, kt) in enumerate((("aten::gelu", GELU), ("aten::mm", GEMM_FWD_MM), ("aten::add", ADD)), 1):
            seq, nr = self._fwd_seq()
            with frames[name]:
                slot = self._op_launch(buf, name, tid, (kt,), seq, output=ACTIVATION_ADDRESS + (4 * layer + k << 27))
            self._fwdbwd_start(nr, slot)

    # ---- python frames and phase annotations (KinetoJobSpec.python_frames, phase_annotations) ----

    @contextmanager
    def _frames(self, *names: str):
        """python_function frames around the body, outermost first (nothing without python_frames)."""
        if not self.spec.python_frames:
            yield
            return
        for name in names:
            start = self._adv(300, 400)
            parent = self.frame_stack[-1][1] if self.frame_stack else self.job_frame_id
            self.py_id += 1
            self.py_buf.append(None)
            self.frame_stack.append((len(self.py_buf) - 1, self.py_id, parent, start, name))
        yield
        for _ in names:
            slot, py_id, parent, start, name = self.frame_stack.pop()
            end = self._adv(200, 300)
            s, d = start + self.shift, end - start
            module = '"Python module id": 0, ' if name.startswith("nn.Module: ") else ""
            self.py_buf[slot] = _PY % (name, self.pid, self.tid_main, s // 1000, s % 1000, d // 1000, d % 1000,
                                       parent, py_id, module, self.ev_idx)
            self.ev_idx += 1
            self.frames.append(FrameTruth(name, self.base + s, self.base + s + d, py_id, parent, self.iteration))

    def _module(self, cls: str, index: int, source: str, *inner: str):
        """An nn.Module call as with_stack=True records it: 'nn.Module: Linear_0' (the class and its
        instance number) > module.py _call_impl > the module's forward > ``inner``."""
        return self._frames(f"nn.Module: {cls}_{index}", CALL_IMPL, source, *inner)

    def _phase_open(self, name: str):
        if not self.spec.phase_annotations:
            return None
        return self._annotation_open(self.cpu_main, name, self.tid_main)

    def _phase_close(self, opened, category: str) -> None:
        if opened is not None:
            slot, ann = opened
            self._log(category, slot[1], self._annotation_close(self.cpu_main, slot, ann))

    def backward(self, n: int) -> None:
        buf, tid = self.cpu_bwd, self.tid_bwd
        phase = self._phase_open("## backward ##")  # loss.backward() on the main thread: autograd's thread works
        self._adv(20_000, 40_000)
        seqs = self.fwd_seqs  # 4 per layer: linear(addmm), gelu, mm, add
        for layer in reversed(range(self.job.layers)):
            (s_lin, f_lin), (s_gelu, f_gelu), (s_mm, f_mm), (s_add, f_add) = seqs[4 * layer:4 * layer + 4]
            self._node(buf, tid, "AddBackward0", s_add, f_add, ())
            self._node(buf, tid, "MmBackward0", s_mm, f_mm, (("aten::mm", GEMM_DGRAD), ("aten::mm", GEMM_WGRAD)))
            self._node(buf, tid, "GeluBackward0", s_gelu, f_gelu, (("aten::gelu_backward", GELU_BWD),))
            self._node(buf, tid, "AddmmBackward0", s_lin, f_lin, (("aten::mm", GEMM_DGRAD), ("aten::mm", GEMM_WGRAD),
                                                                 ("aten::sum", SUM)))
            self._node(buf, tid, "torch::autograd::AccumulateGrad", None, None, (("aten::add_", ADD),))
            if self.spec.profile_memory:  # the layer's activations are freed once its gradients are done
                for k in range(4):
                    self._memory(buf, tid, -ACTIVATION_BYTES, ACTIVATION_ADDRESS + (4 * layer + k << 27), None)
            if layer == self.job.layers // 2:
                self._collective(buf, tid, "AllReduce")
        self._adv(10_000, 20_000)
        self._phase_close(phase, "backward")

    def _node(self, buf: list, tid: int, node: str, nr: int | None, flow: int | None, ops) -> None:
        outer = self._open(buf, f"autograd::engine::evaluate_function: {node}", tid)
        if flow is not None:
            s = outer[1] + self.shift
            buf.append(_FLOW_F % (flow, self.pid, tid, s // 1000, s % 1000, "fwdbwd", "fwdbwd"))
            self.n_fwdbwd += 1
        seq = f'"Sequence number": {nr}, "Fwd thread id": 1, ' if nr is not None else ""
        inner = self._open(buf, node, tid)
        for name, kt in ops:
            self._op_launch(buf, name, tid, (kt,))
        self._close(buf, inner, "cpu_op", node, tid, MID["backward_node"], seq)
        # the outer node prints "Record function id" before "Sequence number" (real torch 2.13 order)
        self._close(buf, outer, "cpu_op", f"autograd::engine::evaluate_function: {node}", tid, seq)

    def _comm_stream_wait(self, tid: int, ext: int) -> None:
        """KinetoJobSpec.comm_stream_waits: an event recorded on the NCCL stream after the AllReduce, and the
        compute stream's wait on it with its cuda_sync event naming that record (comm_breakdown's blocking)."""
        _, _, record = self._api("cuda_runtime", "cudaEventRecord", tid, ext)
        wait_start, wait_end, wait = self._api("cuda_runtime", "cudaStreamWaitEvent", tid, ext)
        self._sync_event("Stream Wait Event", "cudaStreamWaitEvent", tid, wait_start, wait_end, wait, ext,
                         COMPUTE_STREAM, NCCL_STREAM, record)

    def optimizer_and_step_end(self, n: int) -> None:
        buf, tid = self.cpu_main, self.tid_main
        phase = self._phase_open("## optimizer ##")
        oslot, oann = self._annotation_open(buf, "Optimizer.step#SGD.step", tid)
        fa = self._open(buf, "aten::_foreach_add_", tid)
        if self.spec.comm_stream_waits:
            self._comm_stream_wait(tid, fa[2])
        else:
            self._api("cuda_runtime", "cudaStreamWaitEvent", tid, fa[2])  # the optimizer needs the reduced grads
        self.compute_free = max(self.compute_free, self.nccl_free)
        for _ in range(self.job.layers):
            self._launch(FOREACH_ADD, tid, fa[2])
        self._close(buf, fa, "cpu_op", "aten::_foreach_add_", tid, MID["aten::_foreach_add_"])
        self._log("optimizer", oslot[1], self._annotation_close(buf, oslot, oann))  # a phase by its name
        self._phase_close(phase, "optimizer")
        if self.spec.sync_stalls:  # torch.cuda.synchronize(): the host waits for the whole device
            self._sync("cudaDeviceSynchronize", "Context Sync", None, tid, self.step_slot[2],
                       max(self.compute_free, self.nccl_free) + 1_000)
        item = self._open(buf, "aten::item", tid)
        lsd = self._open(buf, "aten::_local_scalar_dense", tid)
        self._mem("DtoH", "Memcpy DtoH (Device -> Pageable)", 4, tid, lsd[2])
        drained = max(self.compute_free, self.nccl_free) + 3_000 + int(5_000 * self.rng.random())
        if self.spec.sync_stalls:  # loss.item() returns once the copy is done
            self._sync("cudaStreamSynchronize", "Stream Sync", COMPUTE_STREAM, tid, lsd[2], drained)
        else:  # the call returns at once and the host idles until the drain (the default files' timing)
            self._api("cuda_runtime", "cudaStreamSynchronize", tid, lsd[2], dur=1_000, spread=1_000, category="sync")
            self.t = max(self.t, drained)
        self._close(buf, lsd, "cpu_op", "aten::_local_scalar_dense", tid, MID["aten::_local_scalar_dense"])
        self._close(buf, item, "cpu_op", "aten::item", tid, MID["aten::item"])
        end = self._annotation_close(buf, self.step_slot, self.step_ann, tail=5_000)
        self.steps.append((n, self.base + self.step_start + self.shift, self.base + end + self.shift))

    def flush(self) -> None:
        """Write the iteration: host events per thread, then CUPTI activities and GPU annotation copies."""
        gpu = self.gpu
        for a in self.done_anns:
            for stream, (lo, hi) in sorted(a.spans.items()):
                s, d = lo - 1 + self.shift, hi - lo + 2
                gpu.append(_X % ("gpu_user_annotation", a.name, self.device, stream, s // 1000, s % 1000,
                                 d // 1000, d % 1000, f'"External id": {a.external_id}'))
                self.gpu_anns.append(AnnotationTruth(a.name, self.base + s, self.base + s + d, stream,
                                                     a.external_id))
        self.done_anns = []
        self.sink.write_cpu(self, "".join(self.cpu_main) + "".join(self.cpu_bwd) + "".join(self.py_buf))
        self.sink.write_gpu(self, "".join(gpu))
        self.cpu_main, self.cpu_bwd, self.gpu, self.py_buf = [], [], [], []

    def end(self) -> None:
        self.window_end = self.t + self.rng.randrange(100_000, 400_000)

    # ---- output pieces -------------------------------------------------------------------------

    def header(self) -> str:
        spec, job = self.spec, self.job
        devices = ",".join(_DEVICE % i for i in range(spec.gpus_per_node))
        own = job.subgroup_of(self.rank)
        pgs = [job.default_pg] + ([own] if own is not job.default_pg else [])
        pg_config = ", ".join(
            '{"pg_name": "%s", "pg_desc": "%s", "backend_config": "cuda:nccl", "pg_size": %d, "ranks": [%s]}'
            % (g.name, g.desc, len(g.ranks), ", ".join(map(str, g.ranks))) for g in pgs)
        dist = ('{"backend": "nccl", "rank": %d, "world_size": %d, "pg_count": %d, "pg_config": [%s], '
                '"nccl_version": "%s"}' % (self.rank, spec.world_size, 1 + len(job.subgroups), pg_config,
                                           NCCL_VERSION))
        trace_id = "%032X" % random.Random(f"{spec.seed}/trace_id/{self.rank}").getrandbits(128)
        meta = [("cupti_version", "28"), ("cuda_runtime_version", "13000"), ("cuda_driver_version", "13000"),
                ("distributedInfo", dist), ("record_shapes", "1" if spec.record_shapes else "0"), ("trace_id", f'"{trace_id}"'),
                ("host_name", f'"{self.host}"')]
        return (' {\n    "schemaVersion": 1,\n    "deviceProperties": [' + devices + '\n    ],\n    '
                + "".join(f'\n      "{k}": {v},' for k, v in meta)
                + f'\n    "displayTimeUnit": "ms",\n    "baseTimeNanoseconds": {self.base},'
                + '\n    "traceEvents": [\n    ')

    def metadata_events(self) -> str:
        ts = self.window_start + 100_000 + self.shift
        tsu, tsn = ts // 1000, ts % 1000
        out = [_META % ("process_name", tsu, tsn, self.pid, 0, "name", '"python3"'),
               _META % ("process_labels", tsu, tsn, self.pid, 0, "labels", '"CPU"'),
               _META % ("process_sort_index", tsu, tsn, self.pid, 0, "sort_index", self.pid)]
        for d in range(self.spec.gpus_per_node):
            out += [_META % ("process_name", tsu, tsn, d, 0, "name", '"python3"'),
                    _META % ("process_labels", tsu, tsn, d, 0, "labels", f'"GPU {d}"'),
                    _META % ("process_sort_index", tsu, tsn, d, 0, "sort_index", 16_777_216 + d)]
        for tid, label in ((self.tid_main, "pt_main_thread"), (self.tid_bwd, "pt_autograd_0")):
            out += [_META % ("thread_name", tsu, tsn, self.pid, tid, "name", f'"thread {tid} ({label})"'),
                    _META % ("thread_sort_index", tsu, tsn, self.pid, tid, "sort_index", tid)]
        for stream in (COMPUTE_STREAM, NCCL_STREAM):
            out += [_META % ("thread_name", tsu, tsn, self.device, stream, "name", f'"stream {stream} "'),
                    _META % ("thread_sort_index", tsu, tsn, self.device, stream, "sort_index", stream)]
        self.counts[("M", None)] += len(out)
        return "".join(out)

    def trailer(self, trace_name: str) -> str:
        s = self.window_start + self.shift
        d = self.window_end - self.window_start
        e = self.window_end + self.shift
        self.counts[("X", "Trace")] += 1
        self.counts[("M", None)] += 1
        self.counts[("i", None)] += 2
        return (_X.replace('"pid": %d,\n    "tid": %d', '"pid": "Spans",\n    "tid": "PyTorch Profiler"')
                % ("Trace", "PyTorch Profiler (0)", s // 1000, s % 1000, d // 1000, d % 1000, '"Op count": 0')
                + _META.replace('"pid": %s', '"pid": "Spans"') % ("process_sort_index", s // 1000, s % 1000, 0,
                                                                 "sort_index", 536870912)
                + '\n  {\n    "ph": "i",\n    \n    "s": "g",\n    "name": "Iteration Start: PyTorch Profiler",\n'
                  '    "pid": "Traces",\n    "tid": "Trace PyTorch Profiler",\n    "ts": %s\n    \n  },' % _fmt_ts(s)
                + '\n  {\n    "ph": "i",\n    \n    "s": "g",\n    "name": "Record Window End",\n    "pid": "",\n'
                  '    "tid": "",\n    "ts": %s\n    \n  }' % _fmt_ts(e)
                + '\n  ],"traceName": "%s" }' % trace_name)

    def file_time_ns(self) -> int:
        """time.time_ns() on this host when tensorboard_trace_handler named the file."""
        return self.spec.base_time_ns + self.window_end + self.skew + 30_000_000 + 7_919 * self.rank

    def record(self, truth: KinetoTruth, path: Path, trace_name: str) -> None:
        r = self.rank
        truth.rank_file[r], truth.file_rank[path] = path, r
        truth.base_time_ns[path], truth.trace_names[path] = self.base, trace_name
        truth.hostnames[r], truth.pids[r], truth.devices[r] = self.host, self.pid, self.device
        truth.threads[r] = (self.tid_main, self.tid_bwd)
        truth.clock_skew_ns[r] = self.skew
        truth.kernels[r] = sorted(self.kernels, key=lambda k: k.start_ns)
        truth.memcpy[r], truth.memset[r] = self.memcpy, self.memset
        truth.runtime_calls[r], truth.driver_calls[r] = self.n_runtime, self.n_driver
        truth.cpu_ops[r] = self.n_cpu_ops
        truth.user_annotations[r], truth.gpu_annotations[r] = self.host_anns, self.gpu_anns
        truth.iterations[r], truth.nccl_ops[r] = self.steps, self.nccl
        truth.data_loader[r] = self.loader_spans
        truth.syncs[r], truth.frames[r] = self.syncs, sorted(self.frames, key=lambda f: f.start_ns)
        truth.memory[r] = self.allocations
        if self.host_log is not None:
            truth.host[r] = self.host_log
            truth.gpu_busy[r] = [(k.start_ns, k.end_ns) for k in truth.kernels[r]] + [
                (m.start_ns, m.end_ns) for m in self.memcpy + self.memset]
        truth.comm_overlap_ns[r] = _overlap(
            [(k.start_ns, k.end_ns) for k in truth.kernels[r] if k.kind == "compute"],
            [(k.start_ns, k.end_ns) for k in truth.kernels[r] if k.kind == "comm"])
        c = self.counts
        c[("X", "cpu_op")] += self.n_cpu_ops
        c[("X", "user_annotation")] += len(self.host_anns)
        c[("X", "gpu_user_annotation")] += len(self.gpu_anns)
        c[("X", "cuda_runtime")] += self.n_runtime
        c[("X", "cuda_driver")] += self.n_driver
        c[("X", "kernel")] += len(self.kernels)
        c[("X", "gpu_memcpy")] += len(self.memcpy)
        c[("X", "gpu_memset")] += len(self.memset)
        c[("X", "cuda_sync")] += len(self.syncs)
        c[("X", "python_function")] += len(self.frames)
        c[("i", "cpu_instant_event")] += len(self.allocations)
        c[("s", "ac2g")] += self.n_ac2g // 2
        c[("f", "ac2g")] += self.n_ac2g // 2
        c[("s", "fwdbwd")] += self.n_fwdbwd // 2
        c[("f", "fwdbwd")] += self.n_fwdbwd // 2
        truth.event_counts[r] = +c


# --------------------------------------------------------------------------------------------
# Output sinks


class _Sink:
    trace_name = ""

    def begin(self, rank: _Rank) -> None: ...

    def write_cpu(self, rank: _Rank, text: str) -> None: ...

    def write_gpu(self, rank: _Rank, text: str) -> None: ...


class _FileSink(_Sink):
    """Host events go straight to the file, GPU activities to a spill file appended at the end."""

    def __init__(self, out_dir: Path, tmp: Path, rank: _Rank, spec: KinetoJobSpec):
        self.out_dir, self.spec = out_dir, spec
        self.tmp_path = tmp / f"rank{rank.rank}.part"
        self.spill_path = tmp / f"rank{rank.rank}.gpu"

    def begin(self, rank: _Rank) -> None:
        self.main = open(self.tmp_path, "w", encoding="utf-8", newline="")
        self.spill = open(self.spill_path, "w", encoding="utf-8", newline="")
        self.main.write(rank.header())
        self.main.write(rank.metadata_events())

    def write_cpu(self, rank: _Rank, text: str) -> None:
        self.main.write(text)

    def write_gpu(self, rank: _Rank, text: str) -> None:
        self.spill.write(text)

    def close(self, rank: _Rank) -> Path:
        name = f"{rank.host}_{rank.pid}.{rank.file_time_ns()}.pt.trace.json"
        final = self.out_dir / (name + (".gz" if self.spec.gzip else ""))
        if self.spec.gzip:  # export_chrome_trace writes a temp .json, then gzips it
            self.trace_name = "/tmp/tmp%08x.json" % random.Random(f"{self.spec.seed}/tmp/{rank.rank}").getrandbits(32)
        else:
            self.trace_name = str(final)
        self.spill.close()
        with open(self.spill_path, encoding="utf-8", newline="") as spill:
            shutil.copyfileobj(spill, self.main, 1 << 22)
        self.main.write(rank.trailer(self.trace_name))
        self.main.close()
        os.unlink(self.spill_path)
        if self.spec.gzip:
            with open(self.tmp_path, "rb") as src, open(final, "wb") as raw, \
                    gzip_module.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as dst:
                shutil.copyfileobj(src, dst, 1 << 22)
            os.unlink(self.tmp_path)
        else:
            shutil.move(self.tmp_path, final)
        return final


class _CountingSink(_Sink):
    def __init__(self):
        self.bytes = 0

    def begin(self, rank: _Rank) -> None:
        self.bytes += len(rank.header()) + len(rank.metadata_events())

    def write_cpu(self, rank: _Rank, text: str) -> None:
        self.bytes += len(text)

    def write_gpu(self, rank: _Rank, text: str) -> None:
        self.bytes += len(text)


@lru_cache(maxsize=64)
def _layers_for_size(target: int, iterations: int, world_size: int, gpus_per_node: int, group_size: int) -> int:
    """Layers giving ~target bytes for rank 0: size(iters, L) ~ H + iters * (F + L * P), fitted on tiny jobs."""

    def size(iters: int, layers: int) -> int:
        spec = KinetoJobSpec(world_size=world_size, iterations=iters, layers=layers, gpus_per_node=gpus_per_node,
                             subgroup_size=group_size)
        job = _Job(spec, layers)
        sinks = {r.rank: _CountingSink() for r in job.ranks}
        job.run(sinks)
        return sinks[0].bytes + 600  # + the trailer

    b11, b13, b21 = size(1, 1), size(1, 3), size(2, 1)
    per_layer = (b13 - b11) / 2
    fixed = b21 - b11 - per_layer
    header = b11 - fixed - per_layer
    return max(1, round((target - header - iterations * fixed) / (iterations * per_layer)))


# --------------------------------------------------------------------------------------------
# Helpers


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


__all__ = ["KinetoJobSpec", "KinetoTruth", "KernelTruth", "MemOpTruth", "NcclOpTruth", "AnnotationTruth",
           "SyncTruth", "FrameTruth", "AllocationTruth", "generate_kineto_job"]


# --------------------------------------------------------------------------------------------
# Allocator events: a small trace of [memory] instant events written as given


class MemoryEvent(NamedTuple):
    ts_ns: int                         # relative to base_ns
    bytes: int                         # > 0 allocation, < 0 free
    address: int | None = None         # None: PyTorch before 1.10 wrote no Addr
    device_id: int = 0                 # -1: host memory (Device Type 0)
    total_allocated: int | None = None
    total_reserved: int | None = None


def write_memory_trace(path: str | Path, events: list[MemoryEvent],
                       steps: list[tuple[int, int, int]], ops: list[tuple[str, int, int]] = (),
                       base_ns: int = 1_700_000_000_000_000_000, pid: int = 4242) -> Path:
    """A Kineto trace holding ProfilerStep#N ranges (number, start, end), cpu_ops (name, start,
    end) and the allocator's [memory] events as profile_memory=True writes them (cat
    cpu_instant_event, ph i, args as in PyTorch 2.x), every time relative to base_ns."""
    def span(cat, name, start, end):
        return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": pid,
                "ts": float(_fmt_ts(start)), "dur": float(_fmt_ts(end - start)), "args": {}}

    trace = [span("user_annotation", f"ProfilerStep#{n}", s, e) for n, s, e in steps]
    trace += [span("cpu_op", name, s, e) for name, s, e in ops]
    for no, m in enumerate(events):
        args = {"Total Reserved": m.total_reserved, "Total Allocated": m.total_allocated,
                "Bytes": m.bytes, "Addr": m.address, "Device Id": m.device_id,
                "Device Type": 0 if m.device_id < 0 else 1, "Ev Idx": no}
        trace.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                      "pid": pid, "tid": pid, "ts": float(_fmt_ts(m.ts_ns)),
                      "args": {k: v for k, v in args.items() if v is not None}})
    path = Path(path)
    path.write_text(json.dumps({"schemaVersion": 1, "deviceProperties": [],
                                "baseTimeNanoseconds": base_ns, "traceEvents": trace}))
    return path
