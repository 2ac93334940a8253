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

import time
from pathlib import Path
from typing import Callable, Iterable

from ..atomic import written_whole
from ..errors import StorageFault, storage_fault
from ..metrics import list_metrics
from .draw import _RC, _save
from .model import (
    DEFAULT_DPI, DEFAULT_FORMATS, DEFAULT_SIZE, FORMATS, Item, Line, Options, Report, ReportError,
    SECOND_AXES, Skip, _Context, _Metrics,
)
from .page import _inventory, _page
from .plan import _diff_plan, _plan, _series_to_draw
from .model import MetricUse, parse_formats, parse_line, parse_size
from .page import print_summary

# the package's API: build_report and what the CLI and notebooks take with it
__all__ = ["DEFAULT_SIZE", "FORMATS", "Item", "Line", "MetricUse", "Options", "Report",
           "ReportError", "Skip", "build_report", "parse_formats", "parse_line", "parse_size",
           "print_summary"]


def build_report(session, out: str | Path, runs: Iterable[str] | None = None,
                 size: tuple[float, float] = DEFAULT_SIZE,
                 formats: Iterable[str] = DEFAULT_FORMATS, dpi: int = DEFAULT_DPI,
                 second_axis: str = "auto", line: Line = Line(), db_label: str = "",
                 on_item: Callable[[Item], None] | None = None,
                 params: dict[str, str] | None = None) -> Report:
    """Draw every figure from the metrics `session` (session.Session) runs into `out` and write
    `out/index.html`; `params` go to every metric that declares them (phases, step_pattern,
    runs, ...)."""
    import matplotlib

    started = time.perf_counter()
    if second_axis not in SECOND_AXES:
        raise ReportError(f"--second-axis {second_axis!r}: choose from {', '.join(SECOND_AXES)}")
    options = Options(tuple(size), tuple(formats), int(dpi), second_axis, line)
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
