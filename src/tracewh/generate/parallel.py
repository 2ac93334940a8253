"""Kineto traces of small jobs parallelised in the usual ways (DDP, FSDP, ZeRO-2, TP x DP,
pipeline, MoE with capacity-bound or dropless experts), for the parallelism metric: each rank's
steps hold forward, backward and optimizer phases as PyTorch marks them (`## forward ##`,
`## backward ##` with the autograd thread's `autograd::engine::evaluate_function: ...` ops,
`## optimizer ##`), GEMM kernels, and the collectives each scheme launches, with the
process-group arguments PyTorch >= 2.2 writes on NCCL kernels (Collective name, In/Out msg
nelems, Group size, Process Group Name/Ranks, Seq).

A collective is given as (phase, where, collective, group, elements): `where` says when in the
phase it is launched: 'each layer' (before the layer's GEMM), 'after each layer', 'every 2
layers' (gradient buckets) or 'once'.

moe_dropless routes each token to the experts its router picks, with no capacity limit: every
dispatch and combine is an all_to_allv whose per-peer sizes differ by rank, layer and step
(dropless_tokens), written as PyTorch >= 2.2 writes them: c10d's "all_to_allv" with "In split
size" / "Out split size" on the record_param_comms op and on its kernel (kineto copies them), a
string such as "[1792, 512, 2304, 1024]" of dim-0 sizes (tokens: rows of MOE_HIDDEN bf16
elements; ProcessGroupNCCL::alltoall_base sends split[j] rows to group member j).
`dropless_sends` gives the bytes each rank sent each peer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

JOBS = ("ddp", "fsdp", "zero2", "tp_dp", "pp", "moe", "moe_dropless")
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
MOE_HIDDEN = 1024    # elements of one token's hidden state: a row of the all_to_allv tensors


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
    dropless: bool = False  # AllToAll is all_to_allv with the splits of dropless_tokens


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
    if kind in ("moe", "moe_dropless"):  # experts over all 4 ranks, the dense layers data-parallel
        groups = {r: {"ep": Group("1", tuple(range(world)), "ep_group"),
                      "dp": Group("0", tuple(range(world)), "default_pg")} for r in range(world)}
        # dispatch before each expert layer, combine after it; backward the same two, reversed
        return ParallelJob(world, 4, groups, (
            ("forward", "each layer", "AllToAll", "ep", ACTIVATION),
            ("forward", "after each layer", "AllToAll", "ep", ACTIVATION),
            ("backward", "each layer", "AllToAll", "ep", ACTIVATION),
            ("backward", "after each layer", "AllToAll", "ep", ACTIVATION),
            ("backward", "every 2 layers", "AllReduce", "dp", BUCKET)), dropless=kind == "moe_dropless")
    raise ValueError(f"unknown parallel job {kind!r}: choose one of {', '.join(JOBS)}")


def dropless_tokens(step: int, layer: int, world: int) -> list[list[int]]:
    """Tokens each rank routes to each rank's experts in `layer` of step `step` (row: sender):
    uneven per pair and per sender, one hot expert rank per layer, the same in backward."""
    hot = (layer + step) % world
    return [[256 * (1 + (3 * src + 5 * dst + layer + step) % 7) + 1024 * (dst == hot)
             for dst in range(world)] for src in range(world)]


def dropless_sends(steps: int = 3) -> dict[tuple[int, int, int], int]:
    """What moe_dropless's files say was sent: (Seq on the expert group, src rank, dst rank) ->
    bytes, every all_to_allv of `steps` steps (the self pair included: a local copy)."""
    spec = job("moe_dropless")
    sends = {}
    for rank in range(spec.world_size):
        r = _Rank(spec, rank)
        r.trace(steps)
        sends.update(r.sent)
    return sends


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
        self.step, self.sent = 0, {}  # sent: dropless all_to_allv bytes, (seq, src, dst) -> bytes

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

    def _collective(self, collective, role, nelems, tid, peer=None, layer=None, where=None):
        group = self.spec.groups[self.rank][role]
        self.seq[group.name] = self.seq.get(group.name, 0) + 1
        out = nelems * len(group.ranks) if collective == "AllGather" else (
            nelems // len(group.ranks) if collective == "ReduceScatter" else nelems)
        name, splits = _C10D[collective], None
        if collective == "AllToAll" and self.spec.dropless:
            tokens = dropless_tokens(self.step, layer, len(group.ranks))
            me = group.ranks.index(self.rank)
            dispatch = [tokens[me][j] for j in range(len(group.ranks))]  # my tokens to each expert
            combine = [tokens[j][me] for j in range(len(group.ranks))]   # their tokens back
            sent, received = (dispatch, combine) if where == "each layer" else (combine, dispatch)
            name, nelems, out = "all_to_allv", sum(sent) * MOE_HIDDEN, sum(received) * MOE_HIDDEN
            splits = {"In split size": "[" + ", ".join(map(str, sent)) + "]",
                      "Out split size": "[" + ", ".join(map(str, received)) + "]"}
            for j, rows in enumerate(sent):
                self.sent[self.seq[group.name], self.rank, group.ranks[j]] = rows * MOE_HIDDEN * 2
        args = {"Collective name": name, "In msg nelems": nelems, "Out msg nelems": out,
                "Group size": len(group.ranks), "dtype": "BFloat16", **(splits or {}),
                "Process Group Name": group.name, "Process Group Description": group.desc,
                "Process Group Ranks": "[" + ", ".join(map(str, group.ranks)) + "]",
                "Seq": self.seq[group.name]}
        if peer is not None:
            args["Src Rank" if collective == "Recv" else "Dst Rank"] = peer
        # PyTorch >= 2.2 writes the args on record_param_comms too (with Rank), and kineto copies
        # them to its kernel, linked by External id; the older jobs keep a bare op
        host = {"External id": self.correlation, **args, "Rank": self.rank} if splits else {}
        self._x("cpu_op", "record_param_comms", tid, self.t - 1, 12, **host)
        self._launch(tid, _KERNEL[collective], 8, **args)

    def _phase(self, phase, layers, tid):
        spec = self.spec
        for index, layer in enumerate(layers):
            start = self.t
            for _, where, collective, role, nelems in self._of(phase, "each layer"):
                self._collective(collective, role, nelems, tid, layer=layer, where=where)
            self._launch(tid, _GEMM, 8)
            for _, where, collective, role, nelems in self._of(phase, "after each layer"):
                self._collective(collective, role, nelems, tid, layer=layer, where=where)
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
            step_start, self.step = self.t, n
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


# --- timed jobs: ranks that wait for each other, with the critical path known ---------------------
# _Rank above times each rank alone. A timed job schedules every rank's GPU ops together: a
# collective or a send/recv pair transfers only once its last rank arrived, so one rank's delay
# moves the others (the critical path metric's known truth). One thread and one stream a rank;
# times in ns. TIMED_JOBS:
#   pipeline      `stages` ranks, one micro-batch a step: forward recv -> GEMM -> send to the next
#                 stage, backward back from the last; the step ends on rank 0's backward GEMM,
#                 and its path runs 0 -> 1 -> ... -> last -> ... -> 0 through every send -> recv.
#   launch_bound  data parallel over `stages` ranks: a GEMM per layer then an AllReduce; rank
#                 LAUNCH_BOUND instead runs `tiny` 2 us kernels, each waited for by
#                 cudaStreamSynchronize, so the GPU waits for every launch (10 us from the call's
#                 start) and that rank arrives last at the AllReduce.
#   straggler     data parallel as launch_bound's other ranks, every rank alike, but rank STRAGGLER
#                 first loads its batch for `loader_ns` (a DataLoader cpu_op): it arrives that
#                 much later at the AllReduce; loader_ns = 0 is the same job without the straggler.
TIMED_JOBS = ("pipeline", "launch_bound", "straggler")
LAUNCH_BOUND, STRAGGLER = 1, 2
LOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
CALL_NS, LATENCY_NS, GAP_NS, CPU_GAP_NS, SYNC_TAIL_NS = 4_000, 10_000, 1_000, 1_000, 2_000


@dataclass(frozen=True)
class TimedOp:
    """One kernel of a rank's step, in launch order."""
    name: str
    dur_ns: int          # its own time (a collective or p2p op: the transfer after the last arrival)
    key: str | None = None       # the collective or send/recv pair (None: compute)
    collective: str | None = None  # AllReduce | Send | Recv
    peer: int | None = None
    sync: bool = False   # cudaStreamSynchronize right after its launch


