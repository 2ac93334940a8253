"""`tracewh report`: one offline HTML page of figures, each drawn from a metric's result.

Every number on a figure comes from a metric (sql/metrics/*.sql) run by `Session.query`. Python only lays the
returned rows out: it picks columns, orders bars, converts ns to ms for the axis and stacks
bars; it never aggregates, joins or derives a metric of its own. The page lists which metric
(and version, and parameters) each figure came from.

Output, in DIR:
    index.html                     self-contained: CSS inline, figures inlined as SVG data URIs,
                                   no script, no network
    <figure>[_<run>].png/.svg/.eps each figure as a file, at --size inches and --dpi

Figures (one per run where it says "per run"):
    breakdown_ranks_<run>   temporal_breakdown        compute / exposed comm / memory / other /
                                                      idle as % of each rank's GPU window
    breakdown_runs          scaling                   the same shares, one bar per run
    scaling                 scaling                   shares side by side; caption = bottleneck
    overlap_<run>           comm_comp_overlap         comm time hidden under compute, per rank
    bandwidth_<run>         collective_bandwidth      busbw against message size (log-log)
    (table) traffic_<run>   traffic_distribution      bytes, count, time, busbw by size bucket
    straggler_<run>         straggler, traffic_dist.  mean wait per rank x collective kind
    iteration_time_<run>    iteration_time            step time per rank and across ranks
    phases_<run>            nvtx_phases, throughput   phase times per iteration (+ tokens/s)
    memory_<run>            memory_by_phase           min/mean/max of a sampled measure per phase
    memory_timeline_<run>   memory_timeline, memory_peaks, memory_by_phase
                                                      allocated/reserved over time per rank,
                                                      phases shaded, step peaks marked
    memory_free_<run>       memory_by_phase           free memory per phase of the last step,
                                                      horizontal bars per rank and source
    log_phases_<series>     log_phases                forward / backward / step medians per
                                                      configuration of a series of training logs,
                                                      with the TFLOP/s the logs print
    diff                    breakdown_diff            asked for two runs (--run A --run B): step time and
                                                      breakdown per step side by side; caption =
                                                      the largest contributor to the change
    (table) diff_ops        run_diff                  the ops whose time changed most

A figure whose metric returns no rows (or cannot run) is left out with a one-line note.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import math
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Callable, Iterable

from . import __version__
from .atomic import written_whole
from .errors import StorageFault, TracewhError, storage_fault
from .metrics import find_metric, list_metrics
from .warehouse import query_arrow

FORMATS = ("png", "svg", "eps")
DEFAULT_SIZE = (5.0, 3.0)
DEFAULT_FORMATS = ("png", "svg")
DEFAULT_DPI = 200
SECOND_AXES = ("auto", "tokens", "samples", "none")
_TEMPLATES = Path(__file__).resolve().parent / "report_templates"

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


class ReportError(TracewhError):
    """The report cannot be made (bad option, unknown run, unwritable folder)."""


class Skip(Exception):
    """A figure is left out; the message (one line) says why."""


# --- what the page is made of ---------------------------------------------------------------

@dataclass
class MetricUse:
    """One metric query behind a figure: what ran, at which version, with which parameters."""
    name: str
    version: int
    params: dict

    def describe(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.name} v{self.version}" + (f" ({args})" if args else "")


@dataclass
class Item:
    """A figure (or a table) of the page; `skipped` holds the reason when it is left out."""
    key: str                       # file stem, unique in the report
    title: str
    section: str
    run_id: str | None = None
    uses: list[MetricUse] = field(default_factory=list)
    caption: str = ""
    notes: list[str] = field(default_factory=list)   # smaller print under the caption
    files: dict[str, Path] = field(default_factory=dict)
    svg: bytes | None = None       # what the page embeds
    table_html: str = ""           # a table item has this instead of a figure
    skipped: str | None = None
    failed: bool = False           # skipped because drawing raised (a bug or a broken metric)


@dataclass
class Report:
    out: Path
    index: Path
    items: list[Item]
    runs: list[str]
    seconds: float

    @property
    def figures(self) -> list[Item]:
        return [i for i in self.items if i.files]

    @property
    def skipped(self) -> list[Item]:
        return [i for i in self.items if i.skipped]

    @property
    def problems(self) -> list[str]:
        return [f"{i.title}: {i.skipped}" for i in self.items if i.failed]


@dataclass
class Options:
    size: tuple[float, float] = DEFAULT_SIZE
    formats: tuple[str, ...] = DEFAULT_FORMATS
    dpi: int = DEFAULT_DPI
    second_axis: str = "auto"


def parse_size(text: str) -> tuple[float, float]:
    """'5x3' (inches) -> (5.0, 3.0)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*[xX×,]\s*(\d+(?:\.\d+)?)\s*", text or "")
    if not match:
        raise ReportError(f"--size {text!r}: write WIDTHxHEIGHT in inches, e.g. 5x3")
    width, height = float(match[1]), float(match[2])
    if not (1 <= width <= 50 and 1 <= height <= 50):
        raise ReportError(f"--size {text!r}: width and height must be 1 to 50 inches")
    return width, height


