"""Figures of how close to the hardware: the roofline and TFLOP/s per run."""

from __future__ import annotations

from .draw import MARKERS, PALETTE, _figure, _outside_legend, _stacked_parts
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