@dataclass
class TimedTruth:
    """What the timed job ran: per rank its steps (start, end), kernels and API calls, UTC ns."""
    steps: dict[int, list[tuple[int, int]]]
    kernels: dict[int, list[dict]]   # name, key, start_ns, end_ns, launch_ns, step
    calls: dict[int, list[dict]]     # name, start_ns, end_ns, step


def timed_program(kind: str, stages: int, rank: int, step: int, tiny: int = 40) -> list[TimedOp]:
    """The kernels `rank` launches in step `step` of the timed job `kind`."""
    if kind == "pipeline":
        def p2p(phase, collective, peer):
            src, dst = (rank, peer) if collective == "Send" else (peer, rank)
            return TimedOp(_KERNEL[collective], 20_000, f"{phase}{step}:{src}->{dst}", collective, peer)
        ops = [p2p("fwd", "Recv", rank - 1)] if rank > 0 else []
        ops.append(TimedOp(_GEMM, 100_000 + 10_000 * rank))
        ops += [p2p("fwd", "Send", rank + 1)] if rank < stages - 1 else []
        ops += [p2p("bwd", "Recv", rank + 1)] if rank < stages - 1 else []
        ops.append(TimedOp(_GEMM, 200_000 + 20_000 * rank))
        return ops + ([p2p("bwd", "Send", rank - 1)] if rank > 0 else [])
    if kind in ("launch_bound", "straggler"):
        if kind == "launch_bound" and rank == LAUNCH_BOUND:
            ops = [TimedOp("void at::native::vectorized_elementwise_kernel<4>(add)", 2_000, sync=True)] * tiny
        else:
            ops = [TimedOp(_GEMM, 50_000)] * 4
        return ops + [TimedOp(_KERNEL["AllReduce"], 30_000, f"allreduce{step}", "AllReduce"),
                      TimedOp("multi_tensor_apply_kernel", 8_000)]
    raise ValueError(f"unknown timed job {kind!r}: choose one of {', '.join(TIMED_JOBS)}")


