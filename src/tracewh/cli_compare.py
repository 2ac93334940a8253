"""The commands that compare and show: `report` (a page of figures) and `diff` (two runs)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from .cli_common import (DbOption, FormatOption, MaxRowsOption, OutputOption, UnitsOption,
                         WaitOption, err, open_session, parse_params,
                         say_rows_left_out)
from .errors import TracewhError
from .output import Format, Units, chosen_format, write


def report(
    out: Annotated[Path, typer.Option("--out", help="Folder for index.html and the figure files",
                                      file_okay=False)],
    db: DbOption = None,
    run: Annotated[Optional[list[str]], typer.Option(help="Only this run; repeatable")] = None,
    size: Annotated[str, typer.Option(help="Figure size in inches, WIDTHxHEIGHT")] = "5x3",
    formats: Annotated[str, typer.Option(help="Figure files to write: png, svg, eps "
                                         "(comma-separated)")] = "png,svg",
    dpi: Annotated[int, typer.Option(min=50, max=1200, help="Resolution of the PNG files")] = 200,
    second_axis: Annotated[str, typer.Option(
        help="Second axis of the phase figure, from the throughput metric: auto, tokens, "
             "samples or none")] = "auto",
    line: Annotated[str, typer.Option(
        help="How lines on a second axis (TFLOP/s, tokens/s) are drawn: a style (solid, dashed, "
             "dotted, dashdot) and/or a color, e.g. 'dashed,black'")] = "dotted,tab:red",
    param: Annotated[Optional[list[str]], typer.Option(
        "--param", "-p", help="NAME=VALUE for every metric that takes it (phases, "
        "step_pattern, runs, include_first_last, ...); repeatable")] = None,
    wait: WaitOption = 60.0,
) -> None:
    """Write an offline HTML report (figures drawn from the metrics) and each figure as a file.

    DIR/index.html needs no network: figures and CSS are inlined.

    A figure whose metric has nothing to show is left out with a note saying why.

    Example:

    \b
        tracewh report --db job.duckdb --out report/ --size 5x3 --formats png,svg,eps
        tracewh report --db job.duckdb --out report/ --line dashed,black
    """
    from .report import build_report, parse_formats, parse_line, parse_size, print_summary

    figure_size, figure_formats = parse_size(size), parse_formats(formats)
    line_style = parse_line(line)
    params = parse_params(param or [])
    with open_session(db, wait) as session:
        result = build_report(session, out, runs=run, size=figure_size, formats=figure_formats,
                              dpi=dpi, second_axis=second_axis, line=line_style,
                              db_label=str(session.path),
                              params=params)
    print_summary(result)
    if result.problems:
        raise typer.Exit(1)


DIFF_LEVELS = ("all", "kernel", "cpu_op", "cuda_api", "nvtx")


def diff(
    base: Annotated[str, typer.Argument(help="The run before (run_id, see 'tracewh runs')")],
    test: Annotated[str, typer.Argument(help="The run after")],
    level: Annotated[str, typer.Option(
        help="all, or a comma-separated list of kernel, cpu_op, cuda_api, nvtx")] = "all",
    short_names: Annotated[bool, typer.Option(
        help="Match GPU ops by their base name (template arguments change between versions)")
    ] = False,
    threshold: Annotated[float, typer.Option(
        min=0, help="Relative time change below which an op counts as unchanged")] = 0.05,
    base_rank: Annotated[Optional[int], typer.Option(help="Only this rank of BASE")] = None,
    test_rank: Annotated[Optional[int], typer.Option(help="Only this rank of TEST")] = None,
    base_iteration: Annotated[Optional[str], typer.Option(
        help="Only this iteration of BASE: N or N-M")] = None,
    test_iteration: Annotated[Optional[str], typer.Option(
        help="Only this iteration of TEST: N or N-M")] = None,
    top: Annotated[int, typer.Option(
        min=0, help="Ops kept, largest change first; the others are summed in one 'rest' row "
        "(0: every op)")] = 1000,
    max_rows: MaxRowsOption = 20,
    breakdown: Annotated[bool, typer.Option(
        help="Also print breakdown_diff's side-by-side table (table and markdown formats)")
    ] = False,
    fail_on: Annotated[Optional[str], typer.Option(
        "--fail-on", help="Exit 1 when a measure moved past its threshold, e.g. "
        "'step_time>+5%,exposed_comm>+10%' (a CI gate; measures: breakdown_diff's rows)")
    ] = None,
    db: DbOption = None,
    fmt: FormatOption = None,
    output: OutputOption = None,
    units: UnitsOption = Units.auto,
    wait: WaitOption = 60.0,
) -> None:
    """What changed between two runs: breakdown_diff's sentence, then run_diff's top changes.

    The sentence names the largest contributor to the change in step time; the rows are
    run_diff's, largest time change first. With --format csv, json or parquet the rows are the
    output and the sentence goes to stderr.

    Example:

    \b
        tracewh diff baseline upgraded --level kernel --short-names
        tracewh diff main pr-123 --fail-on 'step_time>+5%,exposed_comm>+10%'
    """
    from .gate import judge, parse_fail_on
    from .metrics import find_metric

    clauses = parse_fail_on(fail_on) if fail_on is not None else []
    unknown = [x.strip() for x in level.split(",") if x.strip() not in DIFF_LEVELS]
    if unknown:
        raise TracewhError(f"--level {level!r}: {', '.join(map(repr, unknown))} is not one "
                           f"of {', '.join(DIFF_LEVELS)}")
    with open_session(db, wait) as session:
        session.check_runs([base, test])
        summary = session.query("breakdown_diff", base=base, test=test)
        changes = session.query(
            "run_diff", base=base, test=test, level=level, short_names=short_names,
            threshold=threshold, base_rank=base_rank, test_rank=test_rank,
            base_iteration=base_iteration, test_iteration=test_iteration, top=top)
    verdicts = judge(clauses, summary.to_pylist())  # a measure named wrong: before any output
    sentence = summary.column("sentence").to_pylist()[0] if summary.num_rows else None
    sentence = f"{base} -> {test}: {sentence or 'nothing to compare'}"
    fmt = chosen_format(fmt, output)
    if fmt in (Format.table, Format.markdown) and output is None:
        print(sentence)
        if breakdown:
            write(summary, fmt, None, summary.num_rows, err, units=units, title_columns=True,
                  show=find_metric("breakdown_diff").show)
    else:
        err.print(sentence, highlight=False, soft_wrap=True, markup=False)
    write(changes, fmt, output, max_rows, err, units=units, title_columns=True,
          show=find_metric("run_diff").show)
    say_rows_left_out(find_metric("run_diff"), changes, "--top 0")
    for verdict in verdicts:
        err.print(verdict.line(), highlight=False, markup=False, soft_wrap=True)
    if any(v.failed for v in verdicts):
        raise typer.Exit(1)
