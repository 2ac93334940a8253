"""`tracewh generate`: synthetic traces whose true numbers are known, with the scenarios a test,
a course or a bug report needs (a slow data loader, a straggler, a slow inter-node link, host
stalls, autograd NVTX, NCCL payloads, parallel layouts, a scaling series)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from .errors import TracewhError

generate_app = typer.Typer(help="Write synthetic traces whose true numbers are known.",
                           no_args_is_help=True)
err = Console(stderr=True, soft_wrap=True)

# what both generators take
RanksOption = Annotated[int, typer.Option(help="World size")]
IterationsOption = Annotated[int, typer.Option(help="Training iterations")]
LayersOption = Annotated[int, typer.Option(
    help="Model layers (kernels per iteration scale with it)")]
SeedOption = Annotated[int, typer.Option()]
LoaderOption = Annotated[float, typer.Option(
    "--data-loader-ms", help="Each step starts with a DataLoader call this long (ms): the GPU "
                             "waits for input when it outlasts the launch queue")]
SyncStallsOption = Annotated[bool, typer.Option(
    help="Host stalls: loss.item() and torch.cuda.synchronize() wait for the GPU")]


@generate_app.command("nsys")
def generate_nsys(
    out: Annotated[Path, typer.Argument(help="Directory to write the .sqlite files into")],
    ranks: RanksOption = 4,
    ranks_per_file: Annotated[int, typer.Option(help="Processes per report")] = 1,
    iterations: IterationsOption = 5,
    layers: LayersOption = 4,
    seed: SeedOption = 0,
    ts_normalize: Annotated[bool, typer.Option(
        help="Times as 'nsys export --ts-normalize=true' writes them: already UTC epoch ns")] = False,
    counters: Annotated[bool, typer.Option(
        help="GPU and NIC counters, as 'nsys profile --gpu-metrics-devices=all --nic-metrics' "
             "records them")] = False,
    data_loader_ms: LoaderOption = 0.0,
    checkpoint_every: Annotated[int, typer.Option(
        help="Every Nth step ends with a checkpoint write (OS runtime calls); 0: none")] = 0,
    sync_stalls: SyncStallsOption = False,
    autograd_nvtx: Annotated[bool, typer.Option(
        help="One nested NVTX range per aten op, as --pytorch=autograd-nvtx records them")] = False,
    nccl_payloads: Annotated[bool, typer.Option(
        help="NCCL's NVTX payloads (sizes, communicators), as 'nsys export --include-blobs=true' "
             "keeps them")] = False,
    memory_usage: Annotated[bool, typer.Option(
        help="GPU memory events, as 'nsys profile --cuda-memory-usage=true' records them")] = False,
) -> None:
    """Write an nsys SQLite export per rank for a synthetic job with known true numbers."""
    from .generate.nsys import JobSpec, generate_job

    spec = _spec(JobSpec, world_size=ranks, ranks_per_file=ranks_per_file, iterations=iterations,
                 layers=layers, seed=seed, ts_normalize=ts_normalize, gpu_metrics=counters,
                 nic_metrics=counters, data_loader_ns=_ns(data_loader_ms, "--data-loader-ms"),
                 checkpoint_every=_at_least(checkpoint_every, 0, "--checkpoint-every"),
                 sync_stalls=sync_stalls, autograd_nvtx=autograd_nvtx,
                 nccl_payloads=nccl_payloads, memory_usage=memory_usage)
    _wrote(generate_job(out, spec).files)


@generate_app.command("kineto")
def generate_kineto(
    out: Annotated[Path, typer.Argument(help="Directory to write the .pt.trace.json files into")],
    ranks: RanksOption = 4,
    iterations: IterationsOption = 3,
    layers: LayersOption = 2,
    gzip: Annotated[bool, typer.Option(help="Write .json.gz")] = False,
    seed: SeedOption = 0,
    gpus_per_node: Annotated[int, typer.Option(
        help="GPUs per node: rank r runs on node r // this")] = 8,
    inter_node_gbps: Annotated[Optional[float], typer.Option(
        help="The wire rate (GB/s) of collectives whose ranks span nodes; default: as inside "
             "a node")] = None,
    data_loader_ms: LoaderOption = 0.0,
    slow_loader: Annotated[Optional[list[str]], typer.Option(
        help="RANK:STEP:MS - that rank's DataLoader takes MS longer in that step (ProfilerStep "
             "number), which makes it the straggler there; repeat for more")] = None,
    sync_stalls: SyncStallsOption = False,
    phase_annotations: Annotated[bool, typer.Option(
        help="record_function('## forward ##' / '## backward ##' / '## optimizer ##')")] = False,
    python_frames: Annotated[bool, typer.Option(
        help="with_stack=True: python_function frames of the nn.Modules")] = False,
    profile_memory: Annotated[bool, typer.Option(
        help="profile_memory=True: [memory] events of every allocation")] = False,
    record_shapes: Annotated[bool, typer.Option(
        help="record_shapes=True: the ops' input dims and types")] = True,
) -> None:
    """Write a PyTorch profiler (Kineto) trace per rank for a synthetic job with known numbers."""
    from .generate.kineto import KinetoJobSpec, generate_kineto_job

    spec = _spec(KinetoJobSpec, world_size=ranks, iterations=iterations, layers=layers,
                 gzip=gzip, seed=seed, gpus_per_node=gpus_per_node,
                 inter_node_gbps=_positive(inter_node_gbps, "--inter-node-gbps"),
                 data_loader_ns=_ns(data_loader_ms, "--data-loader-ms"),
                 slow_data_loader=_slow_batches(slow_loader or [], ranks, iterations),
                 sync_stalls=sync_stalls, phase_annotations=phase_annotations,
                 python_frames=python_frames, profile_memory=profile_memory,
                 record_shapes=record_shapes)
    _wrote(generate_kineto_job(out, spec).files)


@generate_app.command("series")
def generate_series(
    out: Annotated[Path, typer.Argument(help="Directory to write a folder per run into")],
    cause: Annotated[str, typer.Option(
        help="What grows with nodes: communication (the gradient AllReduce crosses a slow "
             "inter-node link) or data-loader (the nodes share storage)")] = "communication",
    nodes: Annotated[str, typer.Option(help="Node counts, comma-separated")] = "1,2,4",
    gpus_per_node: Annotated[int, typer.Option(help="GPUs (ranks) per node")] = 2,
    iterations: IterationsOption = 4,
    layers: LayersOption = 4,
    seed: SeedOption = 0,
    gzip: Annotated[bool, typer.Option(help="Write .json.gz")] = False,
    inter_node_gbps: Annotated[float, typer.Option(
        help="communication: the inter-node wire rate, GB/s (3.125: 25 Gb/s Ethernet)")] = 3.125,
    loader_ms: Annotated[float, typer.Option(
        help="data-loader: a step's DataLoader at one node, ms (x nodes at more)")] = 2.0,
) -> None:
    """Write one Kineto job at several node counts, a run folder each (1node, 2nodes, 4nodes):
    ingest the folder and ask `tracewh query scaling`."""
    from .generate.series import generate_series as write_series

    try:
        counts = tuple(int(n) for n in nodes.split(","))
    except ValueError:
        raise TracewhError(f"--nodes {nodes!r}: node counts separated by commas, e.g. 1,2,4")
    try:
        truths = write_series(out, cause, nodes=counts, gpus_per_node=gpus_per_node,
                              iterations=iterations, layers=layers, seed=seed, gzip=gzip,
                              inter_node_gbps=_positive(inter_node_gbps, "--inter-node-gbps"),
                              loader_ms=loader_ms)
    except ValueError as exc:
        raise TracewhError(f"tracewh generate series: {exc}")
    for truth in truths.values():
        _wrote(truth.files)
    err.print(f"next: tracewh ingest {out} --db series.duckdb && "
              f"tracewh query scaling --db series.duckdb", highlight=False, markup=False)


@generate_app.command("parallel")
def generate_parallel(
    out: Annotated[Path, typer.Argument(help="Directory to write the rank traces into")],
    job: Annotated[str, typer.Option(
        help="ddp, fsdp, zero2, tp_dp (TP x DP), pp (pipeline), moe (expert all-to-all) or "
             "moe_dropless (all_to_allv with uneven per-peer split sizes)")],
    steps: Annotated[int, typer.Option(help="Training steps")] = 3,
) -> None:
    """Write a small Kineto job parallelised one of the usual ways, with PyTorch's process
    groups on its collectives (what `tracewh query parallelism` reads)."""
    from .generate.parallel import JOBS, generate_parallel_job

    if job not in JOBS:
        raise TracewhError(f"--job {job!r}: one of {', '.join(JOBS)}")
    _wrote(generate_parallel_job(out, job, steps=_at_least(steps, 1, "--steps")))


@generate_app.command("timed")
def generate_timed(
    out: Annotated[Path, typer.Argument(help="Directory to write the rank traces into")],
    kind: Annotated[str, typer.Option(
        help="pipeline (stages passing activations by send/recv), launch_bound (one rank "
             "launches many tiny kernels) or straggler (one rank's data loader is slow)")],
    stages: Annotated[int, typer.Option(help="Ranks (pipeline stages)")] = 4,
    steps: Annotated[int, typer.Option(help="Training steps")] = 2,
    loader_ms: Annotated[float, typer.Option(help="straggler: its DataLoader, ms")] = 1.0,
) -> None:
    """Write a Kineto job whose every kernel time is known, so its critical path is too
    (`tracewh query critical_path`, `what_if`)."""
    from .generate.parallel import TIMED_JOBS, generate_timed_job

    if kind not in TIMED_JOBS:
        raise TracewhError(f"--kind {kind!r}: one of {', '.join(TIMED_JOBS)}")
    generate_timed_job(out, kind, stages=_at_least(stages, 2, "--stages"),
                       steps=_at_least(steps, 1, "--steps"),
                       loader_ns=_ns(loader_ms, "--loader-ms"))
    _wrote(sorted(Path(out).glob("rank*.json")))


def _spec(kind, **fields):
    try:
        return kind(**fields)
    except ValueError as exc:
        raise TracewhError(f"tracewh generate: {exc}")


def _ns(ms: float, option: str) -> int:
    if ms < 0:
        raise TracewhError(f"{option} {ms}: a duration, 0 or more")
    return round(ms * 1_000_000)


def _positive(value: float | None, option: str) -> float | None:
    if value is not None and value <= 0:
        raise TracewhError(f"{option} {value}: a rate above 0")
    return value


def _at_least(value: int, low: int, option: str) -> int:
    if value < low:
        raise TracewhError(f"{option} {value}: at least {low}")
    return value


def _slow_batches(given: list[str], ranks: int, iterations: int) -> dict[tuple[int, int], int]:
    """--slow-loader RANK:STEP:MS values as KinetoJobSpec.slow_data_loader."""
    from .generate.kineto import KinetoJobSpec

    steps = range(KinetoJobSpec.first_step, KinetoJobSpec.first_step + iterations)
    slow = {}
    for text in given:
        try:
            rank, step, ms = text.split(":")
            key, ns = (int(rank), int(step)), _ns(float(ms), "--slow-loader")
        except ValueError:
            raise TracewhError(f"--slow-loader {text!r}: RANK:STEP:MS, e.g. 3:4:5 "
                               "(rank 3's DataLoader 5 ms slower in ProfilerStep#4)")
        if not 0 <= key[0] < ranks:
            raise TracewhError(f"--slow-loader {text!r}: rank {key[0]} is not among the "
                               f"{ranks} ranks")
        if key[1] not in steps:
            raise TracewhError(f"--slow-loader {text!r}: the trace holds ProfilerStep#{steps[0]} "
                               f"to #{steps[-1]}")
        slow[key] = ns
    return slow


def _wrote(paths) -> None:
    for path in paths:
        err.print(f"wrote {path}", highlight=False, markup=False)
