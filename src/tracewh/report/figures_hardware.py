"""Figures of how close to the hardware: the roofline, TFLOP/s per run and the hardware's own
counters (SMs active beside busy time, link throughput against its peak)."""

from __future__ import annotations

from .draw import MARKERS, PALETTE, _figure, _outside_legend, _stacked_parts, _thin_ticks, _time_unit
from .figures_runs import _run_label, _scaling_rows
from .model import Item, Skip, _Context, _rows


def fig_roofline(ctx: _Context, item: Item, run: str):
    rows = _rows(ctx, item, "roofline", run=run)
    families = [r for r in rows if r["family"] is not None]
    if not families:
        raise Skip("roofline found no kernel launched by an op with a model and shapes "
                   "(record_shapes=True, Kineto)")
    roofs = [r for r in rows if r["family"] is None and r["peak_tflops"] and r["peak_tbps"]]
    fig = _figure(ctx.options)
    ax = fig.add_subplot()
    for i, r in enumerate(families):
        ax.scatter([r["intensity"]], [r["tflops_per_s"]], s=20 + 1.8 * r["gpu_pct"],
                   color=PALETTE[i % len(PALETTE)], marker=MARKERS[i % len(MARKERS)],
                   label=r["family"], zorder=3)
    _roofs(ax, roofs, [r["intensity"] for r in families])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"{run}: roofline")
    _outside_legend(fig, ax, ncols=4)
    item.caption = ("Each op family of the run (all its shapes and ranks) at its FLOPs per byte "
                    "moved and its TFLOP/s over its kernels' time; marker area grows with its "
                    "share of the modelled GPU time. Lines: the device's roofs, min(peak, "
                    "intensity x HBM bandwidth), per data type.")
    reasons = sorted({r["reason"] for r in rows if r["reason"]})
    if reasons:
        item.notes.append("No roof: " + "; ".join(reasons) + ".")
    return fig


def _roofs(ax, roofs: list[dict], intensities: list[float]) -> None:
    """Each roof row of the roofline metric as its two segments: up the bandwidth slope to the
    ridge, then flat at the peak, across the intensities drawn."""
    if not roofs:
        return
    ridges = [r["ridge_intensity"] for r in roofs]
    low, high = min(intensities + ridges) / 4, max(intensities + ridges) * 4
    for r in roofs:
        ax.plot([low, r["ridge_intensity"], high],
                [low * r["peak_tbps"], r["peak_tflops"], r["peak_tflops"]],
                color="#555555", linewidth=0.9,
                linestyle="-" if r["dtype"] in ("bf16", "fp16") else "--",
                label=f"{r['device']} {r['dtype']} roof")


def fig_tflops_runs(ctx: _Context, item: Item):
    rows = _scaling_rows(ctx, item)
    shown = {r["run_id"] for r in rows}
    rates = {r["run_id"]: r["tflops_per_gpu"]
             for r in _rows(ctx, item, "throughput")
             if r.get("tflops_per_gpu") is not None and r["run_id"] in shown}
    if not rates:
        raise Skip("throughput has no TFLOP/s for any run: no op with a model and shapes "
                   "launched kernels inside complete iterations")
    fig = _figure(ctx.options)
    ax = fig.add_subplot()
    _stacked_parts(ax, [_run_label(r) for r in rows], rows)
    twin = ax.twinx()
    positions = [i for i, r in enumerate(rows) if r["run_id"] in rates]
    values = [rates[rows[i]["run_id"]] for i in positions]
    line = ctx.options.line
    twin.plot(positions, values, color=line.color, linestyle=line.linestyle, marker="o",
              markersize=4, linewidth=1.2)
    twin.set_ylabel("TFLOP/s per GPU", color=line.color)
    twin.set_ylim(0, max(values) * 1.25)
    twin.spines["right"].set_visible(True)
    ax.plot([], [], color=line.color, linestyle=line.linestyle, marker="o",
            label="TFLOP/s per GPU")
    ax.set_title("GPU time and TFLOP/s per run")
    _outside_legend(fig, ax)
    item.caption = ("The temporal breakdown of each run (as in 'Temporal breakdown per run') "
                    "with the FLOPs its op models count per GPU and second (throughput's "
                    f"tflops_per_gpu, median step) as a {line.style} line.")
    missing = [r["run_id"] for r in rows if r["run_id"] not in rates]
    if missing:
        item.notes.append(f"No TFLOP/s (no modelled ops with shapes): {', '.join(missing)}.")
    return fig


