"""What both generators report about the kernels they wrote, computed in plain Python."""

from __future__ import annotations

import statistics
from bisect import bisect_right


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


# The main thread's activities, most specific first: at each instant the first one in flight
# names the time (host_breakdown's precedence); none: "other".
HOST_CATEGORIES = ("sync", "launch", "data", "os", "optimizer", "backward", "forward")
# What an idle gap's host time is attributed to (idle_gaps): the phases count as "other".
GAP_CAUSES = ("sync", "launch", "data", "os")


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [(lo, hi) for lo, hi in out]


def _covers(merged: list[tuple[int, int]], t: int) -> bool:
    """Whether t lies in one of the sorted disjoint [start, end) intervals (integers: UTC ns
    exceed a float's precision)."""
    i = bisect_right(merged, (t, 1 << 63)) - 1
    return i >= 0 and merged[i][0] <= t < merged[i][1]


def host_split(host: list[tuple[str, int, int]], lo: int, hi: int) -> dict[str, int]:
    """ns of [lo, hi) per category of HOST_CATEGORIES (first in flight wins) and "other"."""
    merged = {c: _merged([(s, e) for cat, s, e in host if cat == c]) for c in HOST_CATEGORIES}
    cuts = sorted({lo, hi} | {t for _, s, e in host for t in (s, e) if lo < t < hi})
    split = dict.fromkeys((*HOST_CATEGORIES, "other"), 0)
    for a, b in zip(cuts, cuts[1:]):  # no interval starts or ends inside [a, b): test a
        split[next((c for c in HOST_CATEGORIES if _covers(merged[c], a)), "other")] += b - a
    return split


def idle_gaps(gpu_busy: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The idle gaps between the busy islands of one device's ops (start, end) ns."""
    islands = _merged(gpu_busy)
    return [(a[1], b[0]) for a, b in zip(islands, islands[1:]) if b[0] > a[1]]


def idle_within(gpu_busy: list[tuple[int, int]], lo: int, hi: int) -> int:
    """ns of [lo, hi) inside the idle gaps of one device's ops (sync_stalls' gpu_idle_ns)."""
    return sum(max(0, min(hi, b) - max(lo, a)) for a, b in idle_gaps(gpu_busy))


def gap_causes(host: list[tuple[str, int, int]], gpu_busy: list[tuple[int, int]],
               min_ns: int = 0) -> dict[str, int]:
    """Time of the idle gaps at least min_ns long, summed per cause of GAP_CAUSES and "other"
    (phases and no activity)."""
    total = dict.fromkeys((*GAP_CAUSES, "other"), 0)
    for lo, hi in idle_gaps(gpu_busy):
        if hi - lo < min_ns:
            continue
        for c, ns in host_split(host, lo, hi).items():
            total[c if c in GAP_CAUSES else "other"] += ns
    return total