def parse_formats(text: str) -> tuple[str, ...]:
    """'png,svg,eps' -> ('png', 'svg', 'eps'), checked."""
    formats = tuple(dict.fromkeys(f.strip().lower().lstrip(".") for f in (text or "").split(",")
                                  if f.strip()))
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        raise ReportError(f"--formats {text!r}: choose from {', '.join(FORMATS)} "
                          "(comma-separated, e.g. png,svg,eps)")
    return formats


# --- running metrics ------------------------------------------------------------------------

class _Metrics:
    """Session.query with its provenance; metric files are loaded once."""

    def __init__(self, session, given: dict[str, str] | None = None):
        self.session = session
        self._loaded: dict[str, object] = {}
        # --param NAME=VALUE: to every metric declaring NAME, over the figure's own value
        # (run and rank stay the figure's: --run chooses the runs)
        self.given = {k: v for k, v in (given or {}).items() if k not in ("run", "rank")}

    def run(self, name: str, **params) -> tuple[list[dict], MetricUse]:
        if name not in self._loaded:
            self._loaded[name] = find_metric(name)
        metric = self._loaded[name]
        declared = {p.name for p in metric.params}
        params = {**params, **{k: v for k, v in self.given.items() if k in declared}}
        params = {k: v for k, v in params.items() if v is not None}
        rows = self.session.query(metric, params).to_pylist()
        return rows, MetricUse(metric.name, metric.version, params)


def _rows(ctx: "_Context", item: Item, name: str, **params) -> list[dict]:
    """Run a metric for `item`, recording it; a metric that cannot run leaves the figure out."""
    try:
        rows, use = ctx.metrics.run(name, **params)
    except TracewhError as exc:  # a broken metric, or a --param this warehouse cannot answer
        raise Skip(f"metric {name} unavailable: {exc}") from None
    item.uses.append(use)
    return rows


# --- drawing helpers ------------------------------------------------------------------------

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


# --- the figures ----------------------------------------------------------------------------

@dataclass
class _Context:
    metrics: _Metrics
    options: Options
    runs: list[str]


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
               label=_short(phase), edgecolor="white", linewidth=0.3)
        bottom = [a + b for a, b in zip(bottom, values)]
    ax.scatter(positions, [(step_ns[it] or 0) / div for it in iterations], marker="_", s=200,
               color="black", linewidths=1.2, label="iteration", zorder=3)
    _thin_ticks(ax, positions, [str(it) for it in iterations], axis="x", most=20)
    ax.set_xlabel("iteration")
    ax.set_ylabel(f"phase time ({unit})")
    ax.set_title(f"{run}: phases per iteration (rank {rank})")
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


def _short(name: str, most: int = 38) -> str:
    return name if len(name) <= most else name[: most - 1] + "…"


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
            twin = ax.twinx()
            twin.axhline(row[column], color="#882255", linewidth=1.2, linestyle=":",
                         label=f"{label} (run, median step)")
            twin.set_ylabel(label, color="#882255")
            twin.set_ylim(0, row[column] * 1.25)
            twin.spines["right"].set_visible(True)
            handles, labels = twin.get_legend_handles_labels()
            for h, lab in zip(handles, labels):
                ax.plot([], [], color=h.get_color(), linestyle=":", label=lab)
            item.notes.append(f"Second axis: {label} of the run from throughput "
                              f"({row[column]:.4g}; one value per run, not per iteration).")
            return
    reason = (row or {}).get("reason") or "throughput returned no row for this run"
    item.notes.append(f"No second axis: {reason}.")


