"""The HTML page: the warehouse's inventory, the items, and the summary printed after."""

from __future__ import annotations

import base64
import datetime as _dt
import html
import sys
from pathlib import Path
from string import Template

from .. import __version__
from ..warehouse import query_arrow
from .draw import _fmt_bytes, _slug
from .model import Item, Options, Report


_TEMPLATES = Path(__file__).resolve().parents[1] / "report_templates"


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
    """Findings first: the figures, section by section; then what the warehouse holds (runs,
    and ranks and sources folded), the sources' warnings, and the figures left out, folded."""
    drawn_items = [i for i in items if not i.skipped]
    left_out = [i for i in items if i.skipped]
    parts, toc = _figure_sections(drawn_items)
    if not drawn_items:
        parts.append('<p class="skipped">No figure could be drawn: see what was left out below.</p>')
    parts.append(_warehouse_section(inventory, set(runs)))
    toc.append('<a href="#runs">Runs</a>')
    source_rows = [r for r in inventory["sources"] if r["run_id"] in set(runs)]
    warnings = [f"{Path(s['path']).name} ({s['run_id']}): {s['warnings']}"
                for s in source_rows if s.get("warnings")]
    if warnings:
        toc.append('<a href="#warnings">Warnings</a>')
        listed = "<ul>" + "".join(f"<li>{html.escape(w)}</li>" for w in warnings) + "</ul>"
        parts.append('<section id="warnings"><h2>Warnings</h2>'
                     + (listed if len(warnings) <= 5 else
                        f"<details><summary>{len(warnings)} source warning(s)</summary>{listed}"
                        "</details>") + "</section>")
    if left_out:
        toc.append('<a href="#left-out">Left out</a>')
        parts.append(f'<section id="left-out"><h2>Left out</h2><details><summary>'
                     f"{len(left_out)} figure(s) left out, each with its reason</summary>"
                     '<div class="grid">' + "".join(_item_html(i) for i in left_out)
                     + "</div></details></section>")

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
        toc=" · ".join(toc),
        body="\n".join(parts),
    )


def _figure_sections(items: list[Item]) -> tuple[list[str], list[str]]:
    """The drawn figures in their sections (in plan order), and the sections' links."""
    parts, toc, section = [], [], None
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
    return parts, toc


def _warehouse_section(inventory: dict, chosen: set[str]) -> str:
    """The runs, then their ranks and sources folded: context, after the findings."""
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
    parts.append(f"<details><summary>Ranks ({len(rank_rows)})</summary>{rank_table}</details>")
    source_table = _table(source_rows, [("run_id", "run"), ("path", "file"),
                                        ("format", "format"), ("tool_version", "tool"),
                                        ("schema_version", "schema"), ("bytes", "size"),
                                        ("rows", "rows"), ("has_utc", "UTC")],
                          {"path": lambda p: Path(p).name if p else "",
                           "bytes": lambda b: "" if b is None else _fmt_bytes(b)})
    parts.append(f"<details><summary>Sources ({len(source_rows)})</summary>{source_table}"
                 "</details></section>")
    return "".join(parts)


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
