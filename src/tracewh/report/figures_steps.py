"""Figures of the training steps: iteration time, phases, host time, training-log phases."""

from __future__ import annotations

from .draw import (
    PALETTE, _figure, _fmt_ns, _outside_legend, _phase_labels, _rank_labels, _short, _stacked_parts,
    _thin_ticks, _time_unit,
)
from .model import Item, Skip, _Context, _rows


def fig_iteration_time(ctx: _Context, item: Item, run: str):
    rows = _rows(ctx, item, "iteration_time", run=run, per_iteration=True,
                 include_first_last=True)
    rows = [r for r in rows if r["iteration"] is not None and r["dur_ns"] is not None]
    if not rows:
        raise Skip("iteration_time found no complete iteration (no ProfilerStep#N or step "
                   "ranges in the iterations view)")
    summary = _rows(ctx, item, "iteration_time", run=run)
    div, unit = _time_unit(max(r["dur_ns"] for r in rows))
    ranks = list(dict.fromkeys(r["rank"] for r in rows if r["rank"] is not None))
    fig = _figure(ctx.options)
    ax = fig.add_subplot()
    colours = _rank_colours(len(ranks))
    for rank, colour in zip(ranks, colours):
        points = [r for r in rows if r["rank"] == rank]
        ax.plot([r["iteration"] for r in points], [r["dur_ns"] / div for r in points],
                color=colour, linewidth=0.8, marker="o", markersize=2.5,
                label=f"rank {rank}" if len(ranks) <= 8 else None)
    if len(ranks) > 8:
        ax.plot([], [], color=colours[0], linewidth=0.8,
                label=f"ranks {ranks[0]}–{ranks[-1]} (one line each)")
    across = [r for r in rows if r["rank"] is None]
    if across:
        ax.plot([r["iteration"] for r in across], [r["dur_ns"] / div for r in across],
                color="black", linewidth=1.6, linestyle="--", marker="s", markersize=3.5,
                label="across ranks")
    from matplotlib.ticker import MaxNLocator

    steps = sorted({r["iteration"] for r in rows})
    if len(steps) <= 20:
        ax.set_xticks(steps)
        ax.set_xlim(steps[0] - 0.5 - (len(steps) == 1), steps[-1] + 0.5 + (len(steps) == 1))
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("iteration")
    ax.set_ylabel(f"iteration time ({unit})")
    ax.set_ylim(bottom=0)
    ax.set_title(f"{run}: iteration time")
    _outside_legend(fig, ax, ncols=min(len(ranks) + 1, 5) if len(ranks) <= 8 else 2,
                    last=("across ranks",))
    item.caption = ("Each rank's step time (its ProfilerStep / step range) and the step "
                    "across ranks (last aligned end − first aligned start); first and last "
                    "steps included.")
    whole = next((r for r in summary if r["rank"] is None), None)
    if whole and whole["median_ns"] is not None:
        item.notes.append(f"Across ranks, first and last steps left out: median "
                          f"{_fmt_ns(whole['median_ns'])}, p90 {_fmt_ns(whole['p90_ns'])} over "
                          f"{whole['iterations']} iteration(s).")
    else:
        item.notes.append("Too few iterations for a median once the first and last steps "
                          "are left out.")
    return fig


def _rank_colours(count: int) -> list:
    if count <= len(PALETTE):
        return list(PALETTE[:count])
    from matplotlib import colormaps

    cmap = colormaps["viridis"]
    return [cmap(i / max(count - 1, 1)) for i in range(count)]


