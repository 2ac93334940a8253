"""What a report is made of (items, options, the metric uses behind each figure) and how a
figure runs its metrics (through the Session)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import TracewhError
from ..metrics import find_metric

FORMATS = ("png", "svg", "eps")
DEFAULT_SIZE = (5.0, 3.0)
DEFAULT_FORMATS = ("png", "svg")
DEFAULT_DPI = 200
SECOND_AXES = ("auto", "tokens", "samples", "none")


class ReportError(TracewhError):
    """The report cannot be made (bad option, unknown run, unwritable folder)."""


class Skip(Exception):
    """A figure is left out; the message (one line) says why."""


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


LINE_STYLES = {"solid": "-", "dashed": "--", "dotted": ":", "dashdot": "-."}


@dataclass(frozen=True)
class Line:
    """How the lines on a second axis are drawn (TFLOP/s, tokens/s): a style of LINE_STYLES and a
    matplotlib color."""
    style: str = "dotted"
    color: str = "tab:red"

    @property
    def linestyle(self) -> str:
        return LINE_STYLES[self.style]


@dataclass
class Options:
    size: tuple[float, float] = DEFAULT_SIZE
    formats: tuple[str, ...] = DEFAULT_FORMATS
    dpi: int = DEFAULT_DPI
    second_axis: str = "auto"
    line: Line = field(default_factory=Line)


def parse_line(text: str) -> Line:
    """'dotted,red' or 'dashed' or '#882255' -> Line; either part may be left out."""
    style, color = Line.style, Line.color
    for part in (p.strip() for p in (text or "").split(",") if p.strip()):
        if part in LINE_STYLES:
            style = part
        else:
            from matplotlib.colors import is_color_like

            if not is_color_like(part):
                raise ReportError(f"--line {text!r}: {part!r} is neither a style "
                                  f"({', '.join(LINE_STYLES)}) nor a color (red, tab:red, #882255)")
            color = part
    return Line(style, color)


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


@dataclass
class _Context:
    metrics: _Metrics
    options: Options
    runs: list[str]
