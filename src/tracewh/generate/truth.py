"""What both generators report about the kernels they wrote, computed in plain Python."""

from __future__ import annotations

import statistics


def kernel_summary(kernels_by_rank: dict, rank: int | None = None) -> dict[str, dict]:
    """Per kernel name: total/avg/median/min/max/stddev of durations (ns), like
    nsys stats -r cuda_gpu_kern_sum. ``stddev_ns`` is the sample standard deviation, 0.0 for a
    single instance (as nsys prints it)."""
    ranks = kernels_by_rank if rank is None else {rank: kernels_by_rank[rank]}
    durations: dict[str, list[int]] = {}
    for kernels in ranks.values():
        for k in kernels:
            durations.setdefault(k.name, []).append(k.end_ns - k.start_ns)
    return {name: _stats(d) for name, d in durations.items()}


def _stats(d: list[int]) -> dict:
    return dict(
        total_ns=sum(d),
        instances=len(d),
        avg_ns=sum(d) / len(d),
        median_ns=statistics.median(d),
        min_ns=min(d),
        max_ns=max(d),
        stddev_ns=statistics.stdev(d) if len(d) > 1 else 0.0,
    )
