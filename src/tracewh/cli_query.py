"""The commands that ask: `query` (a metric), `sql`, `runs`, `views` and `summary`."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from .cli_common import (DbOption, FormatOption, LakeOption, MaxRowsOption, OutputOption,
                         QueryMemoryOption, TimeoutOption, UnitsOption,
                         WaitOption, db_path, err, exit_with_error,
                         open_session, open_warehouse, parse_params,
                         print_run_notes, say_rows_left_out)
from .errors import TracewhError
from .output import Format, Rows, Units, chosen_format, write


def query(
    metric: Annotated[str, typer.Argument(help="Metric name (see 'tracewh metrics list') or a .sql file")],
    param: Annotated[
        Optional[list[str]], typer.Option("--param", "-p", help="NAME=VALUE; repeatable")
    ] = None,
    db: DbOption = None,
    fmt: FormatOption = None,
    output: OutputOption = None,
    max_rows: MaxRowsOption = 100,
    units: UnitsOption = Units.auto,
    wait: WaitOption = 60.0,
    engine: Annotated[str, typer.Option(
        "--engine", help="duckdb (the warehouse, or a lake with --lake) or spark (a lake, "
                         "--lake)")] = "duckdb",
    lake: LakeOption = None,
    memory_limit: QueryMemoryOption = "1GB",
    timeout: TimeoutOption = None,
    fail: Annotated[bool, typer.Option(
        "--fail", help="Exit 1 when a row says worse = true (regressions: a CI gate; every "
        "row is judged and listed, top=0)")] = False,
) -> None:
    """Run a metric over the warehouse, read-only (while an ingest writes, it waits for it);
    or over a Parquet lake (--lake), by DuckDB or, with --engine spark, a local Spark session.

    What a metric computes and the parameters it takes: 'tracewh metrics show METRIC'.

    Example:

    \b
        tracewh query gpu_kernel_summary --param rank=0 --format csv
        tracewh query idle_gaps --lake lake/
        tracewh query temporal_breakdown --engine spark --lake lake/
    """
    from .metrics import bind_values, find_metric

    params = parse_params(param or [])
    chosen = find_metric(metric)  # parses and checks the metric before it runs
    if fail and any(p.name == "top" for p in chosen.params):  # the gate judges every row
        if params.setdefault("top", "0").strip() != "0":
            raise TracewhError("--fail judges every row: leave out --param top (the rows past "
                               "the top would not be judged)")
    if engine not in ("duckdb", "spark"):
        raise TracewhError(f"--engine {engine!r}: use duckdb or spark")
    if engine == "spark":
        if lake is None:
            raise TracewhError("--engine spark reads a Parquet lake: pass --lake DIR "
                               "(written by 'tracewh export DIR')")
        from .spark import run_metric_spark, spark_session

        write(run_metric_spark(spark_session(), chosen, params, lake), fmt, output,
              max_rows, err, units=units, title_columns=True,
              show=chosen.show)
        return
    with open_session(db, wait, lake, memory_limit=memory_limit, timeout=timeout) as session:
        result = session.query(chosen, params)
        if fail and "worse" not in result.column_names:
            raise TracewhError(f"--fail: {chosen.name} has no 'worse' column to judge by "
                               "(regressions has one; for two runs: 'tracewh diff --fail-on')")
        write(result, fmt, output, max_rows, err, units=units, title_columns=True,
              show=chosen.show)
    say_rows_left_out(chosen, result, "--param top=0")
    if fail:
        _fail_on_worse(result)
    if result.num_rows == 0 and bind_values(chosen, params).get("include_first_last") is False:
        err.print(f"{chosen.name} leaves out the first and last iteration of each rank "
                  "(profilers cut them short): --param include_first_last=true keeps them",
                  highlight=False, markup=False)


def _fail_on_worse(result) -> None:
    """Exit 1, naming them, when rows of `result` say worse = true."""
    worse = [row for row in result.to_pylist() if row["worse"]]
    for row in worse[:10]:
        err.print("worse: " + ", ".join(f"{k}={v}" for k, v in row.items()
                                        if k in ("run_id", "section", "item", "deviation_pct")),
                  highlight=False, markup=False, soft_wrap=True)
    if worse:
        exit_with_error(f"{len(worse)} row(s) say worse = true" + (" (the first 10 above)"
                                                                    if len(worse) > 10 else ""))


def sql(
    statement: Annotated[Optional[str], typer.Argument(
        help="One SQL query over the views", show_default=False)] = None,
    file: Annotated[Optional[Path], typer.Option(
        "--file", help="Read the query from this file (-f is --format, as everywhere)",
        dir_okay=False)] = None,
    db: DbOption = None,
    fmt: FormatOption = None,
    output: OutputOption = None,
    max_rows: MaxRowsOption = 100,
    units: UnitsOption = Units.auto,
    wait: WaitOption = 60.0,
    memory_limit: QueryMemoryOption = "1GB",
    timeout: TimeoutOption = None,
    lake: LakeOption = None,
) -> None:
    """Run one ad-hoc read-only query (SELECT, DESCRIBE, SUMMARIZE) over the warehouse (or a
    lake, --lake).

    Writes, ATTACH, COPY, INSTALL/LOAD, SET/RESET/PRAGMA and reading files are refused.

    Example:

    \b
        tracewh sql "SELECT rank, count(*) FROM kernels GROUP BY rank ORDER BY rank"
        tracewh sql --file busy.sql --format csv
    """
    from .guard import parse_one_statement

    if (statement is None) == (file is None):
        exit_with_error("give the query as an argument or as --file FILE.sql (one of the two)")
    if file is not None:
        try:
            statement = file.read_text()
        except OSError as exc:
            raise TracewhError(f"{file}: cannot read: {exc.strerror or exc}") from None
    parse_one_statement(statement)  # refuse what cannot be checked before opening anything
    with open_session(db, wait, lake, memory_limit=memory_limit, timeout=timeout) as session:
        write(session.sql(statement), fmt, output, max_rows, err, units=units)


def runs(db: DbOption = None, fmt: FormatOption = None, output: OutputOption = None,
         units: UnitsOption = Units.auto, wait: WaitOption = 60.0,
         memory_limit: QueryMemoryOption = "1GB", lake: LakeOption = None) -> None:
    """List the runs in the warehouse (or a lake, --lake): when and how long, ranks present
    against the world size, hosts, GPUs, iterations, warnings, and what looks wrong
    (sql/run_context.sql)."""
    from .session import run_context

    with open_session(db, wait, lake, memory_limit=memory_limit) as session:
        result = run_context(session.con)
        write(result, fmt, output, 10_000, err, units=units, show=(
            "run_id", "span_ns", "iterations", "ranks", "world_size", "gpus", "hosts", "note"))
        if chosen_format(fmt, output) is Format.table:
            print_run_notes(result)


def views(
    name: Annotated[Optional[str], typer.Argument(
        help="A view: print its columns, their types and what they mean", show_default=False)] = None,
    db: DbOption = None,
    fmt: FormatOption = None,
    output: OutputOption = None,
) -> None:
    """List the views SQL and metrics read, or one view's documented columns (sql/views).

    Example:

    \b
        tracewh views
        tracewh views nccl_ops
    """
    from .viewdocs import column_docs, find_view, view_files, view_summary

    if name is None:
        files = view_files()
        table = Rows(["view", "what it holds"], [False, False],
                     [(view, view_summary(path)) for view, path in files.items()], len(files))
    else:
        path = find_view(name)
        # the types come from a warehouse: this one, or an empty one in memory
        given = db_path(db) if db_path(db).exists() else ":memory:"
        with open_warehouse(given, 0.0, "read" if given != ":memory:" else "write") as con:
            described = con.execute(f"DESCRIBE {name.lower()}").fetchall()  # a known view name
        columns = [(column, "ENUM" if str(kind).startswith("ENUM(") else str(kind))
                   for column, kind, *_ in described]  # an ENUM lists every name it holds
        docs = column_docs(path, [c for c, _ in columns])
        table = Rows(["column", "type", "meaning"], [False] * 3,
                     [(c, kind, docs.get(c, "")) for c, kind in columns], len(columns))
    write(table, fmt, output, 10_000, err)


def summary(
    db: DbOption = None,
    run: Annotated[Optional[list[str]], typer.Option(help="Only this run; repeatable")] = None,
    wait: WaitOption = 60.0,
    memory_limit: QueryMemoryOption = "1GB",
) -> None:
    """One screen per run: what it is, step time, where GPU time goes, overlap, the straggler,
    the top kernels, and what to run next; each number names the metric it came from.

    Example:

    \b
        tracewh summary --run dp4 --db job.duckdb
    """
    from rich.console import Console

    from .session import run_context
    from .summary import print_summary, summarize_run

    with open_session(db, wait, memory_limit=memory_limit) as session:
        session.check_runs(run or [])
        context = run_context(session.con, run)
        if not context.rows:
            raise TracewhError("the warehouse holds no runs: 'tracewh ingest PATH' first")
        out = Console()
        for i, row in enumerate(context.rows):
            if i:
                out.print()
            print_summary(summarize_run(session, row[0], dict(zip(context.columns, row))), out)
