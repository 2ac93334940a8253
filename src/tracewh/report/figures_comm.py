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
