"""The `tracewh` command line: ingest traces, query metrics, look around the warehouse."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape  # paths and messages are text, never markup
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from . import __version__
from .errors import TracewhError
from .output import Format, write
from .warehouse import connect, default_db_path, query_arrow

app = typer.Typer(
    help="A SQL-first warehouse for distributed-training profiles (Nsight Systems, PyTorch profiler).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
metrics_app = typer.Typer(help="List, show and check the metric catalogue.", no_args_is_help=True)
app.add_typer(metrics_app, name="metrics")
generate_app = typer.Typer(help="Write synthetic traces whose true numbers are known.",
                           no_args_is_help=True)
app.add_typer(generate_app, name="generate")

err = Console(stderr=True)

DbOption = Annotated[
    Optional[Path],
    typer.Option("--db", help="Warehouse file", dir_okay=False,
                 show_default="./tracewh.duckdb or $TRACEWH_DB"),
]
FormatOption = Annotated[Format, typer.Option("--format", "-f", help="Output format")]
OutputOption = Annotated[
    Optional[Path], typer.Option("--output", "-o", help="Write to this file instead of stdout")
]
MaxRowsOption = Annotated[int, typer.Option(help="Rows shown by --format table")]
WaitOption = Annotated[float, typer.Option(
    "--wait", min=0, help="Seconds to wait while another tracewh holds the warehouse")]


def _waiting(message: str) -> None:
    err.print(message, highlight=False, soft_wrap=True, markup=False)


def _fail(message: str, code: int = 1) -> None:
    err.print(f"[red]Error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _db(db: Path | None) -> Path:
    return db if db is not None else default_db_path()


def _print_version(value: bool) -> None:
    if value:
        print(f"tracewh {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit",
                                          callback=_print_version, is_eager=True)] = False,
) -> None:
    """Ingest traces, then ask questions with metrics or SQL."""


@app.command()
def ingest(
    paths: Annotated[Optional[list[Path]], typer.Argument(
        help="Trace files or directories (searched recursively)",
        readable=False)] = None,  # an unreadable file is reported by ingest, not refused by the parser
    db: DbOption = None,
    run: Annotated[Optional[str], typer.Option(help="Put every file in this run")] = None,
    rank_map: Annotated[
        Optional[list[str]],
        typer.Option("--rank-map", help="FILE_GLOB=RANK, or FILE_GLOB:PID=RANK for a report "
                     "holding several processes; repeatable"),
    ] = None,
    replace: Annotated[bool, typer.Option(help="Re-ingest files already in the warehouse")] = False,
    jobs: Annotated[Optional[int], typer.Option(help="Files decoded in parallel",
                                                show_default="cores", min=1)] = None,
    memory_limit: Annotated[Optional[str], typer.Option(
        envvar="TRACEWH_MEMORY_LIMIT",
        help="DuckDB memory limit while ingesting; beyond it DuckDB spills to disk. The whole "
        "process stays about 130 MB above it",
        show_default="256MB per file held: the jobs decoding and the one being written")] = None,
    series: Annotated[Optional[list[Path]], typer.Option(
        "--series", help="A CSV of samples taken beside the job (GPU memory, utilisation, "
        "power); repeatable")] = None,
    series_time_column: Annotated[Optional[str], typer.Option(
        help="The series' time column",
        show_default="detected: time, timestamp, ts, ...")] = None,
    series_time_unit: Annotated[Optional[str], typer.Option(
        help="s, ms, us, ns since the epoch, or text",
        show_default="detected")] = None,
    series_tz: Annotated[Optional[str], typer.Option(
        help="UTC offset of text time stamps, e.g. +02:00",
        show_default="UTC")] = None,
    series_host: Annotated[Optional[str], typer.Option(
        help="Host the series was sampled on, when it has no host column")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar")] = False,
    wait: WaitOption = 60.0,
) -> None:
    """Load Nsight Systems SQLite exports (and .nsys-rep reports), PyTorch profiler (Kineto)
    traces and sampled time series (--series) into the warehouse.

    Each file is one transaction: a bad file is reported on one line and leaves the warehouse
    as it was; the same file again adds nothing.

    Example:

        tracewh ingest runs/ --db job.duckdb
        tracewh ingest --series gpu_monitor.csv --run dp4 --db job.duckdb
    """
    if not paths and not series:
        _fail("nothing to ingest: give trace files or folders, or --series FILE.csv")
    from .ingest import default_memory_limit, ingest_paths
    from .ingest.discover import parse_rank_map

    try:
        rules = parse_rank_map(rank_map or [])
        con = connect(_db(db), wait=wait, on_wait=_waiting)
        con.execute("SET memory_limit = ?", [memory_limit or default_memory_limit(jobs)])
        # Commits go to the write-ahead log (durable, replayed after a crash); the compressing
        # checkpoint into the file then runs once at the end instead of after every file (15%
        # faster on the 8 x 100 MB Kineto bench with the old multi-process decoder; about the
        # same CPU with today's in-process one).
        con.execute("SET checkpoint_threshold = '1GB'")
    except TracewhError as exc:
        _fail(str(exc))
    started = time.perf_counter()
    progress = Progress(
        TextColumn("[bold]ingest"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[mb]:.1f} MB"), TimeElapsedColumn(),
        console=err, disable=quiet or not err.is_terminal, transient=True,
    )
    task = progress.add_task("ingest", total=0, mb=0.0)
    results = []

    def on_start(candidates):
        progress.update(task, total=len(candidates))

    def on_file(result):
        results.append(result)
        if result.status == "failed":
            progress.console.print(f"[red]Error:[/red] {escape(result.message)}", highlight=False,
                                   soft_wrap=True)
        elif result.status == "skipped" and not quiet:
            progress.console.print(f"skipped {result.message}", highlight=False, soft_wrap=True,
                                   markup=False)
        if result.run_id is not None or result.status != "failed":
            progress.update(task, advance=1, mb=progress.tasks[0].fields["mb"] + result.bytes / 1e6)

    with progress:
        ingest_paths(con, paths or [], run=run, rank_rules=rules, replace=replace, jobs=jobs,
                     series=series, series_options={
                         "time_column": series_time_column, "time_unit": series_time_unit,
                         "tz": series_tz, "host": series_host},
                     on_file=on_file, on_start=on_start)
    con.close()
    _summarize(results, time.perf_counter() - started, quiet)
    if any(r.status == "failed" for r in results):
        raise typer.Exit(1)


def _summarize(results, seconds: float, quiet: bool) -> None:
    loaded = [r for r in results if r.status in ("ingested", "replaced")]
    failed = [r for r in results if r.status == "failed"]
    skipped = [r for r in results if r.status == "skipped"]
    rows = sum(r.rows for r in loaded)
    megabytes = sum(r.bytes for r in loaded) / 1e6
    runs = sorted({r.run_id for r in loaded if r.run_id})
    if quiet and not failed:
        return
    parts = [f"ingested {len(loaded)} file(s), {rows:,} rows, {megabytes:.1f} MB in {seconds:.1f} s "
             f"({megabytes / max(seconds, 1e-3):,.1f} MB/s)"]
    if skipped:
        parts.append(f"{len(skipped)} already present")
    if failed:
        parts.append(f"{len(failed)} failed")
    err.print("; ".join(parts), highlight=False, markup=False)
    if runs:
        err.print("runs: " + ", ".join(runs), highlight=False, soft_wrap=True, markup=False)


@app.command()
def query(
    metric: Annotated[str, typer.Argument(help="Metric name (see 'tracewh metrics list') or a .sql file")],
    param: Annotated[
        Optional[list[str]], typer.Option("--param", "-p", help="NAME=VALUE; repeatable")
    ] = None,
    db: DbOption = None,
    fmt: FormatOption = Format.table,
    output: OutputOption = None,
    max_rows: MaxRowsOption = 100,
    wait: WaitOption = 60.0,
    engine: Annotated[str, typer.Option(
        "--engine", help="duckdb (the warehouse) or spark (a Parquet lake, --lake)")] = "duckdb",
    lake: Annotated[Optional[Path], typer.Option(
        "--lake", help="Lake folder written by 'tracewh export' (--engine spark)",
        file_okay=False)] = None,
) -> None:
    """Run a metric over the warehouse, read-only (while an ingest writes, it waits for it);
    or, with --engine spark, over a Parquet lake on a local Spark session.

    Example:

        tracewh query gpu_kernel_summary --param rank=0 --format csv
        tracewh query temporal_breakdown --engine spark --lake lake/
    """
    from .guard import lock_down
    from .metrics import find_metric, run_metric

    con = None
    try:
        params = _parse_params(param or [])
        chosen = find_metric(metric)  # parses and checks the metric before it runs
        if engine not in ("duckdb", "spark"):
            raise TracewhError(f"--engine {engine!r}: use duckdb or spark")
        if lake is not None and engine != "spark":
            raise TracewhError("--lake is read by --engine spark; the duckdb engine reads --db")
        if engine == "spark":
            if lake is None:
                raise TracewhError("--engine spark reads a Parquet lake: pass --lake DIR "
                                   "(written by 'tracewh export DIR')")
            from .spark import run_metric_spark, spark_session

            write(run_metric_spark(spark_session(), chosen, params, lake), fmt, output,
                  max_rows, err)
            return
        con = connect(_db(db), read_only=True, wait=wait, on_wait=_waiting)
        lock_down(con)
        result = run_metric(con, chosen, params)
        write(result, fmt, output, max_rows, err)
    except (TracewhError, ValueError) as exc:
        _fail(str(exc))
    finally:
        if con is not None:
            con.close()


def _parse_params(specs: list[str]) -> dict[str, str]:
    params = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        if not sep or not name.strip():
            raise TracewhError(f"--param {spec!r}: expected NAME=VALUE")
        params[name.strip()] = value
    return params


@app.command()
def sql(
    statement: Annotated[str, typer.Argument(help="One SQL query over the views")],
    db: DbOption = None,
    fmt: FormatOption = Format.table,
    output: OutputOption = None,
    max_rows: MaxRowsOption = 100,
    wait: WaitOption = 60.0,
) -> None:
    """Run one ad-hoc read-only query (SELECT, DESCRIBE, SUMMARIZE) over the warehouse.

    Writes, ATTACH, COPY, INSTALL/LOAD, SET/RESET/PRAGMA and reading files are refused.

    Example:

        tracewh sql "SELECT rank, count(*) FROM kernels GROUP BY rank ORDER BY rank"
    """
    import duckdb

    from .guard import check_query, lock_down, parse_one_statement, warehouse_relations

    con = None
    try:
        parse_one_statement(statement)  # refuse what cannot be checked before opening anything
        con = connect(_db(db), read_only=True, wait=wait, on_wait=_waiting)
        check_query(statement, *warehouse_relations(con))
        lock_down(con)
        result = query_arrow(con, statement)
        write(result, fmt, output, max_rows, err)
    except (TracewhError, ValueError) as exc:
        _fail(str(exc))
    except duckdb.Error as exc:
        _fail(str(exc).splitlines()[0])
    finally:
        if con is not None:
            con.close()


@app.command()
def runs(db: DbOption = None, fmt: FormatOption = Format.table, output: OutputOption = None,
         wait: WaitOption = 60.0) -> None:
    """List the runs in the warehouse, with their ranks and sources."""
    try:
        con = connect(_db(db), read_only=True, wait=wait, on_wait=_waiting)
        result = query_arrow(con,
            "SELECT r.run_id, r.world_size AS ranks, r.sources, "
            "(SELECT count(*) FROM kernels k WHERE k.run_id = r.run_id) AS kernels, "
            "(SELECT count(*) FROM nccl_ops n WHERE n.run_id = r.run_id) AS nccl_ops, "
            "(SELECT string_agg(DISTINCT s.format, ', ') FROM sources s WHERE s.run_id = r.run_id) AS formats "
            "FROM runs r ORDER BY r.run_id")
        write(result, fmt, output, 10_000, err)
    except TracewhError as exc:
        _fail(str(exc))


@app.command()
def remove(
    db: DbOption = None,
    source: Annotated[Optional[list[str]], typer.Option(help="A file_id or path; repeatable")] = None,
    run: Annotated[Optional[list[str]], typer.Option(help="A run name; repeatable")] = None,
    wait: WaitOption = 60.0,
) -> None:
    """Remove sources or whole runs, and exactly their rows.

    Example:

        tracewh remove --run param/dlrm_kineto
    """
    from .ingest import remove_source

    if not source and not run:
        _fail("say what to remove: --source FILE_ID_OR_PATH or --run NAME")
    con = None
    try:
        con = connect(_db(db), wait=wait, on_wait=_waiting)
        ids = []
        for item in source or []:
            found = con.execute(
                "SELECT file_id FROM store.sources WHERE CAST(file_id AS VARCHAR) = ? OR path = ?",
                [item, str(Path(item).resolve()) if not item.isdigit() else item]).fetchall()
            if not found:
                _fail(f"no source {item!r} in the warehouse - see 'tracewh sql \"SELECT * FROM sources\"'")
            ids += [f for (f,) in found]
        for name in run or []:
            found = con.execute("SELECT file_id FROM store.sources WHERE run_id = ?", [name]).fetchall()
            if not found:
                _fail(f"no run {name!r} in the warehouse - see 'tracewh runs'")
            ids += [f for (f,) in found]
        con.execute("BEGIN TRANSACTION")
        for file_id in sorted(set(ids)):
            remove_source(con, file_id)
        con.execute("COMMIT")
        err.print(f"removed {len(set(ids))} source(s)")
    except TracewhError as exc:
        _fail(str(exc))
    finally:
        if con is not None:
            con.close()  # an unfinished removal rolls back


@app.command()
def export(
    out: Annotated[Path, typer.Argument(help="Lake folder (parquet), or trace file/folder (chrome-trace)")],
    db: DbOption = None,
    run: Annotated[Optional[list[str]], typer.Option(help="Only this run; repeatable")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f",
                                     help="parquet (a lake of every view) or chrome-trace")] = "parquet",
    force: Annotated[bool, typer.Option(help="Rewrite runs that are already up to date")] = False,
) -> None:
    """Write every view as Parquet, hive-partitioned by run (and rank for the big ones); or a
    run as one Chrome/Perfetto trace with all its ranks, clock offsets applied.

    Parquet: runs already exported and unchanged are skipped; runs gone from the warehouse are
    removed from the lake. Spark, Trino, polars, pyarrow and DuckDB read it with just the path.

    Example:

        tracewh export lake/ --db job.duckdb
        tracewh export job.trace.json --format chrome-trace --run dp4 --db job.duckdb
    """
    from .export import export_chrome_trace, export_lake

    if fmt not in ("parquet", "chrome-trace"):
        _fail(f"--format {fmt!r}: choose parquet or chrome-trace")
    try:
        con = connect(_db(db), read_only=True)
        if fmt == "parquet":
            report = export_lake(con, out, runs=run, force=force)
            err.print(f"exported {len(report.exported)} run(s), {report.rows:,} rows in "
                      f"{report.seconds:.1f} s; {len(report.skipped)} unchanged, "
                      f"{len(report.removed)} removed; lake {report.bytes / 1e6:.1f} MB at {out}",
                      highlight=False, markup=False)
            return
        runs = run or [r for (r,) in con.execute("SELECT run_id FROM runs ORDER BY 1").fetchall()]
        if out.suffix == ".json" and len(runs) != 1:
            _fail("a single .json file holds one run - pick it with --run, or give a folder")
        for name in runs:
            target = out if out.suffix == ".json" else out / (name.replace("/", "_") + ".trace.json")
            target.parent.mkdir(parents=True, exist_ok=True)
            events = export_chrome_trace(con, name, target)
            err.print(f"wrote {target} ({events:,} events)", highlight=False, markup=False)
    except TracewhError as exc:
        _fail(str(exc))


@app.command()
def check(db: DbOption = None, wait: WaitOption = 60.0) -> None:
    """Check the warehouse: every table reads back, every source complete or absent, runs,
    ranks and devices consistent, migrations as recorded, every view answers.

    Prints one line per problem and exits 1 if there is any (audits: sql/checks/*.sql).

    Example:

        tracewh check --db job.duckdb
    """
    from .check import check_warehouse

    path = _db(db)
    con = None
    try:
        con = connect(path, read_only=True, wait=wait, on_wait=_waiting, upgrade=False)
        problems = check_warehouse(con)
        sources = con.execute("SELECT count(*) FROM store.sources").fetchall()[0][0] \
            if not problems else None
    except TracewhError as exc:
        _fail(str(exc))
    finally:
        if con is not None:
            con.close()
    for problem in problems:
        err.print(f"[red]Problem:[/red] {escape(problem.message)}", highlight=False, soft_wrap=True)
    if problems:
        err.print(f"{path}: {len(problems)} problem(s)", highlight=False, soft_wrap=True,
                  markup=False)
        raise typer.Exit(1)
    err.print(f"{path}: consistent ({sources} source(s); every view answers)", highlight=False,
              soft_wrap=True, markup=False)


@app.command()
def shell(
    db: DbOption = None,
    write_access: Annotated[bool, typer.Option("--write", help="Open read-write")] = False,
) -> None:
    """Open the DuckDB shell on the warehouse (needs the `duckdb` CLI on PATH)."""
    path = _db(db)
    try:
        connect(path, read_only=True).close()  # create/upgrade views before the shell sees them
    except TracewhError as exc:
        _fail(str(exc))
    duckdb_cli = shutil.which("duckdb")
    if duckdb_cli is None:
        _fail("the DuckDB shell is not on PATH - install it with 'pip install duckdb-cli' "
              "(1.4 or newer reads tracewh warehouses)")
    args = [duckdb_cli, str(path)] if write_access else [duckdb_cli, "-readonly", str(path)]
    sys.stdout.flush()
    os.execv(duckdb_cli, args)


@app.command()
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
    wait: WaitOption = 60.0,
) -> None:
    """Write an offline HTML report (figures drawn from the metrics) and each figure as a file.

    DIR/index.html needs no network: figures and CSS are inlined.

    A figure whose metric has nothing to show is left out with a note saying why.

    Example:

        tracewh report --db job.duckdb --out report/ --size 5x3 --formats png,svg,eps
    """
    from .report import build_report, parse_formats, parse_size, print_summary

    con = None
    try:
        figure_size, figure_formats = parse_size(size), parse_formats(formats)
        con = connect(_db(db), read_only=True, wait=wait, on_wait=_waiting)
        result = build_report(con, out, runs=run, size=figure_size, formats=figure_formats,
                              dpi=dpi, second_axis=second_axis, db_label=str(_db(db)))
    except TracewhError as exc:
        _fail(str(exc))
    finally:
        if con is not None:
            con.close()
    print_summary(result)
    if result.problems:
        raise typer.Exit(1)


@metrics_app.command("list")
def metrics_list(fmt: FormatOption = Format.table, output: OutputOption = None) -> None:
    """List every metric with its version and summary."""
    import pyarrow as pa

    from .metrics import list_metrics

    try:
        found = list_metrics()
    except TracewhError as exc:
        _fail(str(exc))
    table = pa.table({
        "metric": [m.name for m in found],
        "version": [m.version for m in found],
        "grain": [m.grain for m in found],
        "params": [", ".join(p.name for p in m.params) for m in found],
        "summary": [m.summary for m in found],
    })
    write(table, fmt, output, 10_000, err)


@metrics_app.command("show")
def metrics_show(name: Annotated[str, typer.Argument(help="Metric name or .sql file")]) -> None:
    """Print a metric's file: its header and its SQL."""
    from .metrics import find_metric

    try:
        print(find_metric(name).path.read_text(), end="")
    except TracewhError as exc:
        _fail(str(exc))


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

        tracewh metrics transpile temporal_breakdown --dialect spark --param rank=0
    """
    from .metrics import find_metric
    from .transpile import lake_catalog, transpile_metric

    try:
        chosen = find_metric(name)
        catalog = lake_catalog(lake) if lake is not None else None
        print(transpile_metric(chosen, dialect, _parse_params(param or []), catalog) + ";")
    except (TracewhError, ValueError) as exc:
        _fail(str(exc))


@metrics_app.command("check")
def metrics_check() -> None:
    """Check every metric file and the lock: a changed metric, or a changed view or macro it
    reads, must raise its version (or be locked again with --same-answers)."""
    from .metrics import check_lock, list_metrics

    try:
        list_metrics()
        problems = check_lock()
    except TracewhError as exc:
        _fail(str(exc))
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

    try:
        for line in update_lock(same_answers=same_answers):
            err.print(line, highlight=False, markup=False)
    except TracewhError as exc:
        _fail(str(exc))


@generate_app.command("nsys")
def generate_nsys(
    out: Annotated[Path, typer.Argument(help="Directory to write the .sqlite files into")],
    ranks: Annotated[int, typer.Option(help="World size")] = 4,
    ranks_per_file: Annotated[int, typer.Option(help="Processes per report")] = 1,
    iterations: Annotated[int, typer.Option(help="Training iterations")] = 5,
    layers: Annotated[int, typer.Option(help="Model layers (kernels per iteration scale with it)")] = 4,
    seed: Annotated[int, typer.Option()] = 0,
) -> None:
    """Write an nsys SQLite export per rank for a synthetic job with known true numbers."""
    from .generate.nsys import JobSpec, generate_job

    truth = generate_job(out, JobSpec(world_size=ranks, ranks_per_file=ranks_per_file,
                                      iterations=iterations, layers=layers, seed=seed))
    for path in truth.files:
        err.print(f"wrote {path}", highlight=False, markup=False)


@generate_app.command("kineto")
def generate_kineto(
    out: Annotated[Path, typer.Argument(help="Directory to write the .pt.trace.json files into")],
    ranks: Annotated[int, typer.Option(help="World size")] = 4,
    iterations: Annotated[int, typer.Option(help="Training iterations")] = 3,
    layers: Annotated[int, typer.Option(help="Model layers (kernels per iteration scale with it)")] = 2,
    gzip: Annotated[bool, typer.Option(help="Write .json.gz")] = False,
    seed: Annotated[int, typer.Option()] = 0,
) -> None:
    """Write a PyTorch profiler (Kineto) trace per rank for a synthetic job with known numbers."""
    from .generate.kineto import KinetoJobSpec, generate_kineto_job

    truth = generate_kineto_job(out, KinetoJobSpec(world_size=ranks, iterations=iterations,
                                                   layers=layers, gzip=gzip, seed=seed))
    for path in truth.files:
        err.print(f"wrote {path}", highlight=False, markup=False)


if __name__ == "__main__":
    app()
