"""The diff section, for a report asked for two runs: step time and breakdown, top ops."""

from __future__ import annotations

from .draw import PALETTE, _figure, _fmt_ns, _outside_legend, _pct, _short, _thin_ticks, _time_unit
from .model import Item, Skip, _Context, _rows
from .page import _table


DIFF_SECTION = "9. What changed between the two runs"
DIFF_TOP = 15


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
    found = _rows(ctx, item, "run_diff", base=base, test=test, top=DIFF_TOP)
    rest = [r for r in found if r["level"] == "rest"]  # the ops past the top ones, summed
    rows = [r for r in found if r["level"] != "rest"][:DIFF_TOP]  # (a --param top may be more)
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
    for r in rest:
        item.notes.append(f"The other ops changed less: {r['name'].split(' (')[0]}, "
                          f"{_fmt_ns(r['base_total_ns'])} in {base} and "
                          f"{_fmt_ns(r['test_total_ns'])} in {test}.")
    if rows[0]["per_step"]:
        item.notes.append("The runs hold different numbers of steps: counts and times are per "
                          "rank and iteration.")