def fig_memory(ctx: _Context, item: Item, run: str):
    try:
        rows = _rows(ctx, item, "memory_by_phase", run=run)
    except Skip as exc:
        raise Skip(f"no samples ({exc})") from None
    rows = [r for r in rows if r["samples"] or r["value_at_start"] is not None]
    if not rows:
        raise Skip("no samples: no series (tracewh ingest --series) covers this run's GPUs "
                   "during its phases")
    measures = list(dict.fromkeys(r["measure"] for r in rows))
    measure = next((m for m in measures if "free" in m.lower()), measures[0])
    rank = min(r["rank"] for r in rows if r["measure"] == measure)
    rows = [r for r in rows if r["measure"] == measure and r["rank"] == rank]
    phases = list(dict.fromkeys(r["phase"] for r in rows))
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
                        color=colour, linewidth=0.8, label=_short(phase))
        unsampled = [(x, r) for x, r in points if not r["samples"]]
        if unsampled:
            ax.scatter([x for x, _ in unsampled], [r["value_at_start"] for _, r in unsampled],
                       marker="o", s=10, facecolors="none", edgecolors=colour,
                       linewidths=0.8, label=None if sampled else _short(phase))
    positions = list(range(len(rows)))
    labels = [str(r["iteration"]) for r in rows]
    _thin_ticks(ax, positions, labels, axis="x", most=20)
    ax.set_xlabel("iteration (phases in time order)")
    ax.set_ylabel(measure)
    ax.set_title(f"{run}: {measure} by phase (rank {rank})")
    _outside_legend(fig, ax, ncols=min(len(phases), 4))
    item.caption = (f"Samples of {measure} taken while each phase ran on rank {rank}: mean "
                    "(dot) and min–max (bar). A hollow dot is the last sample before a phase "
                    "shorter than the sampling interval.")
    if len(measures) > 1:
        item.notes.append(f"Other measures: {', '.join(m for m in measures if m != measure)} "
                          "(tracewh query memory_by_phase --param measure=...).")
    return fig


# --- memory over time and free memory per phase (memory_timeline, memory_peaks, memory_by_phase)

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
    colours = {name: PALETTE[(i + 2) % len(PALETTE)] for i, name in enumerate(names)}
    labelled = set()  # one legend entry per phase
    for ax, rank in zip(axes, shown):
        spans = dict.fromkeys((r["phase"], r["start_ns"], r["end_ns"])
                              for r in phases if r["rank"] == rank)
        for phase, start, end in spans:
            ax.axvspan((start - origin) / div, (end - origin) / div, color=colours[phase],
                       alpha=0.18, linewidth=0,
                       label=None if phase in labelled else _short(phase))
            labelled.add(phase)
        if points:
            _memory_lines(ax, [r for r in points if r["rank"] == rank],
                          [r for r in peaks if r["rank"] == rank], origin, div)
        else:
            _sampled_steps(ax, [r for r in phases if r["rank"] == rank
                                and r["source"] == "samples"], origin, div)
        ax.set_ylabel(f"rank {rank}")
    axes[-1].set_xlabel(f"time since the first point ({unit})")
    _outside_legend(fig, axes[0])  # every panel draws the same entries
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
    ax.set_ylim(bottom=0)


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
        ys = list(range(len(bars)))[::-1]
        ax.barh(ys, [r["min_value"] for r in bars], height=0.7,
                color=[PALETTE[(names.index(r["phase"]) + 2) % len(PALETTE)] for r in bars])
        ax.scatter([r["mean_value"] for r in bars], ys, marker="|", s=40, color="#000000",
                   zorder=3, label="mean")
        ax.set_yticks(ys, [f"rank {r['rank']} {_short(r['phase'], 20)}" for r in bars])
        if source == "allocator":
            from matplotlib.ticker import FuncFormatter

            ax.xaxis.set_major_formatter(FuncFormatter(_fmt_bytes))
        ax.set_xlabel(f"{measure} ({source}), least during the phase")
    _outside_legend(fig, axes[0])
    axes[0].set_title(f"{run}: free GPU memory per phase, step {last}", loc="left")
    item.caption = ("Bar: the least free GPU memory while each phase of the run's last step ran "
                    "(tick: the mean), per rank; from allocator events (device memory minus what "
                    "the allocator holds) and from sampled series, side by side where the run "
                    "has both.")
    return fig


