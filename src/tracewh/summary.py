"""`tracewh summary`: one screen per run, every number from a catalogue metric (named beside
it), combined by the SQL of sql/summary/ where ranks are summed."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .metrics import find_metric
from .output import Units, duration
from .resources import sql_dir
from .warehouse import default_db_path


@dataclass
class RunSummary:
    run_id: str
    lines: list[tuple[str, str, str]] = field(default_factory=list)  # (topic, text, source)
    kernels: list[tuple] = field(default_factory=list)  # (time_pct, total_ns, instances, name, kind)
    next_steps: list[str] = field(default_factory=list)


def _rows(session, name: str, **params) -> tuple[list[dict], str]:
    """A metric's rows as dicts, and 'name vN' to cite it."""
    metric = find_metric(name)
    return session.query(metric, params).to_pylist(), f"{metric.name} v{metric.version}"


def _combined(script: str, **tables) -> dict | list[dict]:
    """Rows of sql/summary/SCRIPT over metric results, in a DuckDB of its own."""
    import duckdb
    import pyarrow as pa

    local = duckdb.connect()

    for name, rows in tables.items():
        local.register(name, pa.Table.from_pylist(rows))
    relation = local.sql((sql_dir() / "summary" / script).read_text())
    found = [dict(zip(relation.columns, row)) for row in relation.fetchall()]
    local.close()
    return found


def _over_metric(session, script: str, name: str, table: str, **params) -> tuple[list[dict], str]:
    """Rows of sql/summary/SCRIPT over metric NAME's result (named TABLE in the script), run in
    the warehouse: a metric with a row per kernel name may hold millions, which DuckDB sums
    under its memory limit where Python could not hold them. The rows, and 'name vN'."""
    metric = find_metric(name)
    combined = (f"WITH {table} AS MATERIALIZED (\n{metric.query}\n)\n"
                + (sql_dir() / "summary" / script).read_text())
    rows = session.query(replace(metric, body=combined), params).to_pylist()
    return rows, f"{metric.name} v{metric.version}"


def pct(value) -> str:
    return "-" if value is None else f"{value:.1f}%"