def generate_timed_job(out_dir: str | Path, kind: str, stages: int = 4, steps: int = 2,
                       loader_ns: int = 1_000_000) -> TimedTruth:
    """One Kineto trace per rank (rank<N>.json) of the timed job `kind`, and what it ran."""
    programs = {r: [timed_program(kind, stages, r, n) for n in range(1, steps + 1)] for r in range(stages)}
    loading = {r: loader_ns if kind == "straggler" and r == STRAGGLER else 0 for r in range(stages)}
    release: dict[str, int] = {}
    while True:  # every rank's schedule, until the collectives' last arrivals stop moving
        runs = {r: _timed_rank(programs[r], release, loading[r]) for r in range(stages)}
        arrivals: dict[str, int] = {}
        for truth in runs.values():
            for k in truth["kernels"]:
                if k["key"]:
                    arrivals[k["key"]] = max(arrivals.get(k["key"], 0), k["start_ns"])
        if arrivals == release:
            break
        release = arrivals
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    group = Group("0", tuple(range(stages)), "default_pg")
    for rank, run in runs.items():
        doc = {"schemaVersion": 1, "baseTimeNanoseconds": 1_790_857_026_000_000_000,
               "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": stages},
               "deviceProperties": [{"id": rank, "name": "NVIDIA H100 80GB HBM3",
                                     "totalGlobalMem": 85_045_870_592, "numSms": 132}],
               "traceEvents": _timed_events(rank, run, group)}
        (out / f"rank{rank}.json").write_text(json.dumps(doc, indent=1))
    base = 1_790_857_026_000_000_000
    shift = lambda rows: [{**x, "start_ns": x["start_ns"] + base, "end_ns": x["end_ns"] + base,
                           **({"launch_ns": x["launch_ns"] + base} if "launch_ns" in x else {})} for x in rows]
    return TimedTruth({r: [(s + base, e + base) for s, e in run["steps"]] for r, run in runs.items()},
                      {r: shift(run["kernels"]) for r, run in runs.items()},
                      {r: shift(run["calls"]) for r, run in runs.items()})