# --- how close to the hardware: roofline and TFLOP/s (op_efficiency, throughput) ------------

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
    twin.plot(positions, values, color="#882255", linestyle=":", marker="o", markersize=4,
              linewidth=1.2)
    twin.set_ylabel("TFLOP/s per GPU", color="#882255")
    twin.set_ylim(0, max(values) * 1.25)
    twin.spines["right"].set_visible(True)
    ax.plot([], [], color="#882255", linestyle=":", marker="o", label="TFLOP/s per GPU")
    ax.set_title("GPU time and TFLOP/s per run")
    _outside_legend(fig, ax)
    item.caption = ("The temporal breakdown of each run (as in 'Temporal breakdown per run') "
                    "with the FLOPs its op models count per GPU and second (throughput's "
                    "tflops_per_gpu, median step) as a dotted line.")
    missing = [r["run_id"] for r in rows if r["run_id"] not in rates]
    if missing:
        item.notes.append(f"No TFLOP/s (no modelled ops with shapes): {', '.join(missing)}.")
    return fig


# --- assembling the report ------------------------------------------------------------------

def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "run"


# the timers drawn for a series, in stacking order: the first a run's log has, by phase
LOG_PHASES = (("forward", ("fwd", "fwd_microstep", "forward")),
              ("backward", ("bwd", "bwd_microstep", "backward")),
              ("step", ("step", "step_microstep", "optimizer")))


def fig_log_phases_series(ctx: _Context, item: Item, series: str):
    """Horizontal bars, one per configuration of the series, stacked forward / backward / step
    (median over kept steps), and the TFLOP/s the logs print as a dotted line on a second axis."""
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
        twin = ax.twiny()
        twin.plot([tflops.get(c[3]) for c in configs], positions, linestyle=":", marker="o",
                  color="black", label="TFLOP/s")
        twin.set_xlabel("TFLOP/s (as the logs print)")
    else:
        item.notes.append("No TFLOP/s line: the logs print none.")
    item.caption = ("Median forward, backward and step time over the kept steps of each run's "
                    "training log (the first step left out as warm-up), one bar per "
                    f"configuration of the series; only {configs[0][1]} differs between them.")
    _outside_legend(fig, ax, ncols=3)
    return fig


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
    plan += per_run("5. Stragglers", "straggler", "Straggler heatmap", fig_straggler)
    plan += per_run("6. Iteration time", "iteration_time", "Iteration time per step",
                    fig_iteration_time)
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
    return plan


# --- two runs: what changed ---------------------------------------------------------------------

DIFF_SECTION = "9. What changed between the two runs"
DIFF_TOP = 15


def _diff_plan(base: str, test: str) -> list[tuple[str, str, str, str | None, Callable]]:
    """The diff section, for a report asked for two runs (the first given is the base)."""
    return [(DIFF_SECTION, "diff", f"{base} -> {test}: step time and breakdown", None,
             lambda ctx, item: fig_diff(ctx, item, base, test)),
            (DIFF_SECTION, "diff_ops", f"{base} -> {test}: the largest changes by op", None,
             lambda ctx, item: table_diff(ctx, item, base, test))]


