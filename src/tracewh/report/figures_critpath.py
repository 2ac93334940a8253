"""The critical path of the first steps: what each step waited on, across ranks (issue 35)."""

from __future__ import annotations

from .draw import PALETTE, _fmt_ns, _outside_legend, _figure, _stacked_parts
from .model import Item, Skip, _Context, _rows

STEPS = 4  # the path of each step is a graph walk over all its ranks: the first few only
# bound_by classes in stacking order, each its colour; `waiting for rank N` (0 ns) and the
# weight-0 dependency/sync edges ('') have no length, so no bar
CLASSES = ("cpu_bound", "data_loading", "gpu_kernel_launch_overhead", "gpu_kernel_kernel_overhead",
           "gpu_compute_bound", "gpu_communication_bound")
COLOURS = dict(zip(CLASSES, (PALETTE[0], PALETTE[1], PALETTE[4], PALETTE[5], PALETTE[2], PALETTE[3])))


def fig_critical_path(ctx: _Context, item: Item, run: str):
    steps = []
    for instance in range(STEPS):
        rows = _rows(ctx, item, "critical_path", run=run, ranks="all", instance=instance,
                     per="class")
        if not rows:
            break
        steps.append(rows)
    if not steps:
        raise Skip("critical_path found no step (no ProfilerStep#N or step ranges in the "
                   "iterations view)")
    bars, labels = [], []
    for rows in steps:
        first = rows[0]
        crossed = sorted({rank for r in rows for rank in (r["ranks_crossed"] or [])})
        bars.append({r["bound_by"]: 100 * r["share"] for r in rows if r["share"] is not None})
        others = [str(rank) for rank in crossed if rank != first["end_rank"]]
        labels.append(f"{first['step_name']}: {_fmt_ns(first['path_ns'])} on rank {first['end_rank']}"
                      + (f", crossed {', '.join(others)}" if others else ""))
    present = [c for c in CLASSES if any(bar.get(c) for bar in bars)]
    fig = _figure(ctx.options)
    ax = fig.add_subplot()
    _stacked_parts(ax, labels, bars, parts=[(c, c.replace("_", " "), COLOURS[c]) for c in present])
    ax.set_xlabel("% of the step's critical path")
    ax.set_title(f"{run}: critical path per step")
    _outside_legend(fig, ax, ncols=3)
    item.caption = ("Each step's critical path, walked back from the last rank to finish "
                    "across every rank (critical_path ranks=all), split by HTA's bound_by "
                    "classes; the label gives the path's length, the rank it ends on and the "
                    f"other ranks it crossed. The first {STEPS} steps at most.")
    waits = sorted({r["bound_by"] for rows in steps for r in rows
                    if (r["bound_by"] or "").startswith("waiting for rank")})
    if waits:
        item.notes.append("The path crossed ranks: " + "; ".join(waits) + ".")
    return fig
