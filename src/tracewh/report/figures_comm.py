"""Figures of the collectives: bus bandwidth, traffic by size, the straggler heatmap."""

from __future__ import annotations

import html
import math

from .draw import (
    MARKERS, PALETTE, _figure, _fmt_bytes, _fmt_ns, _outside_legend, _rank_labels, _thin_ticks,
    _time_unit,
)
from .model import Item, Skip, _Context, _rows


def fig_bandwidth(ctx: _Context, item: Item, run: str):
    from matplotlib.ticker import FuncFormatter, NullFormatter

    rows = _rows(ctx, item, "collective_bandwidth", run=run)
    if not rows:
        raise Skip("collective_bandwidth returned no collectives for this run")
    known = [r for r in rows if r["busbw_gbps"] is not None and (r["full_bytes"] or 0) > 0
             and r["busbw_gbps"] > 0]
    if not known:
        notes = sorted({r["note"] for r in rows if r["note"]})
        raise Skip("bus bandwidth is NULL for every collective"
                   + (f" ({'; '.join(notes)})" if notes else ""))
    kinds = list(dict.fromkeys(r["collective"] for r in known))
    fig = _figure(ctx.options)
    ax = fig.add_subplot()
    for i, kind in enumerate(kinds):
        points = [r for r in known if r["collective"] == kind]
        ax.scatter([r["full_bytes"] for r in points], [r["busbw_gbps"] for r in points],
                   s=14, marker=MARKERS[i % len(MARKERS)], color=PALETTE[i % len(PALETTE)],
                   label=f"{kind} ({len(points)})", linewidths=0.4, edgecolors="black")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(_fmt_bytes))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _pos: _minor_log_label(ax, v)))
    ax.set_xlabel("message size (nccl-tests size)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.grid(True, which="major", linewidth=0.3, color="#cccccc")
    ax.set_title(f"{run}: collective bus bandwidth")
    _outside_legend(fig, ax, ncols=min(len(kinds), 4))
    item.caption = ("One point per collective matched across ranks: t = its shortest duration "
                    "over the ranks, algbw = size / t, busbw = algbw × bus factor "
                    "(nccl-tests).")
    left_out = len(rows) - len(known)
    if left_out:
        notes = sorted({r["note"] for r in rows if r["note"] and r not in known})
        item.notes.append(f"{left_out} operation(s) without a bandwidth left out"
                          + (f": {'; '.join(notes)}" if notes else "") + ".")
    return fig


def _minor_log_label(ax, value: float) -> str:
    """Minor log ticks: all labelled when the axis spans about a decade or less, else 2x and
    5x of each decade only (plain numbers, no 3x10^2)."""
    if value <= 0:
        return ""
    low, high = ax.get_ylim()
    leading = round(value / 10 ** math.floor(math.log10(value)), 6)
    if low > 0 and high / low <= 12:
        return f"{value:g}"
    return f"{value:g}" if leading in (2.0, 5.0) else ""


def table_traffic(ctx: _Context, item: Item, run: str):
    rows = _rows(ctx, item, "traffic_distribution", run=run)
    if not rows:
        raise Skip("traffic_distribution returned no collectives for this run")
    columns = [("collective", "collective", str), ("pg_name", "process group", str),
               ("size_bucket", "size", str), ("collectives", "count", str),
               ("total_bytes", "bytes", lambda v: _fmt_bytes(v) if v is not None else "n/a"),
               ("total_ns", "time", _fmt_ns),
               ("busbw_p10_gbps", "busbw p10", _fmt_gbps), ("busbw_p50_gbps", "p50", _fmt_gbps),
               ("busbw_p90_gbps", "p90 (GB/s)", _fmt_gbps)]
    head = "".join(f"<th>{html.escape(title)}</th>" for _, title, _ in columns)
    body = []
    for row in rows:
        cells = "".join(
            f"<td>{html.escape('' if row[c] is None and f is str else f(row[c]))}</td>"
            for c, _, f in columns)
        body.append(f"<tr>{cells}</tr>")
    item.table_html = (f'<table class="data"><thead><tr>{head}</tr></thead>'
                       f"<tbody>{''.join(body)}</tbody></table>")
    notes = sorted({r["note"] for r in rows if r["note"]})
    item.caption = ("Collectives matched across ranks, by kind, process group and message "
                    "size bucket: count, bytes, time (shortest over ranks) and bus bandwidth "
                    "percentiles.")
    item.notes += [f"{n}." for n in notes]


def _fmt_gbps(value) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def fig_straggler(ctx: _Context, item: Item, run: str):
    import numpy as np

    overall = _rows(ctx, item, "straggler", run=run)
    if not overall:
        raise Skip("straggler found no collective matched on two or more ranks")
    traffic = _rows(ctx, item, "traffic_distribution", run=run)  # the kinds there are
    kinds = [k for k in dict.fromkeys(r["collective"] for r in traffic)
             if k not in ("Send", "Recv", "SendRecv")]
    columns: list[tuple[str, dict]] = []
    for kind in kinds:
        rows = _rows(ctx, item, "straggler", run=run, collective=kind)
        if rows:
            columns.append((kind, {r["rank"]: r for r in rows}))
    if len(columns) != 1:  # one kind alone would repeat the "all" column
        columns.append(("all collectives", {r["rank"]: r for r in overall}))
    ranks = [r["rank"] for r in overall]
    matrix = np.array([[np.nan if rank not in col or col[rank]["mean_wait_ns"] is None
                        else col[rank]["mean_wait_ns"] for _, col in columns] for rank in ranks],
                      dtype=float)
    div, unit = _time_unit(np.nanmax(matrix) if np.isfinite(matrix).any() else 0)
    matrix = matrix / div
    fig = _figure(ctx.options)
    ax = fig.add_subplot()
    # cells as vector patches (not a raster image): crisp and small in SVG and EPS
    image = ax.pcolormesh(np.arange(len(columns) + 1) - 0.5, np.arange(len(ranks) + 1) - 0.5,
                          np.ma.masked_invalid(matrix), cmap="magma_r", vmin=0,
                          edgecolors="white", linewidth=0.4)
    ax.invert_yaxis()
    colorbar = fig.colorbar(image, ax=ax, shrink=0.9)
    colorbar.set_label(f"mean wait per collective ({unit})")
    stragglers = {r["rank"] for r in overall if r["is_straggler"]}
    labels = _rank_labels(ranks, stragglers)
    _thin_ticks(ax, list(range(len(ranks))), labels)
    ax.set_xticks(range(len(columns)), [name for name, _ in columns])
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    if len(ranks) * len(columns) <= 96:
        top = np.nanmax(matrix) if np.isfinite(matrix).any() else 0
        for (y, x), value in np.ndenumerate(matrix):
            if np.isfinite(value):
                ax.text(x, y, f"{value:.3g}", ha="center", va="center", fontsize=5.5,
                        color="white" if top and value > top * 0.6 else "black")
    ax.set_title(f"{run}: waiting for the last rank at collectives")
    skew = overall[0]
    item.caption = ("Mean time each rank waits at a collective for the last rank to arrive "
                    "(latest start − own start, clocks aligned), by collective kind. The "
                    "straggler (*) is the rank that waits least: the others wait for it.")
    item.notes.append(f"Straggler: rank {', '.join(str(s) for s in sorted(stragglers))}; median "
                      f"start skew {_fmt_ns(skew['median_start_skew_ns'])}, max "
                      f"{_fmt_ns(skew['max_start_skew_ns'])}; median end skew "
                      f"{_fmt_ns(skew['median_end_skew_ns'])}.")
    return fig


# Issue 36: what communication costs, per process group; links against their peaks; who was late
COMM_PARTS = (("wait", "waiting for the last rank", "#D55E00"),
              ("transfer", "transfer", "#0072B2"),
              ("launch", "launch", "#E69F00"))
CAUSE_LABELS = {"data loading": "data", "sync wait": "sync", "OS calls": "OS",
                "launch gaps": "launch", "GPU work": "GPU", "later start": "start"}


def fig_comm_parts(ctx: _Context, item: Item, run: str):
    rows = _rows(ctx, item, "comm_breakdown", run=run, per_group="true")
    if not rows:
        raise Skip("comm_breakdown found no collective matched across ranks in this run")
    div, unit = _time_unit(max(r["duration_ns"] or 0 for r in rows))
    fig = _figure(ctx.options)
    ax = fig.add_subplot()
    positions = list(range(len(rows)))
    left = [0.0] * len(rows)
    for part, label, colour in COMM_PARTS:
        # a part's whole time, and its exposed time (no compute kernel running) hatched over
        # its start: both are metric columns
        whole = [max(r[f"{part}_ns"] or 0, 0) / div for r in rows]
        exposed = [max(r[f"{part}_exposed_ns"] or 0, 0) / div for r in rows]
        ax.barh(positions, whole, left=left, color=colour, label=label, height=0.7,
                edgecolor="white", linewidth=0.3)
        ax.barh(positions, exposed, left=left, color="none", height=0.7, hatch="////",
                edgecolor="black", linewidth=0, label="exposed" if part == "launch" else None)
        left = [a + b for a, b in zip(left, whole)]
    labels = [f"group {r['process_group'] or '(unnamed)'} ({r['collectives']} ops)" for r in rows]
    _thin_ticks(ax, positions, labels)
    ax.invert_yaxis()
    ax.set_xlabel(f"time summed over the group's ranks and collectives ({unit})")
    ax.set_title(f"{run}: communication per process group")
    _outside_legend(fig, ax, ncols=4)
    item.caption = ("Each process group's collective time, summed over its ranks: waiting for "
                    "the last rank to arrive (kernel start → last arrival), the transfer (last "
                    "arrival → kernel end) and the launch (API call → kernel start). Hatched: "
                    "the part of each not overlapped by the rank's compute kernels (exposed).")
    early = [r for r in rows if r["ends_early"]]
    if early:
        item.notes.append(f"{', '.join(str(r['ends_early']) for r in early)} collective(s) end "
                          "before the last arrival on the aligned clock (clock offsets off): "
                          "their negative transfer is drawn as 0.")
    return fig


def fig_links(ctx: _Context, item: Item, run: str):
    rows = _rows(ctx, item, "link_efficiency", run=run)
    if not rows:
        raise Skip("link_efficiency found no collective with a size in this run")
    known = [r for r in rows if r["busbw_p50_gbps"] is not None]
    if not known:
        reasons = sorted({r["reason"] for r in rows if r["reason"]})
        raise Skip("no group's bus bandwidth is known"
                   + (f": {'; '.join(reasons)}" if reasons else ""))
    shown = sorted(known, key=lambda r: -(r["total_bytes"] or 0))[:24]
    fig = _figure(ctx.options)
    ax = fig.add_subplot()
    positions = list(range(len(shown)))
    colours = {"intra-node": "#009E73", "inter-node": "#D55E00", None: "#999999"}
    ax.barh(positions, [r["busbw_p50_gbps"] for r in shown], height=0.6,
            color=[colours.get(r["scope"], "#999999") for r in shown])
    ax.scatter([r["busbw_max_gbps"] for r in shown], positions, marker="|", s=40, color="black",
               linewidths=0.8, label="max busbw", zorder=3)
    with_peak = [(p, r) for p, r in zip(positions, shown) if r["peak_gbps"] is not None]
    ax.scatter([r["peak_gbps"] for _, r in with_peak], [p for p, _ in with_peak], marker="D", s=14,
               color="white", edgecolors="black", linewidths=0.7, label="link peak", zorder=3)
    for p, r in with_peak:
        ax.text(r["peak_gbps"], p, f"  {r['efficiency_pct']:.0f}% of {r['link']}", va="center",
                fontsize=5.5)
    for p, r in zip(positions, shown):
        if r["peak_gbps"] is None:
            ax.text(r["busbw_max_gbps"], p, "  peak unknown", va="center", fontsize=5.5)
    for scope in ("intra-node", "inter-node"):
        if any(r["scope"] == scope for r in shown):
            ax.barh([0], [0], color=colours[scope], label=f"median busbw, {scope}")
    labels = [f"group {r['pg_name'] or '?'} {r['collective']} {r['size_bucket']}" for r in shown]
    _thin_ticks(ax, positions, labels, most=24)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("bus bandwidth (GB/s, per GPU, one direction)")
    ax.set_title(f"{run}: collectives against their link's peak")
    _outside_legend(fig, ax, ncols=2)
    item.caption = ("Per process group, collective and message size: the median bus bandwidth "
                    "(bar; green inside one host, orange across hosts), its maximum (tick) and the "
                    "peak of the group's bottleneck link (diamond) with the median's share of it.")
    if len(known) > len(shown):
        item.notes.append(f"The {len(shown)} of {len(known)} rows moving the most bytes are shown.")
    reasons = sorted({r["reason"] for r in rows if r["reason"]})
    item.notes += [f"{reason}." for reason in reasons]
    return fig


def fig_lateness(ctx: _Context, item: Item, run: str):
    import numpy as np

    cells = _rows(ctx, item, "straggler_cause", run=run, per_step="true")
    if not cells:
        raise Skip("straggler_cause found no collective with a step in this run")
    ranks = [r["rank"] for r in _rows(ctx, item, "straggler_cause", run=run, per_rank="true")]
    steps = sorted({r["iteration"] for r in cells})
    late = np.full((len(ranks), len(steps)), np.nan)
    causes = {}
    for r in cells:
        y, x = ranks.index(r["rank"]), steps.index(r["iteration"])
        late[y, x], causes[y, x] = r["late_ns"], r["cause"]
    div, unit = _time_unit(np.nanmax(late))
    fig = _figure(ctx.options)
    ax = fig.add_subplot()
    image = ax.pcolormesh(np.arange(len(steps) + 1) - 0.5, np.arange(len(ranks) + 1) - 0.5,
                          np.ma.masked_invalid(late / div), cmap="magma_r", vmin=0,
                          edgecolors="white", linewidth=0.4)
    ax.invert_yaxis()
    fig.colorbar(image, ax=ax, shrink=0.9).set_label(f"late, summed over its collectives ({unit})")
    _thin_ticks(ax, list(range(len(ranks))), _rank_labels(ranks))
    _thin_ticks(ax, list(range(len(steps))), [str(s) for s in steps], axis="x")
    ax.set_xlabel("step (iteration)")
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    if len(ranks) * len(steps) <= 160:
        top = np.nanmax(late)
        for (y, x), cause in causes.items():
            ax.text(x, y, f"{late[y, x] / div:.3g}\n{CAUSE_LABELS.get(cause, cause or '-')}",
                    ha="center", va="center", fontsize=5.5,
                    color="white" if top and late[y, x] > top * 0.6 else "black")
    ax.set_title(f"{run}: who arrived last, by how much, and why")
    item.caption = ("Per step and rank: the time the rank arrived after the median rank, summed "
                    "over the collectives it was last at (blank: never last), and the cause "
                    "adding the most over them (data = data loading, sync = sync waits, OS = OS "
                    "calls, launch = launch gaps, GPU = longer GPU work, start = a later step "
                    "start).")
    return fig
