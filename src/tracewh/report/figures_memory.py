"""Figures of GPU memory: by phase, over time, free memory per phase."""

from __future__ import annotations

from .draw import (PALETTE, _figure, _fmt_bytes, _outside_legend, _phase_labels, _short, _thin_ticks,
                   _time_unit)
from .model import Item, Skip, _Context, _rows


def fig_memory(ctx: _Context, item: Item, run: str):
    try:
        rows = _rows(ctx, item, "memory_by_phase", run=run)
    except Skip as exc:
        raise Skip(f"no samples ({exc})") from None
    rows = [r for r in rows if r["samples"] or r["value_at_start"] is not None]
    if not rows:
        raise Skip("no samples: neither allocator events nor a series (tracewh ingest --series) "
                   "cover this run's GPUs while a forward, backward or optimizer phase ran")
    measures = list(dict.fromkeys(r["measure"] for r in rows))
    measure = next((m for m in measures if "free" in m.lower()), measures[0])
    rank = min(r["rank"] for r in rows if r["measure"] == measure)
    rows = [r for r in rows if r["measure"] == measure and r["rank"] == rank]
    phases = list(dict.fromkeys(r["phase"] for r in rows))
    labels, owner = _phase_labels(phases)
    fig = _figure(ctx.options)
    ax = fig.add_subplot()
    for i, phase in enumerate(phases):
        colour = PALETTE[i % len(PALETTE)]
        points = [(x, r) for x, r in enumerate(rows) if r["phase"] == phase]
        sampled = [(x, r) for x, r in points if r["samples"]]
        if sampled:
            xs = [x for x, _ in sampled]
            means = [r["mean_value"] for _, r in sampled]
            low = [r["mean_value"] - r["min_value"] for _, r in sampled]
            high = [r["max_value"] - r["mean_value"] for _, r in sampled]
            ax.errorbar(xs, means, yerr=[low, high], fmt="o", markersize=3, capsize=2,
                        color=colour, linewidth=0.8, label=_short(labels[phase]))
        unsampled = [(x, r) for x, r in points if not r["samples"]]
        if unsampled:
            ax.scatter([x for x, _ in unsampled], [r["value_at_start"] for _, r in unsampled],
                       marker="o", s=10, facecolors="none", edgecolors=colour,
                       linewidths=0.8, label=None if sampled else _short(labels[phase]))
    positions = list(range(len(rows)))
    labels = [str(r["iteration"]) for r in rows]
    _thin_ticks(ax, positions, labels, axis="x", most=20)
    ax.set_xlabel("iteration (phases in time order)")
    ax.set_ylabel(measure)
    if measure.endswith("[B]"):  # bytes as 80.0G, not 8.58e10
        from matplotlib.ticker import FuncFormatter

        ax.yaxis.set_major_formatter(FuncFormatter(_fmt_bytes))
    ax.set_title(f"{run}: {measure} by {owner + ' ' if owner else ''}phase (rank {rank})")
    _outside_legend(fig, ax, ncols=min(len(phases), 4))
    item.caption = (f"Samples of {measure} taken while each phase ran on rank {rank}: mean "
                    "(dot) and min–max (bar). A hollow dot is the last sample before a phase "
                    "shorter than the sampling interval.")
    if len(measures) > 1:
        item.notes.append(f"Other measures: {', '.join(m for m in measures if m != measure)} "
                          "(tracewh query memory_by_phase --param measure=...).")
    return fig


MEMORY_RANKS = 8  # timeline panels per figure
MEMORY_BINS = 400


def fig_memory_timeline(ctx: _Context, item: Item, run: str):
    """Allocated (and reserved) GPU memory over time, one panel per rank, phases shaded and each
    step's peak marked; a run without allocator events shows its sampled series per phase."""
    points = [r for r in _rows(ctx, item, "memory_timeline", run=run, bins=MEMORY_BINS)
              if r["device_type"] == "GPU"]
    phases = _rows(ctx, item, "memory_by_phase", run=run, measure="%")
    if points:
        peaks = [r for r in _rows(ctx, item, "memory_peaks", run=run)
                 if r["device_type"] == "GPU" and r["iteration"] is not None]
    elif not any(r["source"] == "samples" for r in phases):
        raise Skip("no allocator events (profile_memory=True, nsys --cuda-memory-usage=true) "
                   "and no sampled memory series (tracewh ingest --series) for this run")
    ranks = sorted({r["rank"] for r in points} or
                   {r["rank"] for r in phases if r["source"] == "samples"})
    shown = ranks[:MEMORY_RANKS]
    fig = _figure(ctx.options)
    axes = fig.subplots(len(shown), 1, sharex=True, squeeze=False)[:, 0]
    times = [r["ts_ns"] for r in points] or [t for r in phases for t in (r["start_ns"], r["end_ns"])]
    origin = min(times)
    div, unit = _time_unit(max(times) - origin)
    names = list(dict.fromkeys(r["phase"] for r in phases))
    labels, owner = _phase_labels(names)
    colours = {name: PALETTE[(i + 2) % len(PALETTE)] for i, name in enumerate(names)}
    labelled = set()  # one legend entry per phase
    for ax, rank in zip(axes, shown):
        spans = dict.fromkeys((r["phase"], r["start_ns"], r["end_ns"])
                              for r in phases if r["rank"] == rank)
        for phase, start, end in spans:
            ax.axvspan((start - origin) / div, (end - origin) / div, color=colours[phase],
                       alpha=0.18, linewidth=0,
                       label=None if phase in labelled else _short(labels[phase]))
            labelled.add(phase)
        if points:
            _memory_lines(ax, [r for r in points if r["rank"] == rank],
                          [r for r in peaks if r["rank"] == rank], origin, div)
        else:
            _sampled_steps(ax, [r for r in phases if r["rank"] == rank
                                and r["source"] == "samples"], origin, div)
        ax.set_ylabel(f"rank {rank}")
    axes[-1].set_xlabel(f"time since the first point ({unit})")
    _outside_legend(fig, axes[0], title=f"{owner} phases" if owner else None)  # same in every panel
    what = "allocator events" if points else "sampled series"
    axes[0].set_title(f"{run}: GPU memory over time ({what})")
    if points:
        item.caption = (f"Allocated (and reserved, where the trace gives it) GPU memory, the "
                        f"highest per {MEMORY_BINS}th of each rank's time span, with the "
                        "phases shaded; a triangle marks each step's peak, the highest labelled.")
    else:
        item.caption = ("No allocator events: the sampled measure's min–max (band) and mean "
                        "(line) during each phase, from memory_by_phase.")
    if len(ranks) > len(shown):
        item.notes.append(f"Ranks {shown[0]}–{shown[-1]} of {len(ranks)} shown "
                          f"(tracewh query memory_timeline --param run={run} for all).")
    if any(r["derived"] for r in points):
        item.notes.append("The trace gives no totals: allocated is a running sum of its "
                          "events (memory_events.derived), raised to never go below zero.")
    return fig