def summarize_run(session, run_id: str, context: dict) -> RunSummary:
    """The summary of one run, from metrics run in `session` (session.Session)."""
    summary = RunSummary(run_id)
    say = summary.lines.append
    ranks, world = context["ranks"], context["world_size"]
    what = [f"{ranks} of {world} ranks" if world and world != ranks else f"{ranks} rank(s)",
            f"{context['hosts']} host(s)", context["gpus"] or "no GPU named"]
    when = (f"{context['start_utc']} UTC" if context["start_utc"] else "no UTC time") + \
        f", {duration(context['span_ns'], Units.auto)}" if context["span_ns"] else ""
    say(("Run", ", ".join(what), "runs"))
    say(("Captured", f"{when or 'no GPU activity'}, {context['iterations']} iterations, "
         f"{context['warnings']} warnings" + (f"; {context['note']}" if context["note"] else ""),
         "runs"))

    db = f" --db {session.path}" if session.path not in (None, default_db_path()) else ""
    steps, cite = _rows(session, "iteration_time", run=run_id)
    across = [r for r in steps if r["rank"] is None] or steps[:1]
    if not context["iterations"]:
        say(("Step time", "no steps found (no ProfilerStep#N ranges, nor a step_pattern's): "
             "whole-run figures only", cite))
    elif across and across[0]["median_ns"] is not None:
        r = across[0]
        say(("Step time", f"{duration(r['median_ns'], Units.auto)} median, p90 "
             f"{duration(r['p90_ns'], Units.auto)} over {r['iterations']} step(s)"
             + (" across ranks" if r["rank"] is None else f" on rank {r['rank']}")
             + " (first and last left out)", cite))
    else:
        say(("Step time", "no whole step between the first and the last: "
             "--param include_first_last=true counts them", cite))
        summary.next_steps.append(f"tracewh query iteration_time --param run={run_id} "
                                  f"--param include_first_last=true{db}")

    breakdown, cite = _rows(session, "temporal_breakdown", run=run_id)
    if breakdown:
        b = _combined("breakdown.sql", breakdown=breakdown)[0]
        idle, idle_cite = _rows(session, "scaling", runs=run_id)
        cause = idle[0] if idle and idle[0]["idle_cause"] is not None else None
        say(("GPU time", f"compute {pct(b['compute_pct'])}, exposed communication "
             f"{pct(b['exposed_comm_pct'])}, exposed memory {pct(b['exposed_mem_pct'])}, idle "
             f"{pct(b['idle_pct'])} (over {b['ranks']} rank(s); most idle: rank "
             f"{b['idlest_rank']}, {pct(b['idlest_pct'])}"
             + (f"; idle mostly in host {cause['idle_cause']}, {pct(cause['idle_cause_pct'])}"
                if cause else "") + ")",
             cite + (f", {idle_cite}" if cause else "")))

    overlap, cite = _rows(session, "comm_comp_overlap", run=run_id)
    o = _combined("overlap.sql", overlap=overlap)[0] if overlap else {}
    if o.get("comm_ns"):
        say(("Overlap", f"{pct(o['overlap_pct'])} of communication hidden under compute "
             f"(least: rank {o['least_rank']}, {pct(o['least_pct'])})", cite))
    else:
        say(("Overlap", "no communication kernels", cite))

    waits, cite = _rows(session, "straggler", run=run_id)
    late = _combined("straggler.sql", waits=waits) if waits else []
    if late:
        r = late[0]
        say(("Straggler", f"rank {r['rank']}: last to arrive at {pct(r['arrived_last_pct'])} of "
             f"{r['collectives']} collectives; the others waited "
             f"{duration(r['others_wait_ns'], Units.auto)} for the last rank; median start skew "
             f"{duration(r['median_start_skew_ns'], Units.auto)}", cite))
        summary.next_steps.append(f"tracewh query straggler_ops --param run={run_id}{db}")
    else:
        say(("Straggler", "no collective seen on two ranks or more", cite))

    kernels, cite = _over_metric(session, "top_kernels.sql", "gpu_kernel_summary",
                                 "kernel_summary", run=run_id)
    if kernels:
        summary.kernels = [(k["time_pct"], k["total_ns"], k["instances"], k["short_name"],
                            k["kind"]) for k in kernels]
        say(("Top kernels", "summed over ranks; share of the run's kernel time", cite))
    logged, cite = _rows(session, "log_phases", run=run_id)
    if logged:
        timers = ", ".join(f"{r['timer']} {r['median_ms']:,.1f} ms" for r in logged[:4]
                           if r["median_ms"] is not None)
        rates = [r["tflops"] for r in logged if r["tflops"] is not None]
        say(("Training log", f"median over {max(r['steps'] for r in logged)} step(s): {timers}"
             + (f"; {rates[0]:,.1f} TFLOP/s" if rates else ""), cite))
    summary.next_steps.append(f"tracewh report --run {run_id} --out report/{db}")
    return summary


def print_summary(summary: RunSummary, out) -> None:
    """One screen: a row per topic, the metric it came from at the end; text wraps under its
    topic, and a kernel's name is cut to its line (its numbers come first, never cut)."""
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True, min_width=12)
    grid.add_column()
    for topic, text, source in summary.lines:  # what the views say needs no citation
        grid.add_row(Text(topic), Text(text if source == "runs" else f"{text}  [{source}]"))
        if topic == "Top kernels":
            for share, total, count, name, kind in summary.kernels:
                grid.add_row("", Text(f"{pct(share):>6} {duration(total, Units.auto):>11} "
                                      f"{count:>7,}x  {name} ({kind})", no_wrap=True,
                                      overflow="ellipsis"))
    for i, step in enumerate(summary.next_steps):
        grid.add_row(Text("Next" if i == 0 else ""), Text(step))
    out.print(Text(summary.run_id, style="bold"))
    out.print(grid)