def fig_diff(ctx: _Context, item: Item, base: str, test: str):
    rows = _rows(ctx, item, "breakdown_diff", base=base, test=test)
    bars = [r for r in rows if r["section"] in ("step", "breakdown")
            and (r["base_value"] is not None or r["test_value"] is not None)]
    if not bars:
        raise Skip("breakdown_diff returned nothing to compare: no GPU activity in either run")
    div, unit = _time_unit(max(abs(v or 0) for r in bars for v in (r["base_value"], r["test_value"])))
    fig = _figure(ctx.options)
    ax = fig.add_subplot()
    positions = list(range(len(bars)))
    for offset, side, run, colour in ((-0.2, "base_value", base, PALETTE[0]),
                                      (0.2, "test_value", test, PALETTE[1])):
        ax.barh([p + offset for p in positions], [(r[side] or 0) / div for r in bars],
                height=0.4, color=colour, label=run)
    _thin_ticks(ax, positions, [r["item"] for r in bars])
    ax.invert_yaxis()
    ax.set_xlabel(f"{unit} (step time; the breakdown per rank and step)")
    ax.set_title(f"{base} -> {test}")
    _outside_legend(fig, ax)
    item.caption = next((r["sentence"] for r in rows if r["sentence"]), "")
    for r in rows:
        if r["section"] == "overlap":
            item.notes.append(f"Communication hidden under compute: {_pct(r['base_value']):.1f}% "
                              f"-> {_pct(r['test_value']):.1f}%.")
        elif r["section"] in ("collective", "idle"):
            item.notes.append(f"{r['section']} {r['item']} per rank and step: "
                              f"{_fmt_ns(r['base_value'])} -> {_fmt_ns(r['test_value'])}.")
    return fig


def table_diff(ctx: _Context, item: Item, base: str, test: str):
    rows = _rows(ctx, item, "run_diff", base=base, test=test)[:DIFF_TOP]
    if not rows:
        raise Skip("run_diff found no ops in either run")
    columns = [("level", "level"), ("name", "name"), ("base_count", f"count in {base}"),
               ("test_count", f"count in {test}"), ("base_total_ns", f"time in {base}"),
               ("test_total_ns", f"time in {test}"), ("time_diff_ns", "difference"),
               ("time_class", "change")]
    count = lambda v: f"{v:g}"  # noqa: E731
    item.table_html = _table(rows, columns, {
        "name": lambda v: _short(v, 64), "base_count": count, "test_count": count, "base_total_ns": _fmt_ns,
        "test_total_ns": _fmt_ns, "time_diff_ns": _fmt_ns})
    item.caption = (f"The {len(rows)} ops whose total time changed most from {base} to {test} "
                    "(kernels, CPU ops, CUDA API calls and NVTX ranges, matched by name).")
    if rows[0]["per_step"]:
        item.notes.append("The runs hold different numbers of steps: counts and times are per "
                          "rank and iteration.")


def _save(fig, item: Item, out: Path, options: Options) -> None:
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


def build_report(session, out: str | Path, runs: Iterable[str] | None = None,
                 size: tuple[float, float] = DEFAULT_SIZE,
                 formats: Iterable[str] = DEFAULT_FORMATS, dpi: int = DEFAULT_DPI,
                 second_axis: str = "auto", db_label: str = "",
                 on_item: Callable[[Item], None] | None = None,
                 params: dict[str, str] | None = None) -> Report:
    """Draw every figure from the metrics `session` (session.Session) runs into `out` and write
    `out/index.html`; `params` go to every metric that declares them (phases, step_pattern,
    runs, ...)."""
    import matplotlib

    started = time.perf_counter()
    if second_axis not in SECOND_AXES:
        raise ReportError(f"--second-axis {second_axis!r}: choose from {', '.join(SECOND_AXES)}")
    options = Options(tuple(size), tuple(formats), int(dpi), second_axis)
    bad = [f for f in options.formats if f not in FORMATS]
    if bad:
        raise ReportError(f"unknown figure format(s) {', '.join(bad)}: choose from "
                          f"{', '.join(FORMATS)}")
    unknown = sorted(set(params or {}) - {p.name for m in list_metrics() for p in m.params})
    if unknown:
        raise ReportError(f"--param {unknown[0]}: no metric of the report takes it")
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise (storage_fault(exc, "create the report folder", out)
               or ReportError(f"{out}: cannot create the report folder: {exc.strerror}")) from None

    asked_for_two = bool(runs) and len(dict.fromkeys(runs)) == 2
    if runs:
        runs = list(dict.fromkeys(runs))
        session.check_runs(runs)
    else:
        runs = session.runs()
    inventory = _inventory(session.con)
    ctx = _Context(_Metrics(session, params), options, runs)

    items: list[Item] = []
    with matplotlib.rc_context(_RC):
        plan = ((_plan(runs, _series_to_draw(session.con, runs)) if runs else [])
                + (_diff_plan(*runs) if asked_for_two else []))
        for section, key, title, run, draw in plan:
            item = Item(key=key, title=title, section=section, run_id=run)
            try:
                fig = draw(ctx, item)
                if fig is not None:
                    _save(fig, item, out, options)
            except Skip as exc:
                item.skipped = str(exc)
            except StorageFault:  # a full disk sinks every figure after it: stop, say so once
                raise
            except Exception as exc:  # noqa: BLE001 - one figure must not sink the page
                item.skipped = f"could not draw ({type(exc).__name__}: {exc})"
                item.failed = True
            items.append(item)
            if on_item:
                on_item(item)

    index = out / "index.html"
    page = _page(items, inventory, runs, options, db_label)
    with written_whole(index, "write the report") as scratch:
        scratch.write_text(page, encoding="utf-8")
    return Report(out, index, items, runs, time.perf_counter() - started)


