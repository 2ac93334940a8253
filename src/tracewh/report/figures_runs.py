"""Figures of where GPU time goes: temporal breakdown per rank and per run, scaling, overlap."""

from __future__ import annotations

from .draw import (
    PALETTE, PARTS, _figure, _fit_label, _fmt_ns, _outside_legend, _pct, _rank_labels,
    _stacked_parts, _thin_ticks, _time_unit,
)
from .model import Item, Skip, _Context, _rows


def fig_breakdown_ranks(ctx: _Context, item: Item, run: str):
    rows = [r for r in _rows(ctx, item, "temporal_breakdown", run=run) if r["iteration"] is None]
    if not rows:
        raise Skip("temporal_breakdown returned no rows: the run has no GPU operations")
    fig = _figure(ctx.options)
    ax = fig.add_subplot()
    _stacked_parts(ax, _rank_labels([r["rank"] for r in rows]), rows)
    ax.set_title(f"{run}: GPU time per rank")
    _outside_legend(fig, ax)
    windows = [r["window_ns"] for r in rows if r["window_ns"]]
    item.caption = ("Each rank's GPU window W (first GPU operation start to last end) split "
                    "into compute, communication not hidden under compute, memory copies not "
                    "hidden under either, other GPU work and idle; the five sum to W.")
    if windows:
        item.notes.append(f"W per rank: {_fmt_ns(min(windows))} to {_fmt_ns(max(windows))}.")
    return fig


def _scaling_rows(ctx: _Context, item: Item) -> list[dict]:
    rows = _rows(ctx, item, "scaling", runs=",".join(ctx.runs) if ctx.runs else None)
    rows = [r for r in rows if r["window_ns"]]
    if not rows:
        raise Skip("scaling returned no run with GPU activity")
    return rows


def _run_label(row: dict, one_line: bool = False) -> str:
    """A run's name with its label and step time; on one line, the name cut to 24 characters,
    for figures with many runs (two-line labels of ten runs overlapped)."""
    label = _fit_label(row["run_id"], 24) if one_line else row["run_id"]
    extra = [row["label"]] if row.get("label") else []
    if row.get("step_ns"):
        extra.append(f"{_fmt_ns(row['step_ns'])}/step")
    return f"{label}{' ' if one_line else chr(10)}({', '.join(extra)})" if extra else label


def fig_breakdown_runs(ctx: _Context, item: Item):
    rows = _scaling_rows(ctx, item)
    fig = _figure(ctx.options)
    ax = fig.add_subplot()
    _stacked_parts(ax, [_run_label(r, one_line=len(rows) > 4) for r in rows], rows)
    ax.set_title("GPU time per run (summed over its ranks)")
    _outside_legend(fig, ax)
    item.caption = ("The temporal breakdown of every rank summed over the run's ranks, as a "
                    "share of the summed GPU windows; runs ordered by size.")
    return fig


def fig_scaling(ctx: _Context, item: Item):
    rows = _scaling_rows(ctx, item)
    fig = _figure(ctx.options)
    ax = fig.add_subplot()
    width = 0.8 / len(rows)
    for i, row in enumerate(rows):
        positions = [p - 0.4 + width * (i + 0.5) for p in range(len(PARTS))]
        ax.bar(positions, [_pct(row.get(c)) for c, _, _ in PARTS], width=width * 0.92,
               color=PALETTE[i % len(PALETTE)], label=_run_label(row).replace("\n", " "))
    ax.set_xticks(range(len(PARTS)), [label for _, label, _ in PARTS])
    ax.set_ylabel("% of GPU time")
    ax.set_ylim(0, 100)
    ax.set_title("Scaling: where GPU time goes, run by run")
    _outside_legend(fig, ax, ncols=min(len(rows), 3))
    item.caption = " ".join(
        f"{r['sentence']}." if r.get("sentence") and not r["sentence"].endswith(".")
        else (r.get("sentence") or "") for r in rows).strip()
    for row in rows:
        if row.get("exposed_by_collective"):
            item.notes.append(f"{row['run_id']}: exposed communication by collective: "
                              f"{row['exposed_by_collective']}.")
    return fig


def fig_overlap(ctx: _Context, item: Item, run: str):
    rows = _rows(ctx, item, "comm_comp_overlap", run=run)
    per_rank = [r for r in rows if r["rank"] is not None]
    if not per_rank or not any(r["comm_ns"] for r in per_rank):
        raise Skip("comm_comp_overlap found no communication kernels in this run")
    whole = next((r for r in rows if r["rank"] is None), None)
    div, unit = _time_unit(max(r["comm_ns"] or 0 for r in per_rank))
    fig = _figure(ctx.options)
    ax = fig.add_subplot()
    positions = list(range(len(per_rank)))
    hidden = [(r["overlap_ns"] or 0) / div for r in per_rank]
    exposed = [(r["exposed_comm_ns"] or 0) / div for r in per_rank]
    ax.barh(positions, hidden, color="#009E73", label="hidden under compute", height=0.75)
    ax.barh(positions, exposed, left=hidden, color="#D55E00", label="exposed", height=0.75)
    if len(per_rank) <= 32:
        for p, h, e, r in zip(positions, hidden, exposed, per_rank):
            text = "no comm" if r["overlap_pct"] is None else f"{r['overlap_pct']:.0f}%"
            ax.annotate(text, (h + e, p), xytext=(2, 0), textcoords="offset points",
                        va="center", fontsize=6)
    _thin_ticks(ax, positions, _rank_labels([r["rank"] for r in per_rank]))
    ax.invert_yaxis()
    ax.margins(x=0.12)
    ax.set_xlabel(f"communication kernel time ({unit})")
    overall = "" if whole is None or whole["overlap_pct"] is None else \
        f"\nall ranks: {whole['overlap_pct']:.1f}% of communication hidden"
    ax.set_title(f"{run}: comm / compute overlap{overall}")
    _outside_legend(fig, ax)
    item.caption = ("Per rank, the time communication kernels run (|∪comm|) split into the part "
                    "overlapping compute kernels and the exposed rest; the label is the hidden "
                    "share. The run's figure is time-weighted over its ranks.")
    return fig