MOST_RANKS = 8  # lines of the counters' top panel; more ranks are named in a note


def fig_counters(ctx: _Context, item: Item, run: str):
    bins = [r for r in _rows(ctx, item, "gpu_utilization", run=run)
            if r["sm_active_pct"] is not None]
    links = [r for r in _rows(ctx, item, "link_utilization", run=run) if r["mean_gbps"] is not None]
    if not bins and not links:
        raise Skip("no hardware counters in this run (nsys --gpu-metrics-devices, --nic-metrics "
                   "record them: GPU_METRICS, NET_NIC_METRIC)")
    fig = _figure(ctx.options)
    top, bottom = (fig.subplots(2, 1, height_ratios=(1, 1.2)) if bins and links
                   else (fig.add_subplot(), None) if bins else (None, fig.add_subplot()))
    if bins:
        _sm_active(top, bins, item)
    if links:
        _link_bars(bottom, links)
    top = top or bottom
    top.set_title(f"{run}: what the hardware counters say")
    _outside_legend(fig, top, ncols=3)
    item.caption = ("Top: per rank and bin of gpu_utilization, the share of time with a GPU op in "
                    "flight (solid) and the GPU's own 'SMs Active' counter (dashed): a kernel "
                    "that occupies few SMs keeps the GPU busy but the SMs idle. Bottom: each "
                    "link counter's mean throughput (bar) and its highest sample (tick) in GB/s, "
                    "with the link's peak (diamond) where known (link_utilization).")
    reasons = sorted({f"{r['counter']}: {r['reason']}." for r in links if r["reason"]})
    item.notes += reasons
    return fig


def _sm_active(ax, bins: list[dict], item: Item) -> None:
    ranks = sorted({(r["rank"], r["device_id"]) for r in bins})
    origin = min(r["bin_start_ns"] for r in bins)
    div, unit = _time_unit(max(r["bin_end_ns"] for r in bins) - origin)
    for i, key in enumerate(ranks[:MOST_RANKS]):
        mine = sorted((r for r in bins if (r["rank"], r["device_id"]) == key), key=lambda r: r["bin"])
        x = [((r["bin_start_ns"] + r["bin_end_ns"]) / 2 - origin) / div for r in mine]
        colour = PALETTE[i % len(PALETTE)]
        ax.plot(x, [r["busy_pct"] for r in mine], color=colour, linewidth=1.0,
                label=f"rank {key[0]} busy")
        ax.plot(x, [r["sm_active_pct"] for r in mine], color=colour, linewidth=1.0,
                linestyle="--", label=f"rank {key[0]} SMs active")
    ax.set_ylim(0, 105)
    ax.set_ylabel("% of the bin")
    ax.set_xlabel(f"time since the first bin ({unit})")
    if len(ranks) > MOST_RANKS:
        item.notes.append(f"The first {MOST_RANKS} of {len(ranks)} GPUs are drawn.")


def _link_bars(ax, links: list[dict]) -> None:
    shown = sorted(links, key=lambda r: (r["host"] or "", r["rank"] is None, r["rank"] or 0,
                                         r["device"], r["counter"]))
    positions = list(range(len(shown)))
    ax.barh(positions, [r["mean_gbps"] for r in shown], height=0.6,
            color=[PALETTE[["NVLink", "PCIe"].index(r["link"]) if r["link"] in ("NVLink", "PCIe")
                           else 3] for r in shown])
    ax.scatter([r["max_gbps"] for r in shown], positions, marker="|", s=40, color="black",
               linewidths=0.8, zorder=3)
    peaks = [(p, r["peak_gbps"]) for p, r in zip(positions, shown) if r["peak_gbps"] is not None]
    ax.scatter([g for _, g in peaks], [p for p, _ in peaks], marker="D", s=12, color="white",
               edgecolors="black", linewidths=0.7, zorder=3)
    labels = [(f"rank {r['rank']}" if r["rank"] is not None else f"{r['host']} {r['device']}")
              + f" {r['link']} {r['direction']}" for r in shown]
    _thin_ticks(ax, positions, labels, most=24)
    ax.invert_yaxis()
    ax.set_xlabel("GB/s (one direction)")