# --- the page -------------------------------------------------------------------------------

def _inventory(con) -> dict[str, list[dict]]:
    """Runs, ranks and sources as the public views list them (no computation)."""
    def rows(sql):
        return query_arrow(con, sql).to_pylist()

    return {
        "runs": rows("SELECT run_id, world_size, sources, batch_size, seq_len, gpus_per_node, "
                     "description FROM runs ORDER BY run_id"),
        "ranks": rows("SELECT run_id, rank, host, pid, device_id, backend, rank_source "
                      "FROM ranks ORDER BY run_id, rank"),
        "sources": rows("SELECT file_id, run_id, path, format, tool_version, schema_version, "
                        "bytes, rows, has_utc, warnings FROM sources ORDER BY run_id, path"),
    }


def _table(rows: list[dict], columns: list[tuple[str, str]], formats: dict | None = None) -> str:
    formats = formats or {}
    head = "".join(f"<th>{html.escape(title)}</th>" for _, title in columns)
    body = []
    for row in rows:
        cells = []
        for column, _ in columns:
            value = row.get(column)
            text = formats[column](value) if column in formats else ("" if value is None
                                                                     else str(value))
            cells.append(f"<td>{html.escape(text)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (f'<table class="data"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def _page(items: list[Item], inventory: dict, runs: list[str], options: Options,
          db_label: str) -> str:
    chosen = set(runs)
    run_rows = [r for r in inventory["runs"] if r["run_id"] in chosen]
    rank_rows = [r for r in inventory["ranks"] if r["run_id"] in chosen]
    source_rows = [r for r in inventory["sources"] if r["run_id"] in chosen]
    parts = ['<section id="runs"><h2>Runs</h2>']
    if run_rows:
        parts.append(_table(run_rows, [("run_id", "run"), ("world_size", "ranks"),
                                       ("sources", "sources"), ("batch_size", "batch size"),
                                       ("seq_len", "sequence length"),
                                       ("gpus_per_node", "GPUs per node"),
                                       ("description", "description")]))
    else:
        parts.append('<p class="skipped">The warehouse holds no runs: ingest traces first '
                     "(tracewh ingest PATH).</p>")
    rank_table = _table(rank_rows, [("run_id", "run"), ("rank", "rank"), ("host", "host"),
                                    ("pid", "pid"), ("device_id", "device"),
                                    ("backend", "backend"), ("rank_source", "rank from")])
    parts.append(f"<details{' open' if len(rank_rows) <= 32 else ''}><summary>Ranks "
                 f"({len(rank_rows)})</summary>{rank_table}</details>")
    source_table = _table(source_rows, [("run_id", "run"), ("path", "file"),
                                        ("format", "format"), ("tool_version", "tool"),
                                        ("schema_version", "schema"), ("bytes", "size"),
                                        ("rows", "rows"), ("has_utc", "UTC")],
                          {"path": lambda p: Path(p).name if p else "",
                           "bytes": lambda b: "" if b is None else _fmt_bytes(b)})
    parts.append(f"<details{' open' if len(source_rows) <= 32 else ''}><summary>Sources "
                 f"({len(source_rows)})</summary>{source_table}</details></section>")

    warnings = [f"{Path(s['path']).name} ({s['run_id']}): {s['warnings']}"
                for s in source_rows if s.get("warnings")]
    left_out = [f"{i.title}: {i.skipped}" for i in items if i.skipped]
    parts.append('<section id="warnings"><h2>Warnings</h2>')
    if warnings or left_out:
        parts.append("<ul>" + "".join(f"<li>{html.escape(w)}</li>" for w in warnings)
                     + "".join(f'<li class="skipped">Left out: {html.escape(w)}</li>'
                               for w in left_out) + "</ul>")
    else:
        parts.append("<p>None: every source loaded cleanly and every figure was drawn.</p>")
    parts.append("</section>")

    section = None
    toc = []
    for item in items:
        if item.section != section:
            if section is not None:
                parts.append("</div></section>")
            section = item.section
            anchor = _slug(section.lower())
            toc.append(f'<a href="#{anchor}">{html.escape(section)}</a>')
            parts.append(f'<section id="{anchor}"><h2>{html.escape(section)}</h2>'
                         '<div class="grid">')
        parts.append(_item_html(item))
    if section is not None:
        parts.append("</div></section>")

    generated = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    drawn = sum(1 for i in items if i.svg)
    summary = (f"{len(runs)} run(s) · {drawn} figure(s), {len(left_out)} left out · "
               f"figures {options.size[0]:g}×{options.size[1]:g} in at {options.dpi} dpi "
               f"({', '.join(options.formats)}) · tracewh {__version__} · {generated}")
    template = Template((_TEMPLATES / "page.html").read_text(encoding="utf-8"))
    return template.substitute(
        title=html.escape(f"tracewh report: {', '.join(runs) or 'empty warehouse'}"),
        css=(_TEMPLATES / "report.css").read_text(encoding="utf-8"),
        heading="tracewh report",
        db=html.escape(db_label),
        summary=html.escape(summary),
        toc=" · ".join(['<a href="#runs">Runs</a>', '<a href="#warnings">Warnings</a>'] + toc),
        body="\n".join(parts),
    )