def _timed_rank(program: list[list[TimedOp]], release: dict[str, int], loader_ns: int = 0) -> dict:
    """One rank's schedule (ns from the trace's base) given each collective's last arrival:
    a kernel starts LATENCY_NS after its launch call's start or GAP_NS after the stream's
    previous op, whichever is later; a collective ends its transfer after the last arrival."""
    cpu, gpu_free, steps, kernels, calls, loads = 1_000_000, None, [], [], [], []
    for n, ops in enumerate(program, start=1):
        step_start = cpu
        cpu += 5_000
        if loader_ns:
            loads.append({"name": LOADER, "start_ns": cpu, "end_ns": cpu + loader_ns, "step": n})
            cpu += loader_ns + CPU_GAP_NS
        for op in ops:
            calls.append({"name": "cudaLaunchKernel", "start_ns": cpu, "end_ns": cpu + CALL_NS, "step": n})
            start = cpu + LATENCY_NS if gpu_free is None else max(cpu + LATENCY_NS, gpu_free + GAP_NS)
            end = max(start, release.get(op.key, start) if op.key else start) + op.dur_ns
            kernels.append({"name": op.name, "key": op.key, "collective": op.collective, "peer": op.peer,
                            "start_ns": start, "end_ns": end, "launch_ns": cpu, "step": n})
            gpu_free, cpu = end, cpu + CALL_NS + CPU_GAP_NS
            if op.sync:
                calls.append({"name": "cudaStreamSynchronize", "start_ns": cpu, "end_ns": end + SYNC_TAIL_NS,
                              "step": n})
                cpu = end + SYNC_TAIL_NS + CPU_GAP_NS
        # the step ends when the host has waited for its GPU work
        sync_start, cpu = cpu, max(cpu + CALL_NS, gpu_free + SYNC_TAIL_NS)
        calls.append({"name": "cudaStreamSynchronize", "start_ns": sync_start, "end_ns": cpu, "step": n})
        cpu += 5_000
        steps.append((step_start, cpu))
        cpu += 20_000
    return {"steps": steps, "kernels": kernels, "calls": calls, "loads": loads}


def _timed_events(rank: int, run: dict, group: Group) -> list[dict]:
    us = lambda ns: round(ns / 1000, 3)
    events, seq = [], 0
    for n, (start, end) in enumerate(run["steps"], start=1):
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}", "pid": 1,
                       "tid": _Rank.MAIN, "ts": us(start), "dur": us(end - start), "args": {}})
    for load in run["loads"]:
        events.append({"ph": "X", "cat": "cpu_op", "name": load["name"], "pid": 1, "tid": _Rank.MAIN,
                       "ts": us(load["start_ns"]), "dur": us(load["end_ns"] - load["start_ns"]), "args": {}})
    launches = iter(run["kernels"])
    for corr, call in enumerate(run["calls"], start=1):
        ids = {"correlation": corr, "External id": corr}
        events.append({"ph": "X", "cat": "cuda_runtime", "name": call["name"], "pid": 1, "tid": _Rank.MAIN,
                       "ts": us(call["start_ns"]), "dur": us(call["end_ns"] - call["start_ns"]), "args": ids})
        if call["name"] == "cudaStreamSynchronize":
            events.append({"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": rank,
                           "tid": _Rank.COMPUTE, "ts": us(call["start_ns"] + 500),
                           "dur": us(call["end_ns"] - call["start_ns"] - 700),
                           "args": {**ids, "cuda_sync_kind": "Stream Sync", "stream": _Rank.COMPUTE,
                                    "device": rank, "context": 1}})
            continue
        k = next(launches)
        args = {"device": rank, "stream": _Rank.COMPUTE, **ids}
        if k["collective"]:
            seq += 1
            args.update({"Collective name": _C10D[k["collective"]], "In msg nelems": ACTIVATION,
                         "Out msg nelems": ACTIVATION, "Group size": len(group.ranks), "dtype": "BFloat16",
                         "Process Group Name": group.name, "Process Group Description": group.desc,
                         "Process Group Ranks": "[" + ", ".join(map(str, group.ranks)) + "]", "Seq": seq})
            if k["peer"] is not None:
                args["Src Rank" if k["collective"] == "Recv" else "Dst Rank"] = k["peer"]
        events.append({"ph": "X", "cat": "kernel", "name": k["name"], "pid": rank, "tid": _Rank.COMPUTE,
                       "ts": us(k["start_ns"]), "dur": us(k["end_ns"] - k["start_ns"]), "args": args})
    return events
