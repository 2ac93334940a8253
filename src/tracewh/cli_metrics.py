"""`tracewh metrics` (the catalogue: list, show, transpile, check, lock) and `tracewh kinds`
(the kernel kind patterns)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Optional

import typer

from .cli_common import (DbOption, FormatOption, OutputOption, WaitOption, err, exit_with_error,
                         open_session, open_warehouse, parse_params)
from .output import write


metrics_app = typer.Typer(help="List, show and check the metric catalogue.", no_args_is_help=True)
kinds_app = typer.Typer(help="The kernel kind patterns: list them, load your own.",
                        no_args_is_help=True)


@metrics_app.command("list")
def metrics_list(fmt: FormatOption = None, output: OutputOption = None) -> None:
    """List every metric with its version and summary."""
    from .metrics import metric_catalogue

    write(metric_catalogue(), fmt, output, 10_000, err, show=("metric", "summary", "params"))


@metrics_app.command("show")
def metrics_show(name: Annotated[str, typer.Argument(help="Metric name or .sql file")]) -> None:
    """Print a metric's file: its header and its SQL."""
    from .metrics import find_metric

    print(find_metric(name).path.read_text(), end="")


@metrics_app.command("transpile")
def metrics_transpile(
    name: Annotated[str, typer.Argument(help="Metric name or .sql file")],
    dialect: Annotated[str, typer.Option("--dialect", "-d", help="spark or trino")] = "spark",
    param: Annotated[
        Optional[list[str]], typer.Option("--param", "-p", help="NAME=VALUE; repeatable")
    ] = None,
    lake: Annotated[Optional[Path], typer.Option(
        "--lake", help="Take the view columns from this lake's manifest", file_okay=False)] = None,
) -> None:
    """Print a metric as Spark SQL or Trino SQL over the views of a Parquet lake: macros
    inlined, parameters bound as literals (defaults unless --param), DuckDB-only syntax
    rewritten.

    Example:

    \b
        tracewh metrics transpile temporal_breakdown --dialect spark --param rank=0
    """
    from .metrics import find_metric
    from .transpile import lake_catalog, transpile_metric

    chosen = find_metric(name)
    catalog = lake_catalog(lake) if lake is not None else None
    print(transpile_metric(chosen, dialect, parse_params(param or []), catalog) + ";")


@metrics_app.command("check")
def metrics_check() -> None:
    """Check every metric file and the lock: a changed metric, or a changed view or macro it
    reads, must raise its version (or be locked again with --same-answers)."""
    from .metrics import check_lock, list_metrics

    list_metrics()
    problems = check_lock()
    for problem in problems:
        err.print(problem, highlight=False, soft_wrap=True, markup=False)
    if problems:
        raise typer.Exit(1)
    err.print("all metrics parse and match the lock")


@metrics_app.command("lock")
def metrics_lock(
    same_answers: Annotated[Optional[str], typer.Option(
        "--same-answers", metavar="WHY",
        help="Lock changed metrics (or views and macros they read) again under their version, "
             "because every answer stays the same; WHY goes into sql/metrics.changes")] = None,
) -> None:
    """Record new (metric, version) pairs in sql/metrics.lock, with the hash of the views and
    macros each reads."""
    from .metrics import update_lock

    for line in update_lock(same_answers=same_answers):
        err.print(line, highlight=False, markup=False)


@kinds_app.command("list")
def kinds_list(db: DbOption = None, fmt: FormatOption = None, output: OutputOption = None,
               wait: WaitOption = 60.0) -> None:
    """The kind patterns in precedence order: the first that matches a kernel's name gives its
    kind (yours first, then tracewh's; none: compute).

    Example:

        tracewh kinds list --db job.duckdb
    """
    from .warehouse import query_arrow

    with open_session(db, wait) as session:
        result = query_arrow(session.con,
            "SELECT row_number() OVER (ORDER BY origin <> 'user', position) AS precedence, "
            "kind, pattern, origin, note FROM store.kernel_kinds ORDER BY precedence")
    write(result, fmt, output, 10_000, err)


@kinds_app.command("load")
def kinds_load(
    file: Annotated[Optional[Path], typer.Argument(
        help="CSV with the header kind,pattern,note; kind is comm, compute, sync or other",
        dir_okay=False)] = None,
    clear: Annotated[bool, typer.Option("--clear", help="Remove your patterns")] = False,
    db: DbOption = None,
    wait: WaitOption = 60.0,
) -> None:
    """Make FILE's patterns yours: they take precedence over tracewh's (sql/kernel_kinds.csv),
    in the file's order, and every stored kernel is classified again. Loading replaces the
    patterns loaded before.

    Example:

        tracewh kinds load my_kinds.csv --db job.duckdb
    """
    from .kinds import load_user_patterns

    if (file is None) == (not clear):
        exit_with_error("give a kinds FILE to load, or --clear to remove yours")
    with open_warehouse(db, wait) as con:
        load_user_patterns(con, file)
        patterns, names = con.execute(
            "SELECT (SELECT count(*) FROM store.kernel_kinds WHERE origin = 'user'), "
            "(SELECT count(*) FROM store.kernel_names)").fetchone()
    err.print(f"{patterns} pattern(s) of yours; {names} kernel name(s) classified again",
              highlight=False, markup=False)
