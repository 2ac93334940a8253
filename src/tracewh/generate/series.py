"""A scaling series: one Kineto job generated at several node counts, one run folder each.

Two ways for a job to stop scaling, each the cause a scaling study sets out to find:

- ``communication``: the gradient AllReduce spans every rank, so from 2 nodes on it crosses hosts
  and moves its wire bytes at ``inter_node_gbps`` (default 3.125 GB/s: 25 Gb/s Ethernet, the
  classic cluster that does not scale) instead of NVLink's rate, while its ring moves 2 (n - 1) / n of the bucket per rank: exposed communication
  grows with nodes.
- ``data-loader``: every rank reads its batch from storage the nodes share, so each step's
  DataLoader takes ``loader_ms`` x nodes: the GPUs idle while the host waits for input.

Run folders are named ``1node``, ``2nodes``, ``4nodes``, so ``tracewh ingest OUT`` makes a run of
each. The truth of every run is the generator's (KinetoTruth).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .kineto import KinetoJobSpec, KinetoTruth, generate_kineto_job

CAUSES = ("communication", "data-loader")
INTER_NODE_GBPS = 3.125  # 25 Gb/s Ethernet between nodes, in bytes per ns
LOADER_MS = 2.0  # the data-loader series: a step's DataLoader at one node


def run_folder(nodes: int) -> str:
    return f"{nodes}node" if nodes == 1 else f"{nodes}nodes"


def series_specs(cause: str, nodes: tuple[int, ...] = (1, 2, 4), gpus_per_node: int = 2,
                 iterations: int = 4, layers: int = 4, seed: int = 0, gzip: bool = False,
                 inter_node_gbps: float = INTER_NODE_GBPS, loader_ms: float = LOADER_MS) -> dict[str, KinetoJobSpec]:
    """The spec of each run of the series, by run folder."""
    if cause not in CAUSES:
        raise ValueError(f"cause {cause!r}: one of {', '.join(CAUSES)}")
    if not nodes or min(nodes) < 1 or len(set(nodes)) != len(nodes):
        raise ValueError(f"nodes {nodes}: distinct counts, each at least 1")
    base = KinetoJobSpec(world_size=gpus_per_node, gpus_per_node=gpus_per_node,
                         iterations=iterations, layers=layers, seed=seed, gzip=gzip)
    specs = {}
    for n in sorted(nodes):
        spec = replace(base, world_size=n * gpus_per_node)
        if cause == "communication":
            spec = replace(spec, inter_node_gbps=inter_node_gbps)
        else:
            spec = replace(spec, data_loader_ns=round(loader_ms * n * 1_000_000))
        specs[run_folder(n)] = spec
    return specs


def generate_series(out_dir: str | Path, cause: str, **options) -> dict[str, KinetoTruth]:
    """Write the series under `out_dir` (a folder per run); the truth of each run by folder."""
    out = Path(out_dir)
    return {run: generate_kineto_job(out / run, spec)
            for run, spec in series_specs(cause, **options).items()}
