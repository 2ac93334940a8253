"""Drawing helpers shared by the figures: colours, units, legends, stacked shares, saving."""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

from .. import __version__
from ..atomic import written_whole
from .model import Item, Options


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "run"


# The temporal breakdown parts, in stacking order: metric column, legend label, colour
# (Okabe-Ito, distinguishable with colour-blindness; idle is a light grey).
PARTS = (
    ("compute_pct", "compute", "#009E73"),
    ("exposed_comm_pct", "exposed comm", "#D55E00"),
    ("exposed_mem_pct", "exposed memory", "#0072B2"),
    ("exposed_other_pct", "other", "#CC79A7"),
    ("idle_pct", "idle", "#D0D0D0"),
)
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
           "#000000", "#999999", "#882255")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")

_RC = {
    "font.size": 7,
    "axes.titlesize": 8,
    "axes.labelsize": 7,
    "xtick.labelsize": 6.5,
    "ytick.labelsize": 6.5,
    "legend.fontsize": 6.5,
    "legend.title_fontsize": 6.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.hashsalt": "tracewh",   # stable ids: the same data gives the same SVG
    "svg.fonttype": "path",      # the SVG looks the same without the fonts installed
}


def _figure(options: Options):
    from matplotlib.figure import Figure

    return Figure(figsize=options.size, dpi=options.dpi, layout="constrained")


def _time_unit(max_ns: float) -> tuple[float, str]:
    """A divisor and unit that keep the axis numbers readable."""
    if max_ns >= 1e9:
        return 1e9, "s"
    if max_ns >= 1e6:
        return 1e6, "ms"
    if max_ns >= 1e3:
        return 1e3, "µs"
    return 1.0, "ns"


def _fmt_ns(value: float | None) -> str:
    if value is None:
        return "n/a"
    div, unit = _time_unit(abs(value))
    return f"{value / div:.3g} {unit}"


def _fmt_bytes(value: float, _pos=None) -> str:
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if value >= size:
            return f"{value / size:.3g}{unit}"
    return f"{value:.3g}B"


def _pct(value) -> float:
    return 0.0 if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _outside_legend(fig, ax, ncols: int | None = None, title: str | None = None,
                    last: tuple[str, ...] = ()):
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    pairs = sorted(zip(handles, labels),  # stable: entries named in `last` move to the end
                   key=lambda pair: any(pair[1].startswith(prefix) for prefix in last))
    handles, labels = [h for h, _ in pairs], [lab for _, lab in pairs]
    # as many columns as the figure's width holds, each as wide as the widest label plus its
    # handle and spacing (ten runs' legend was cut off); a label longer than a whole line is
    # cut in the middle, where run names of a sweep differ least
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextPath

    size = FontProperties(size=rcParams["legend.fontsize"]).get_size_in_points()
    width, extra = fig.get_figwidth() * 72 - 2 * size, 3.4 * size  # handle, gap, padding

    def points(text: str) -> float:
        return TextPath((0, 0), text, size=size).get_extents().width

    most = max(len(label) for label in labels)
    while most > 8 and max(points(_fit_label(lab, most)) for lab in labels) + extra > width:
        most -= 4
    labels = [_fit_label(label, most) for label in labels]
    fits = max(1, int(width // (max(points(label) for label in labels) + extra)))
    ncols = min(ncols or min(len(labels), 5), fits)
    fig.legend(handles, labels, loc="outside upper center", ncols=ncols, frameon=False,
               title=title, handlelength=1.2, columnspacing=1.0)


def _fit_label(text: str, most: int) -> str:
    """`text` in at most `most` characters, cut in the middle: a sweep's run names share
    their start and differ at the end (fsdp_8nodes_seq1024, fsdp_8nodes_seq2048)."""
    if len(text) <= most:
        return text
    head = (most - 1) // 2
    return text[:head] + "…" + text[len(text) - (most - 1 - head):]


def _rank_labels(ranks: list, marked: set | None = None) -> list[str]:
    marked = marked or set()
    return [("all ranks" if r is None else f"rank {r}") + (" *" if r in marked else "")
            for r in ranks]


def _thin_ticks(ax, positions: list[float], labels: list[str], axis: str = "y", most: int = 16):
    """At most `most` tick labels, evenly spread."""
    step = max(1, math.ceil(len(positions) / most))
    chosen = list(range(0, len(positions), step))
    setter = ax.set_yticks if axis == "y" else ax.set_xticks
    setter([positions[i] for i in chosen], [labels[i] for i in chosen])


def _stacked_parts(ax, labels: list[str], rows: list[dict], parts=PARTS) -> None:
    """Horizontal 100% bars, one per row, stacked in `parts` order (column, label, colour of
    the shares); first row on top."""
    positions = list(range(len(rows)))
    left = [0.0] * len(rows)
    for column, label, colour in parts:
        values = [_pct(row.get(column)) for row in rows]
        ax.barh(positions, values, left=left, color=colour, label=label, height=0.75,
                edgecolor="white", linewidth=0.3)
        left = [a + b for a, b in zip(left, values)]
    _thin_ticks(ax, positions, labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of GPU window")


def _short(name: str, most: int = 38) -> str:
    return name if len(name) <= most else name[: most - 1] + "…"


def _phase_labels(names: list[str]) -> tuple[dict[str, str], str]:
    """Phase names without the owner they all share (DeepSpeedEngine.forward, .backward,
    ._take_model_step -> forward, backward, _take_model_step: cut at 20 characters, the shared
    start was all a label showed), and that owner ('' when they share none), for a title."""
    owners = {n.rpartition(".")[0] for n in names}
    owner = owners.pop() if len(owners) == 1 and len(names) > 1 else ""
    # matplotlib leaves out of legends every label starting with '_' (_take_model_step went
    # missing): a zero-width space in front shows the same name
    return {n: _visible(n[len(owner) + 1:] if owner else n) for n in names}, owner


def _visible(label: str) -> str:
    return "\u200b" + label if label.startswith("_") else label


def _tick_log_ends(fig) -> None:
    """A log y axis starts at a labelled value (1, 2 or 5 x 10^k) below its lowest point: one
    spanning 105-330 GB/s had its minor ticks at 200 and 300 only, nothing under the points."""
    for ax in fig.axes:
        low, high = ax.get_ylim()
        if ax.get_yscale() != "log" or low <= 0:
            continue
        decade = 10 ** math.floor(math.log10(low))
        nice = max(m * decade for m in (1, 2, 5) if m * decade <= low)
        ax.set_ylim(nice, high)


def _save(fig, item: Item, out: Path, options: Options) -> None:
    _tick_log_ends(fig)
    for fmt in options.formats:
        path = out / f"{item.key}.{fmt}"
        with written_whole(path, "write the report") as scratch:
            fig.savefig(scratch, format=fmt, dpi=options.dpi, metadata=_metadata(fmt))
        item.files[fmt] = path
        # the first save laid the figure out; keep those positions for the other formats
        # (constrained layout is much of the drawing time and gives the same answer again)
        fig.set_layout_engine("none")
    if "svg" in item.files:
        item.svg = item.files["svg"].read_bytes()
    else:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="svg", metadata=_metadata("svg"))
        item.svg = buffer.getvalue()


def _metadata(fmt: str) -> dict:
    creator = f"tracewh {__version__} report"
    if fmt == "svg":
        return {"Date": None, "Creator": creator}
    if fmt == "png":
        return {"Software": creator}
    return {"Creator": creator}