def _memory_lines(ax, points: list[dict], peaks: list[dict], origin: int, div: float) -> None:
    from matplotlib.ticker import FuncFormatter

    xs = [(r["ts_ns"] - origin) / div for r in points]
    ax.step(xs, [r["allocated"] for r in points], where="post", color=PALETTE[0],
            linewidth=0.9, label="allocated")
    if any(r["reserved"] is not None for r in points):
        ax.step(xs, [r["reserved"] for r in points], where="post", color=PALETTE[1],
                linewidth=0.8, linestyle="--", label="reserved")
    if peaks:
        ax.scatter([(r["peak_ns"] - origin) / div for r in peaks],
                   [r["peak_allocated"] for r in peaks], marker="v", s=14, color=PALETTE[3],
                   zorder=3, label="step peak")
        top = max(peaks, key=lambda r: r["peak_allocated"])
        ax.annotate(_fmt_bytes(top["peak_allocated"]),
                    ((top["peak_ns"] - origin) / div, top["peak_allocated"]),
                    textcoords="offset points", xytext=(3, 3), fontsize=6, color=PALETTE[3])
    ax.yaxis.set_major_formatter(FuncFormatter(_fmt_bytes))
    # headroom: the peak's label stays inside the panel, clear of the title above it
    highest = max([v for r in points for v in (r["allocated"], r["reserved"]) if v is not None]
                  + [r["peak_allocated"] for r in peaks] + [1])
    ax.set_ylim(0, highest * 1.25)


def _sampled_steps(ax, rows: list[dict], origin: int, div: float) -> None:
    measure = next((r["measure"] for r in rows if "free" in r["measure"].lower()),
                   rows[0]["measure"] if rows else None)
    rows = [r for r in rows if r["measure"] == measure and r["samples"]]
    for r in rows:
        x = [(r["start_ns"] - origin) / div, (r["end_ns"] - origin) / div]
        ax.fill_between(x, r["min_value"], r["max_value"], color=PALETTE[0], alpha=0.3,
                        linewidth=0)
        ax.plot(x, [r["mean_value"]] * 2, color=PALETTE[0], linewidth=0.9)
    if measure:
        ax.set_title(measure, fontsize=6.5, loc="right")


def fig_memory_free(ctx: _Context, item: Item, run: str):
    """Free GPU memory during forward, backward and optimizer of the run's last step, as
    horizontal bars per rank (the plot offloading studies draw), from each source it has."""
    rows = [r for r in _rows(ctx, item, "memory_by_phase", run=run)
            if r["min_value"] is not None]
    if not rows:
        raise Skip("no free-memory measure during the phases (forward/backward/optimizer "
                   "ranges): no allocator events on a GPU whose size is known, and no sampled "
                   "series with 'free' in its name")
    sources = list(dict.fromkeys((r["source"], r["measure"]) for r in rows))
    last = max(r["iteration"] for r in rows)
    fig = _figure(ctx.options)
    axes = fig.subplots(1, len(sources), squeeze=False)[0]
    for ax, (source, measure) in zip(axes, sources):
        bars = [r for r in rows if (r["source"], r["measure"]) == (source, measure)
                and r["iteration"] == last]
        names = list(dict.fromkeys(r["phase"] for r in bars))
        labels, owner = _phase_labels(names)
        ys = list(range(len(bars)))[::-1]
        ax.barh(ys, [r["min_value"] for r in bars], height=0.7,
                color=[PALETTE[(names.index(r["phase"]) + 2) % len(PALETTE)] for r in bars])
        ax.scatter([r["mean_value"] for r in bars], ys, marker="|", s=40, color="#000000",
                   zorder=3, label="mean")
        ax.set_yticks(ys, [f"rank {r['rank']} {_short(labels[r['phase']], 24)}" for r in bars])
        if source == "allocator":
            from matplotlib.ticker import FuncFormatter

            ax.xaxis.set_major_formatter(FuncFormatter(_fmt_bytes))
        ax.set_xlabel(f"{measure} ({source}), least during the {owner + ' ' if owner else ''}phase")
    _outside_legend(fig, axes[0])
    axes[0].set_title(f"{run}: free GPU memory per phase, step {last}", loc="left")
    item.caption = ("Bar: the least free GPU memory while each phase of the run's last step ran "
                    "(tick: the mean), per rank; from allocator events (device memory minus what "
                    "the allocator holds) and from sampled series, side by side where the run "
                    "has both.")
    return fig