def fig_phases(ctx: _Context, item: Item, run: str):
    rows = _rows(ctx, item, "nvtx_phases", run=run)
    if not rows:
        raise Skip("nvtx_phases found no forward/backward/optimizer NVTX ranges inside "
                   "iterations")
    ranks = sorted({r["rank"] for r in rows})
    rank = ranks[0]
    rows = [r for r in rows if r["rank"] == rank]
    iterations = list(dict.fromkeys(r["iteration"] for r in rows))
    phases = list(dict.fromkeys(r["phase"] for r in rows))
    labels, owner = _phase_labels(phases)
    by_key = {(r["iteration"], r["phase"]): r for r in rows}
    step_ns = {r["iteration"]: r["iteration_ns"] for r in rows}
    div, unit = _time_unit(max(max(r["total_ns"] for r in rows),
                               max(v or 0 for v in step_ns.values())))
    fig = _figure(ctx.options)
    ax = fig.add_subplot()
    positions = list(range(len(iterations)))
    bottom = [0.0] * len(iterations)
    for i, phase in enumerate(phases):
        values = [(by_key[(it, phase)]["total_ns"] / div) if (it, phase) in by_key else 0.0
                  for it in iterations]
        ax.bar(positions, values, bottom=bottom, width=0.7, color=PALETTE[i % len(PALETTE)],
               label=_short(labels[phase]), edgecolor="white", linewidth=0.3)
        bottom = [a + b for a, b in zip(bottom, values)]
    ax.scatter(positions, [(step_ns[it] or 0) / div for it in iterations], marker="_", s=200,
               color="black", linewidths=1.2, label="iteration", zorder=3)
    _thin_ticks(ax, positions, [str(it) for it in iterations], axis="x", most=20)
    ax.set_xlabel("iteration")
    ax.set_ylabel(f"phase time ({unit})")
    ax.set_title(f"{run}: {owner + ' ' if owner else ''}phases per iteration (rank {rank})")
    item.caption = (f"Time in each named NVTX phase per iteration on rank {rank} (nested "
                    "instances add up), with the iteration's length as a black tick.")
    if len(ranks) > 1:
        item.notes.append(f"Other ranks ({ranks[1]}–{ranks[-1]}): tracewh query nvtx_phases "
                          f"--param run={run} --param rank=N.")
    _second_axis(ctx, item, ax, run)
    _outside_legend(fig, ax, ncols=min(len(phases) + 2, 4),
                    last=("iteration", "tokens/s", "samples/s"))
    return fig


HOST_PARTS = (
    ("data_loading_pct", "data loading", "#E69F00"),
    ("forward_pct", "forward", "#56B4E9"),
    ("backward_pct", "backward", "#0072B2"),
    ("optimizer_pct", "optimizer", "#009E73"),
    ("sync_wait_pct", "sync wait", "#D55E00"),
    ("os_call_pct", "OS calls", "#CC79A7"),
    ("launching_pct", "launching", "#F0E442"),
    ("other_pct", "other", "#D0D0D0"),
)


def fig_host_breakdown(ctx: _Context, item: Item, run: str):
    """Per rank, the launching thread's time over the run's steps, by what it did."""
    rows = _rows(ctx, item, "host_breakdown", run=run)
    ranks = [r for r in rows if r["iteration"] is None]  # a rank's steps together
    if not ranks:
        raise Skip("host_breakdown returned no rows: the run has no iterations")
    fig = _figure(ctx.options)
    ax = fig.add_subplot()
    _stacked_parts(ax, _rank_labels([r["rank"] for r in ranks]), ranks, HOST_PARTS)
    ax.set_xlabel("% of the steps' host time")
    ax.set_title(f"{run}: host time per rank (launching thread)")
    _outside_legend(fig, ax, ncols=4)
    steps = len({r["iteration"] for r in rows if r["iteration"] is not None})
    item.caption = ("Each rank's launching thread (the training loop's) over its "
                    f"{steps} step(s), split by what it did, the first that applies: waiting "
                    "on the GPU, launching, data loading, OS calls, then the optimizer, backward "
                    "and forward phases, and other; the parts sum to the steps' time.")
    return fig


