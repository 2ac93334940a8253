"""The Kineto version of a generated nsys job: the same GPU work, seen by the PyTorch profiler.

``write_kineto_twin(out_dir, truth)`` writes one Kineto trace per rank of a ``generate_job`` truth
(``rank<R>.pt.trace.json``): every kernel of the job on its device and stream at the same UTC
times, the ``ProfilerStep#N`` ranges, the rank's host, and on each NCCL kernel the collective's arguments as
PyTorch >= 2.2 copies them there ("Collective name", dtype, In/Out msg nelems, Group size,
Process Group Name/Ranks, Seq, Comms Id). So both profilers' pictures of one job can be compared
(collective_bandwidth, nccl_ops sizes). Needs a job generated with ``JobSpec(nccl_payloads=True)``.

What differs, as it does between the two profilers: Kineto sees one operation per kernel, so a
grouped NCCL call (the p2p Send + Recv, the AllGather + ReduceScatter group) is one
``"coalesced"`` operation with 0 elements (the record_param_comms PyTorch's coalescing manager
writes for a group; not checked against a real trace: none here has one), where nsys'
payloads name each operation of the group. Element counts are bytes / 4 (dtype Float);
NCCL's payload carries bytes only. Process groups are named "0", "1", ... in order of first use.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from .nsys import JobTruth, NcclOpTruth

# c10d's name of each NCCL collective ("Collective name" in record_param_comms)
C10D_NAMES = {"AllReduce": "allreduce", "Broadcast": "broadcast", "Reduce": "reduce",
              "AllGather": "_allgather_base", "ReduceScatter": "_reduce_scatter_base",
              "AllToAll": "alltoall_base", "Send": "send", "Recv": "recv"}
FLOAT_BYTES = 4
HOST_TID = 1


def nelems(op: NcclOpTruth) -> tuple[int, int]:
    """(In, Out) msg nelems as c10d records them: NCCL's message size is one rank's share."""
    share, n = op.bytes // FLOAT_BYTES, op.group_size
    assert share * FLOAT_BYTES == op.bytes, op
    whole = share * n
    return {"AllGather": (share, whole), "ReduceScatter": (whole, share),
            "AllToAll": (whole, whole)}.get(op.collective, (share, share))


def write_kineto_twin(out_dir: str | Path, truth: JobTruth) -> list[Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    comms = sorted({op.comm for ops in truth.nccl_ops.values() for op in ops if op.comm is not None},
                   key=lambda c: min(op.start_ns for ops in truth.nccl_ops.values() for op in ops if op.comm == c))
    if not comms:
        raise ValueError("the job has no NCCL payloads: generate it with JobSpec(nccl_payloads=True)")
    pg_names = {comm: str(i) for i, comm in enumerate(comms)}
    world = truth.spec.world_size
    paths = []
    for rank, kernels in sorted(truth.kernels.items()):
        ops_of = defaultdict(list)  # kernel start -> the operations it ran
        for op in truth.nccl_ops.get(rank, []):
            ops_of[op.start_ns].append(op)
        base = min(k.start_ns for k in kernels) - 10_000_000
        pid = truth.rank_pid[rank]
        events = [_span("user_annotation", f"ProfilerStep#{n}", pid, HOST_TID, s - base, e - s, {})
                  for n, s, e in truth.iterations[rank]]
        for k in kernels:
            args = {"External id": k.correlation_id, "device": k.device_id, "context": 1,
                    "stream": k.stream_id, "correlation": k.correlation_id}
            if k.kind == "comm":
                args |= _collective_args(ops_of[k.start_ns], pg_names, world)
            events.append(_span("kernel", k.name, k.device_id, k.stream_id, k.start_ns - base,
                                k.end_ns - k.start_ns, args))
        path = out_dir / f"rank{rank}.pt.trace.json"
        path.write_text(json.dumps({
            "schemaVersion": 1, "deviceProperties": [],
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world},
            "host_name": truth.hostnames[truth.rank_file[rank]],
            "baseTimeNanoseconds": base, "traceEvents": events}))
        paths.append(path)
    return paths


def _collective_args(ops: list[NcclOpTruth], pg_names: dict[int, str], world: int) -> dict:
    first = ops[0]
    ranks = "[" + ", ".join(map(str, range(first.group_size))) + "]"
    assert first.group_size == world  # both communicators hold every rank
    common = {"Group size": first.group_size, "Process Group Name": pg_names[first.comm],
              "Process Group Description": "undefined", "Process Group Ranks": ranks,
              "Seq": first.seq, "Comms Id": first.comm, "In split size": "[]",
              "Out split size": "[]"}
    if len(ops) > 1:  # a grouped call: one coalesced operation
        return {"Collective name": "coalesced", "dtype": "Byte", "In msg nelems": 0,
                "Out msg nelems": 0} | common
    in_n, out_n = nelems(first)
    args = {"Collective name": C10D_NAMES[first.collective], "dtype": "Float",
            "In msg nelems": in_n, "Out msg nelems": out_n} | common
    if first.collective in ("Send", "Recv"):
        args["Dst Rank" if first.collective == "Send" else "Src Rank"] = first.peer
    return args


def _span(cat: str, name: str, pid: int, tid: int, start: int, dur: int, args: dict) -> dict:
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
            "ts": float("%d.%03d" % divmod(start, 1000)), "dur": float("%d.%03d" % divmod(dur, 1000)),
            "args": args}
