"""Kineto traces of small jobs parallelised in the usual ways (DDP, FSDP, ZeRO-2, TP x DP,
pipeline, MoE), for the parallelism metric: each rank's steps hold forward, backward and
optimizer phases as PyTorch marks them (`## forward ##`, `## backward ##` with the autograd
thread's `autograd::engine::evaluate_function: ...` ops, `## optimizer ##`), GEMM kernels, and
the collectives each scheme launches, with the process-group arguments PyTorch >= 2.2 writes on
NCCL kernels (Collective name, In/Out msg nelems, Group size, Process Group Name/Ranks, Seq).

A collective is given as (phase, where, collective, group, elements): `where` says when in the
phase it is launched: 'each layer' (before the layer's GEMM), 'after each layer', 'every 2
layers' (gradient buckets) or 'once'."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

JOBS = ("ddp", "fsdp", "zero2", "tp_dp", "pp", "moe")
_C10D = {"AllReduce": "allreduce", "AllGather": "_allgather_base",
         "ReduceScatter": "_reduce_scatter_base", "AllToAll": "all_to_all", "Send": "send",
         "Recv": "recv"}
_KERNEL = {"AllReduce": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
           "AllGather": "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
           "ReduceScatter": "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
           "AllToAll": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
           "Send": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
           "Recv": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"}
_GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
BUCKET = 12_500_000  # gradient bucket: 25 MB of bf16
LAYER = 2_000_000    # one layer's parameters
ACTIVATION = 1_048_576


@dataclass(frozen=True)
class Group:
    name: str
    ranks: tuple[int, ...]
    desc: str = "undefined"


@dataclass(frozen=True)
class ParallelJob:
    """What a scheme launches: groups per rank, and the collectives of one step."""
    world_size: int
    layers: int
    groups: dict[int, dict[str, Group]]          # rank -> role -> its group
    collectives: tuple[tuple[str, str, str, str, int], ...]  # (phase, where, collective, role, nelems)
    peers: dict[int, tuple[str, int]] | None = None   # pipeline: rank -> (Send|Recv in forward, peer)


def job(kind: str) -> ParallelJob:
    """The scheme `kind` (one of JOBS) on 4 ranks (pipeline: 2 stages), 4 layers."""
    world = 2 if kind == "pp" else 4
    everyone = {r: {"dp": Group("0", tuple(range(world)), "default_pg")} for r in range(world)}
    if kind == "ddp":
        return ParallelJob(world, 4, everyone, (("backward", "every 2 layers", "AllReduce", "dp", BUCKET),))
    if kind == "fsdp":
        return ParallelJob(world, 4, everyone, (
            ("forward", "each layer", "AllGather", "dp", LAYER // world),
            ("backward", "each layer", "AllGather", "dp", LAYER // world),
            ("backward", "after each layer", "ReduceScatter", "dp", LAYER)))
    if kind == "zero2":
        return ParallelJob(world, 4, everyone, (
            ("backward", "every 2 layers", "ReduceScatter", "dp", BUCKET),
            ("optimizer", "once", "AllGather", "dp", 4 * LAYER // world)))
    if kind == "tp_dp":  # tp 2 x dp 2: tensor groups {0,1} {2,3}, data groups {0,2} {1,3}
        groups = {r: {"tp": Group(str(1 + r // 2), (r - r % 2, r - r % 2 + 1)),
                      "dp": Group(str(3 + r % 2), (r % 2, r % 2 + 2))} for r in range(world)}
        return ParallelJob(world, 4, groups, (
            ("forward", "after each layer", "AllReduce", "tp", ACTIVATION),
            ("backward", "after each layer", "AllReduce", "tp", ACTIVATION),
            ("backward", "every 2 layers", "AllReduce", "dp", BUCKET)))
    if kind == "pp":  # 2 stages: activations forward 0 -> 1, gradients back 1 -> 0
        return ParallelJob(world, 4, everyone, (), {0: ("Send", 1), 1: ("Recv", 0)})
    if kind == "moe":  # experts over all 4 ranks, the dense layers data-parallel on the same ranks
        groups = {r: {"ep": Group("1", tuple(range(world)), "ep_group"),
                      "dp": Group("0", tuple(range(world)), "default_pg")} for r in range(world)}
        return ParallelJob(world, 4, groups, (
            ("forward", "each layer", "AllToAll", "ep", ACTIVATION),
            ("forward", "after each layer", "AllToAll", "ep", ACTIVATION),
            ("backward", "each layer", "AllToAll", "ep", ACTIVATION),
            ("backward", "after each layer", "AllToAll", "ep", ACTIVATION),
            ("backward", "every 2 layers", "AllReduce", "dp", BUCKET)))
    raise ValueError(f"unknown parallel job {kind!r}: choose one of {', '.join(JOBS)}")


def generate_parallel_job(out_dir: str | Path, kind: str, steps: int = 3) -> list[Path]:
    """One Kineto trace per rank (rank<N>.json) of the scheme `kind`; returns their paths."""
    spec = job(kind)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for rank in range(spec.world_size):
        events = _Rank(spec, rank).trace(steps)
        doc = {"schemaVersion": 1, "baseTimeNanoseconds": 1_790_857_026_000_000_000,
               "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": spec.world_size},
               "deviceProperties": [{"id": rank, "name": "NVIDIA H100 80GB HBM3",
                                     "totalGlobalMem": 85_045_870_592, "numSms": 132}],
               "traceEvents": events}
        path = out / f"rank{rank}.json"
        path.write_text(json.dumps(doc, indent=1))
        paths.append(path)
    return paths


class _Rank:
    MAIN, AUTOGRAD, COMPUTE, NCCL = 100, 101, 7, 20

    def __init__(self, spec: ParallelJob, rank: int):
        self.spec, self.rank, self.events = spec, rank, []
        self.t, self.correlation, self.seq = 1_000.0, 1, {}

    def _x(self, cat, name, tid, start, dur, pid=None, **args):
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": 1 if pid is None else pid,
                            "tid": tid, "ts": round(start, 3), "dur": dur, "args": args})

    def _launch(self, tid, kernel, dur, **args):
        corr, self.correlation = self.correlation, self.correlation + 1
        self._x("cuda_runtime", "cudaLaunchKernel", tid, self.t, 4, correlation=corr, **{"External id": corr})
        stream = self.NCCL if args else self.COMPUTE
        self._x("kernel", kernel, stream, self.t + 6, dur, pid=self.rank, device=self.rank, stream=stream,
                correlation=corr, **{"External id": corr}, **args)
        self.t += 10

    def _collective(self, collective, role, nelems, tid, peer=None):
        group = self.spec.groups[self.rank][role]
        self.seq[group.name] = self.seq.get(group.name, 0) + 1
        out = nelems * len(group.ranks) if collective == "AllGather" else (
            nelems // len(group.ranks) if collective == "ReduceScatter" else nelems)
        args = {"Collective name": _C10D[collective], "In msg nelems": nelems, "Out msg nelems": out,
                "Group size": len(group.ranks), "dtype": "BFloat16", "Process Group Name": group.name,
                "Process Group Description": group.desc,
                "Process Group Ranks": "[" + ", ".join(map(str, group.ranks)) + "]",
                "Seq": self.seq[group.name]}
        if peer is not None:
            args["Src Rank" if collective == "Recv" else "Dst Rank"] = peer
        self._x("cpu_op", "record_param_comms", tid, self.t - 1, 12)
        self._launch(tid, _KERNEL[collective], 8, **args)

    def _phase(self, phase, layers, tid):
        spec = self.spec
        for index, layer in enumerate(layers):
            start = self.t
            for _, where, collective, role, nelems in self._of(phase, "each layer"):
                self._collective(collective, role, nelems, tid)
            self._launch(tid, _GEMM, 8)
            for _, where, collective, role, nelems in self._of(phase, "after each layer"):
                self._collective(collective, role, nelems, tid)
            if index % 2 == 1:
                for _, where, collective, role, nelems in self._of(phase, "every 2 layers"):
                    self._collective(collective, role, nelems, tid)
            if phase == "backward":
                self._x("cpu_op", f"autograd::engine::evaluate_function: MmBackward0 (layer {layer})",
                        tid, start - 1, self.t - start + 2)
        if spec.peers and phase in ("forward", "backward"):
            kind, peer = spec.peers[self.rank]
            if phase == "backward":
                kind = "Recv" if kind == "Send" else "Send"
            self._collective(kind, "dp", ACTIVATION, tid, peer)

    def _of(self, phase, where):
        return [c for c in self.spec.collectives if c[0] == phase and c[1] == where]

    def trace(self, steps: int) -> list[dict]:
        layers = range(self.spec.layers)
        for n in range(1, steps + 1):
            step_start = self.t
            self.t += 5
            for phase, name, tid, order in (("forward", "## forward ##", self.MAIN, layers),
                                            ("backward", "## backward ##", self.AUTOGRAD, reversed(layers)),
                                            ("optimizer", "## optimizer ##", self.MAIN, ())):
                start = self.t
                self._phase(phase, order, tid)
                for _, _, collective, role, nelems in self._of(phase, "once"):
                    self._collective(collective, role, nelems, tid)
                if phase == "optimizer":
                    self._launch(tid, "multi_tensor_apply_kernel", 8)
                self.t += 5
                self._x("user_annotation", name, self.MAIN, start - 2, self.t - start + 1)
            self.t += 5
            self._x("user_annotation", f"ProfilerStep#{n}", self.MAIN, step_start, self.t - step_start)
            self.t += 20
        return self.events