def _second_axis(ctx: _Context, item: Item, ax, run: str) -> None:
    mode = ctx.options.second_axis
    if mode == "none":
        return
    try:
        rows = _rows(ctx, item, "throughput", run=run)
    except Skip as exc:
        item.notes.append(f"No second axis: {exc}.")
        return
    row = rows[0] if rows else None
    choices = {"tokens": ("tokens_per_s", "tokens/s"), "samples": ("samples_per_s", "samples/s")}
    wanted = ["tokens", "samples"] if mode == "auto" else [mode]
    for name in wanted:
        column, label = choices[name]
        if row and row.get(column) is not None:
            twin, line = ax.twinx(), ctx.options.line
            twin.axhline(row[column], color=line.color, linewidth=1.2, linestyle=line.linestyle,
                         label=f"{label} (run, median step)")
            twin.set_ylabel(label, color=line.color)
            twin.set_ylim(0, row[column] * 1.25)
            twin.spines["right"].set_visible(True)
            handles, labels = twin.get_legend_handles_labels()
            for h, lab in zip(handles, labels):
                ax.plot([], [], color=h.get_color(), linestyle=line.linestyle, label=lab)
            item.notes.append(f"Second axis: {label} of the run from throughput "
                              f"({row[column]:.4g}; one value per run, not per iteration).")
            return
    reason = (row or {}).get("reason") or "throughput returned no row for this run"
    item.notes.append(f"No second axis: {reason}.")


# the timers drawn for a series, in stacking order: the first a run's log has, by phase
LOG_PHASES = (("forward", ("fwd", "fwd_microstep", "forward")),
              ("backward", ("bwd", "bwd_microstep", "backward")),
              ("step", ("step", "step_microstep", "optimizer")))


def fig_log_phases_series(ctx: _Context, item: Item, series: str):
    """Horizontal bars, one per configuration of the series, stacked forward / backward / step
    (median over kept steps), and the TFLOP/s the logs print as a line on a second axis (dotted
    red unless --line says otherwise)."""
    rows = _rows(ctx, item, "log_phases", series=series)
    configs = list(dict.fromkeys((r["position"], r["varied"], r["value"], r["run_id"]) for r in rows))
    by_run = {(r["run_id"], r["timer"]): r["median_ms"] for r in rows}
    stacks = {phase: [next((by_run[c[3], t] for t in timers if (c[3], t) in by_run), 0.0)
                      for c in configs] for phase, timers in LOG_PHASES}
    if not any(any(v) for v in stacks.values()):
        raise Skip("log_phases has no forward, backward or step timer for this series")
    fig = _figure(ctx.options)
    ax = fig.add_subplot()
    positions = list(range(len(configs)))
    left = [0.0] * len(configs)
    for i, (phase, values) in enumerate(stacks.items()):
        ax.barh(positions, values, left=left, height=0.6, color=PALETTE[i], label=phase)
        left = [a + b for a, b in zip(left, values)]
    ax.set_yticks(positions, [f"{varied}={value}" for _, varied, value, _ in configs])
    ax.invert_yaxis()
    ax.set_xlabel("median time per step (ms)")
    ax.set_title(f"Series {series}: phase times per configuration")
    tflops = {r["run_id"]: r["tflops"] for r in rows}
    if any(tflops.get(c[3]) is not None for c in configs):
        twin, line = ax.twiny(), ctx.options.line
        twin.plot([tflops.get(c[3]) for c in configs], positions, linestyle=line.linestyle,
                  marker="o", color=line.color, label="TFLOP/s")
        ax.plot([], [], linestyle=line.linestyle, marker="o", color=line.color, label="TFLOP/s")
        twin.set_xlabel("TFLOP/s (as the logs print)")
    else:
        item.notes.append("No TFLOP/s line: the logs print none.")
    item.caption = ("Median forward, backward and step time over the kept steps of each run's "
                    "training log (the first step left out as warm-up), one bar per "
                    f"configuration of the series; only {configs[0][1]} differs between them.")
    _outside_legend(fig, ax, ncols=3)
    return fig