def _item_html(item: Item) -> str:
    title = html.escape(item.title)
    source = "; ".join(html.escape(u.describe()) for u in item.uses) or "none"
    anchor = html.escape(item.key)
    if item.skipped:
        return (f'<figure class="left-out" id="{anchor}"><figcaption><b>{title}</b>: left out '
                f"- {html.escape(item.skipped)}</figcaption></figure>")
    if item.table_html:
        visual = f'<div class="table-wrap">{item.table_html}</div>'
    else:
        data = base64.b64encode(item.svg or b"").decode("ascii")
        visual = (f'<img class="figure" src="data:image/svg+xml;base64,{data}" alt="{title}">')
    links = " · ".join(f'<a href="{html.escape(p.name)}">{fmt.upper()}</a>'
                       for fmt, p in item.files.items())
    notes = "".join(f'<span class="note">{html.escape(n)}</span>' for n in item.notes)
    return (f'<figure id="{anchor}">{visual}<figcaption><b>{title}.</b> '
            f"{html.escape(item.caption)}{notes}"
            f'<span class="source">metric: {source}'
            f"{' · files: ' + links if links else ''}</span></figcaption></figure>")


def print_summary(report: Report, stream=None) -> None:
    """One line per figure and reason left out, naming the runs it applies to (19 runs with
    the same five figures left out are five lines, not 95)."""
    stream = stream or sys.stderr
    grouped: dict[tuple[str, str], list[str]] = {}
    for item in report.skipped:
        title = item.title.removesuffix(f": {item.run_id}") if item.run_id else item.title
        reason = item.skipped.replace(item.run_id, "RUN") if item.run_id else item.skipped
        grouped.setdefault((title, reason), []).append(item.run_id)
    for (title, reason), runs in grouped.items():
        named = [r for r in runs if r]
        where = ""
        if len(named) == 1:
            where = f" ({named[0]})"
        elif named:
            where = f" ({len(named)} runs: {', '.join(named[:3])}{', ...' if len(named) > 3 else ''})"
        print(f"left out {title}{where}: {reason}", file=stream)
    print(f"wrote {report.index}: {len(report.figures)} figure(s), {len(report.skipped)} left "
          f"out, in {report.seconds:.1f} s", file=stream)
