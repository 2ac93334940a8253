"""Which items a report holds, in page order, and the function that draws each."""

from __future__ import annotations

from typing import Callable

from ..warehouse import query_arrow
from .draw import _slug
from .figures_comm import (
    fig_bandwidth, fig_comm_parts, fig_lateness, fig_links, fig_straggler, table_traffic,
)
from .figures_critpath import fig_critical_path
from .figures_diff import DIFF_SECTION, fig_diff, table_diff
from .figures_hardware import fig_counters, fig_roofline, fig_tflops_runs
from .figures_memory import fig_memory, fig_memory_free, fig_memory_timeline
from .figures_runs import fig_breakdown_ranks, fig_breakdown_runs, fig_overlap, fig_scaling
from .figures_steps import (
    fig_host_breakdown, fig_iteration_time, fig_log_phases_series, fig_phases,
)


def _series_to_draw(con, runs: list[str]) -> list[str]:
    """The series of training-log runs among `runs`, for the log_phases figure."""
    rows = query_arrow(con, "SELECT DISTINCT series_id, run_id FROM series ORDER BY ALL").to_pylist()
    chosen = set(runs)
    return list(dict.fromkeys(r["series_id"] for r in rows if r["run_id"] in chosen))


def _plan(runs: list[str], series: list[str] = ()) -> list[tuple[str, str, str, str | None, Callable]]:
    """(section, key, title, run, draw) for every item, in page order."""
    slugs: dict[str, str] = {}
    for run in runs:
        slug, n = _slug(run), 2
        while slug in slugs.values():
            slug, n = f"{_slug(run)}_{n}", n + 1
        slugs[run] = slug

    def per_run(section, stem, title, draw):
        return [(section, f"{stem}_{slugs[r]}", f"{title}: {r}", r,
                 lambda ctx, item, r=r: draw(ctx, item, r)) for r in runs]

    plan = per_run("1. Temporal breakdown", "breakdown_ranks", "Temporal breakdown per rank",
                   fig_breakdown_ranks)
    plan += [("1. Temporal breakdown", "breakdown_runs", "Temporal breakdown per run", None,
              fig_breakdown_runs),
             ("2. Scaling", "scaling", "Scaling comparison across runs", None, fig_scaling)]
    plan += per_run("3. Communication / compute overlap", "overlap", "Overlap per rank",
                    fig_overlap)
    for r in runs:
        plan += [("4. Collective bandwidth", f"bandwidth_{slugs[r]}",
                  f"Bus bandwidth against message size: {r}", r,
                  lambda ctx, item, r=r: fig_bandwidth(ctx, item, r)),
                 ("4. Collective bandwidth", f"traffic_{slugs[r]}", f"Collective traffic: {r}",
                  r, lambda ctx, item, r=r: table_traffic(ctx, item, r))]
    plan += per_run("4. Collective bandwidth", "links", "Links against their peaks", fig_links)
    plan += per_run("4. Collective bandwidth", "comm_parts", "Communication per process group",
                    fig_comm_parts)
    plan += per_run("5. Stragglers", "straggler", "Straggler heatmap", fig_straggler)
    plan += per_run("5. Stragglers", "lateness", "Lateness per rank and step", fig_lateness)
    plan += per_run("6. Iteration time", "iteration_time", "Iteration time per step",
                    fig_iteration_time)
    plan += per_run("6. Iteration time", "critpath", "Critical path per step", fig_critical_path)
    plan += per_run("7. Phases", "phases", "Forward / backward / optimizer phases", fig_phases)
    plan += per_run("7. Phases", "host", "Host time per rank", fig_host_breakdown)
    plan += per_run("8. Memory by phase", "memory", "Memory by phase", fig_memory)
    plan += per_run("8. Memory by phase", "memory_timeline", "GPU memory over time",
                    fig_memory_timeline)
    plan += per_run("8. Memory by phase", "memory_free", "Free GPU memory per phase",
                    fig_memory_free)
    plan += [("9. Training-log phases per series", f"log_phases_{_slug(s)}",
              f"Phase times across series {s}", None,
              lambda ctx, item, s=s: fig_log_phases_series(ctx, item, s)) for s in series]
    plan += per_run("10. How close to the hardware", "roofline", "Roofline", fig_roofline)
    plan += [("10. How close to the hardware", "tflops_runs", "TFLOP/s per run", None,
              fig_tflops_runs)]
    plan += per_run("10. How close to the hardware", "counters", "Hardware counters", fig_counters)
    return plan


def _diff_plan(base: str, test: str) -> list[tuple[str, str, str, str | None, Callable]]:
    """The diff section, for a report asked for two runs (the first given is the base)."""
    return [(DIFF_SECTION, "diff", f"{base} -> {test}: step time and breakdown", None,
             lambda ctx, item: fig_diff(ctx, item, base, test)),
            (DIFF_SECTION, "diff_ops", f"{base} -> {test}: the largest changes by op", None,
             lambda ctx, item: table_diff(ctx, item, base, test))]
