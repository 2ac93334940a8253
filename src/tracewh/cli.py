"""The `tracewh` command line: ingest traces, query metrics, look around the warehouse."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape  # paths and messages are text, never markup

from . import __version__, cliparams
from .cli_generate import generate_app
from .errors import StorageFault, TracewhError, storage_fault
from .output import Format, Rows, Units, chosen_format, printable, write

INTERRUPTED = "interrupted (Ctrl-C); nothing more was done"
cliparams.install()  # plain values converted without importing pydantic


class _OneLineErrors(typer.core.TyperGroup):
    """Every command ends a failure it did not foresee (a full disk, a read-only folder, a
    DuckDB error, Ctrl-C) with one line and a non-zero exit, never a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except TracewhError as exc:
            _fail(str(exc))
        except KeyboardInterrupt:
            _fail(INTERRUPTED, 130)
        except MemoryError:  # past the process's data bound (session.bound_process_memory)
            _fail(f"tracewh {ctx.invoked_subcommand or ''}: out of memory beyond --memory-limit "
                  "(a result too large to hand on: ask fewer rows, e.g. a top or a window, or "
                  "raise --memory-limit)")
        except Exception as exc:  # duckdb is imported lazily: classified by what was loaded
            duckdb = sys.modules.get("duckdb")
            if (duckdb is not None and isinstance(exc, duckdb.InterruptException)) or (
                    type(exc) is RuntimeError and str(exc) == "Query interrupted"):
                _fail(INTERRUPTED, 130)  # DuckDB's word for Ctrl-C during a call on this thread
            if isinstance(exc, OSError) or (duckdb is not None and isinstance(exc, duckdb.Error)):
                command = f"tracewh {ctx.invoked_subcommand or ''}".strip()
                fault = storage_fault(exc, f"finish '{command}'")
                said = (str(exc).splitlines() or [type(exc).__name__])[0]  # some say nothing
                _fail(str(fault) if fault else f"{command}: {said}")
            raise


app = typer.Typer(
    cls=_OneLineErrors,
    help="A SQL-first warehouse for distributed-training profiles (Nsight Systems, PyTorch profiler).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # click's plain help: it reflows first sentences to the terminal, shows no '<bool>' on
    # flags and never splits a choice list mid-word (typer's rich help did all three)
    rich_markup_mode=None,
)
metrics_app = typer.Typer(help="List, show and check the metric catalogue.", no_args_is_help=True)
app.add_typer(metrics_app, name="metrics")
kinds_app = typer.Typer(help="The kernel kind patterns: list them, load your own.",
                        no_args_is_help=True)
app.add_typer(kinds_app, name="kinds")
app.add_typer(generate_app, name="generate")

err = Console(stderr=True, soft_wrap=True)  # piped stderr keeps whole lines

DbOption = Annotated[
    Optional[Path],
    typer.Option("--db", help="Warehouse file", dir_okay=False,
                 show_default="./tracewh.duckdb or $TRACEWH_DB"),
]
LakeOption = Annotated[Optional[Path], typer.Option(
    "--lake", help="Read a Parquet lake written by 'tracewh export' instead of a warehouse",
    file_okay=False)]
FormatOption = Annotated[Optional[Format], typer.Option(
    "--format", "-f", help="Output format", show_default="from the -o extension, else table")]


def _units(text: str) -> Units:
    """--units: ns, us, ms, s or auto, or nsys' words for them (nsec, usec, msec, sec)."""
    try:
        return Units(text)
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a time unit: auto, ns, us, ms, s (or nsys' "
                                 "nsec, usec, msec, sec)") from None


UnitsOption = Annotated[Units, typer.Option(
    "--units", parser=_units, metavar="[auto|ns|us|ms|s]",
    help="Time unit of *_ns durations, as nsys stats --timeunit (nsec, usec, msec, sec too); "
         "in csv, json and parquet the columns become *_us, *_ms, *_s (UTC moments stay ns)")]
OutputOption = Annotated[
    Optional[Path], typer.Option("--output", "-o", help="Write to this file instead of stdout")
]
MaxRowsOption = Annotated[int, typer.Option(help="Rows shown by --format table")]
WaitOption = Annotated[float, typer.Option(
    "--wait", min=0, help="Seconds to wait while another tracewh holds the warehouse")]
QueryMemoryOption = Annotated[str, typer.Option(
    "--memory-limit", envvar="TRACEWH_MEMORY_LIMIT",
    help="DuckDB memory limit for the query, and the most its result may hold")]
TimeoutOption = Annotated[Optional[float], typer.Option(
    "--timeout", min=0, help="Stop the query after this many seconds",
    show_default="none")]


def _waiting(message: str) -> None:
    err.print(message, highlight=False, soft_wrap=True, markup=False)


def _problems(subject: Path, problems: list[str]) -> None:
    """A line per problem found in `subject` (a warehouse, a lake), then exit 1; none: return."""
    for problem in problems:
        err.print(f"[red]Problem:[/red] {escape(problem)}", highlight=False, soft_wrap=True)
    if problems:
        err.print(f"{subject}: {len(problems)} problem(s)", highlight=False, soft_wrap=True,
                  markup=False)
        raise typer.Exit(1)


def _fail(message: str, code: int = 1) -> None:
    err.print(f"[red]Error:[/red] {escape(printable(message))}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


# duckdb, pyarrow, polars and sqlglot load inside the commands that use them: '--help' and
# 'metrics list' need none of them (bench/startup.py). Every command that opens the warehouse
# does it through one of these two, which close it whatever happens; a failure is said in one
# line by the group (_OneLineErrors).
@contextmanager
def _session(db: Path | None, wait: float, lake: Path | None = None, **options):
    """A Session (session.py) on the warehouse, or with `lake` on a Parquet lake, for one
    command: read-only, locked down, closed at the end; a damaged file met while reading is
    said with what to run."""
    import duckdb

    from .mistakes import duckdb_message
    from .session import Session

    if lake is not None and db is not None:
        raise TracewhError("--db and --lake: give one (the warehouse, or a lake exported from one)")
    path = lake if lake is not None else _db(db)
    with (Session.of_lake(lake, bound_process=_own_process(), **options) if lake is not None
          else Session(path, wait=wait, on_wait=_waiting, bound_process=_own_process(),
                       **options)) as session:
        try:
            yield session
        except duckdb.Error as exc:  # e.g. a damaged page met while reading
            if isinstance(exc, duckdb.InterruptException) or storage_fault(exc, "read"):
                raise
            check = f"'tracewh export --check {path}'" if lake is not None else "'tracewh check'"
            raise TracewhError(f"{path}: {duckdb_message(exc)} - {check} tells what "
                               "is damaged") from None


def _own_process() -> bool:
    """This process is the tracewh command itself (the console script, python -m tracewh.cli),
    not a program calling the CLI in-process (tests, notebooks), whose memory is its own."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return (spec is not None and spec.name == "tracewh.cli") or Path(sys.argv[0]).name == "tracewh"


@contextmanager
def _warehouse(db: Path | str | None, wait: float, mode: str = "write"):
    """The warehouse connection of a command that does not only run queries, closed at the
    end (an unfinished write rolls back). `mode`: write (brought up to date first), read
    (read-only, refused when made by another version) or as-is (read-only, never upgraded)."""
    from .warehouse import connect, open_read_only

    path = _db(Path(db) if db is not None else None)
    if mode == "read":
        con = open_read_only(path, wait=wait, on_wait=_waiting)
    else:
        con = connect(path, read_only=mode == "as-is", upgrade=mode != "as-is", wait=wait,
                      on_wait=_waiting)
    try:
        yield con
    finally:
        con.close()


def _db(db: Path | None) -> Path:
    from .warehouse import default_db_path

    path = db if db is not None else default_db_path()
    try:
        with path.open("rb") as handle:
            is_sqlite = handle.read(16) == b"SQLite format 3\x00"
    except OSError:
        is_sqlite = False  # not there (yet) or unreadable: connect says which
    if is_sqlite:  # DuckDB would fetch its SQLite extension from the network to open it
        _fail(f"{path} is an SQLite file (a trace?), not a tracewh warehouse - did you mean "
              f"'tracewh ingest {path}'?")
    return path


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
        "power); repeatable. Without --run it joins the run whose GPUs and time it covers")] = None,
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
    log: Annotated[Optional[list[Path]], typer.Option(
        "--log", help="A training log, or a folder of *.log files (one run each, named after "
        "the file, unless --run or traces beside it say otherwise); repeatable")] = None,
    log_pattern: Annotated[Optional[str], typer.Option(
        help="Regular expression for other timer lines: each named group a timer in ms, or "
        "(?P<name>...) with (?P<ms>...); (?P<rank>...) and (?P<step>...) are read too")] = None,
    name_template: Annotated[Optional[str], typer.Option(
        help="What file names say about the run, e.g. 'log-{model_size}-tp{tp}-dp{dp}-"
        "mbs{micro_batch}'; fields that are no runs column go to runs.params")] = None,
    run_param: Annotated[Optional[list[str]], typer.Option(
        "--run-param", help="KEY=VALUE of the runs' configuration (tp=4, zero_stage=2, ...), "
        "trusted above everything else; repeatable")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar")] = False,
    wait: WaitOption = 60.0,
) -> None:
    """Load Nsight Systems SQLite exports (and .nsys-rep reports), PyTorch profiler (Kineto)
    traces and sampled time series (--series) into the warehouse.

    Each file is one transaction: a bad file is reported on one line and leaves the warehouse
    as it was; the same file again adds nothing.

    Example:

    \b
        tracewh ingest runs/ --db job.duckdb
        tracewh ingest --series gpu_monitor.csv --run dp4 --db job.duckdb
        tracewh ingest --log sweep/ --name-template 'log-{model_size}-tp{tp}-dp{dp}'
    """
    if not paths and not series and not log:
        _fail("nothing to ingest: give trace files or folders, --log FILE_OR_DIR or --series FILE.csv")
    import duckdb

    from .warehouse import checked_memory_limit
    from .ingest import default_memory_limit, ingest_paths
    from .ingest.config import compile_template, parse_run_params
    from .ingest.discover import parse_rank_map
    from .ingest.logs import compile_pattern

    path = _db(db)
    fresh = not path.exists()
    rules = parse_rank_map(rank_map or [])
    log_options = {"log_pattern": compile_pattern(log_pattern),
                   "name_template": compile_template(name_template),
                   "run_params": parse_run_params(run_param or [])}
    limit = checked_memory_limit(memory_limit or default_memory_limit(jobs))
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    started = time.perf_counter()
    progress = Progress(
        TextColumn("[bold]ingest"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[mb]:.1f} MB"), TimeElapsedColumn(),
        console=err, disable=quiet or not err.is_terminal, transient=True,
    )
    task = progress.add_task("ingest", total=0, mb=0.0)
    results = []
    said = Counter()  # a line said for many files is said three times, then counted

    def say(kind: str, text: str) -> None:
        said[kind] += 1
        if said[kind] <= 3:
            progress.console.print(text, highlight=False, markup=False)

    def on_start(candidates):
        progress.update(task, total=len(candidates))

    def on_file(result):
        results.append(result)
        if result.status == "failed":
            progress.console.print(f"[red]Error:[/red] {escape(result.message)}", highlight=False)
        elif result.status == "skipped" and not quiet:
            say("skipped", f"skipped {result.message}")
        for warning in result.warnings if not quiet else ():
            say(warning, f"warning: {result.path}: {warning}")
        if result.run_id is not None or result.status != "failed":
            progress.update(task, advance=1, mb=progress.tasks[0].fields["mb"] + result.bytes / 1e6)

    def on_note(note):
        if not quiet:
            progress.console.print(f"note: {note}", highlight=False, markup=False)

    with _warehouse(path, wait) as con:  # an interrupted file rolls back when it closes
        con.execute("SET memory_limit = ?", [limit])
        # Commits go to the write-ahead log (durable, replayed after a crash); the compressing
        # checkpoint into the file then runs once at the end instead of after every file (15%
        # faster on the 8 x 100 MB Kineto bench with the old multi-process decoder; about the
        # same CPU with today's in-process one).
        con.execute("SET checkpoint_threshold = '1GB'")
        try:
            with progress:
                ingest_paths(con, paths or [], run=run, rank_rules=rules, replace=replace,
                             jobs=jobs, series=series, series_options={
                                 "time_column": series_time_column,
                                 "time_unit": series_time_unit, "tz": series_tz,
                                 "host": series_host},
                             logs=log, log_options=log_options, on_file=on_file,
                             on_start=on_start, on_note=on_note)
        except StorageFault:  # the final checkpoint failed: what was stored is in the WAL
            _summarize(results, time.perf_counter() - started, quiet)
            raise
        except (KeyboardInterrupt, duckdb.InterruptException, RuntimeError) as exc:
            # Ctrl-C inside a DuckDB statement comes back as RuntimeError('Query interrupted')
            if isinstance(exc, RuntimeError) and "interrupted" not in str(exc).lower():
                raise
            con.close()  # the file being written rolls back before the user is told
            stored = sum(r.status in ("ingested", "replaced") for r in results)
            _fail(f"interrupted: {stored} file(s) stored, each complete; the file(s) being "
                  "written were left out. Run the same command again: stored files are "
                  "skipped, the rest load", 130)
        for kind, count in said.items():
            if count > 3 and kind != "skipped":
                err.print(f"(warning '{kind}' for {count - 3} more file(s))", highlight=False,
                          markup=False)
        loaded = sorted({r.run_id for r in results if r.status in ("ingested", "replaced")})
        # after a storage fault (said) DuckDB may have invalidated the warehouse: no more reads
        if loaded and not quiet and not any(r.storage_fault for r in results):
            from .session import run_context

            _print_run_notes(run_context(con, loaded), " - they share a folder (or --run); if "
                             "they are separate captures, 'tracewh remove --run' it and ingest "
                             "each with its own --run NAME")
    if fresh and not loaded:  # nothing stored: leave no empty warehouse behind
        for leftover in (path, path.with_name(path.name + ".wal")):
            leftover.unlink(missing_ok=True)
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

    params = _parse_params(param or [])
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
    with _session(db, wait, lake, memory_limit=memory_limit, timeout=timeout) as session:
        result = session.query(chosen, params)
        if fail and "worse" not in result.column_names:
            raise TracewhError(f"--fail: {chosen.name} has no 'worse' column to judge by "
                               "(regressions has one; for two runs: 'tracewh diff --fail-on')")
        write(result, fmt, output, max_rows, err, units=units, title_columns=True,
              show=chosen.show)
    _say_rows_left_out(chosen, result, "--param top=0")
    if fail:
        _fail_on_worse(result)
    if result.num_rows == 0 and bind_values(chosen, params).get("include_first_last") is False:
        err.print(f"{chosen.name} leaves out the first and last iteration of each rank "
                  "(profilers cut them short): --param include_first_last=true keeps them",
                  highlight=False, markup=False)


def _say_rows_left_out(chosen, result, all_rows: str) -> None:
    """On stderr, when the metric kept its top rows and summed the others in a last 'rest'
    row: how many it left out (a terminal table may not reach that row)."""
    from .metrics import rows_left_out

    left_out = rows_left_out(chosen, result)
    if left_out:
        err.print(f"{chosen.name} kept its top rows: the last row, 'rest', stands for "
                  f"{left_out} ({all_rows} lists them)",
                  highlight=False, markup=False, soft_wrap=True)


def _fail_on_worse(result) -> None:
    """Exit 1, naming them, when rows of `result` say worse = true."""
    worse = [row for row in result.to_pylist() if row["worse"]]
    for row in worse[:10]:
        err.print("worse: " + ", ".join(f"{k}={v}" for k, v in row.items()
                                        if k in ("run_id", "section", "item", "deviation_pct")),
                  highlight=False, markup=False, soft_wrap=True)
    if worse:
        _fail(f"{len(worse)} row(s) say worse = true" + (" (the first 10 above)"
                                                          if len(worse) > 10 else ""))


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
        _fail("give the query as an argument or as --file FILE.sql (one of the two)")
    if file is not None:
        try:
            statement = file.read_text()
        except OSError as exc:
            raise TracewhError(f"{file}: cannot read: {exc.strerror or exc}") from None
    parse_one_statement(statement)  # refuse what cannot be checked before opening anything
    with _session(db, wait, lake, memory_limit=memory_limit, timeout=timeout) as session:
        write(session.sql(statement), fmt, output, max_rows, err, units=units)


@app.command()
def runs(db: DbOption = None, fmt: FormatOption = None, output: OutputOption = None,
         units: UnitsOption = Units.auto, wait: WaitOption = 60.0,
         memory_limit: QueryMemoryOption = "1GB", lake: LakeOption = None) -> None:
    """List the runs in the warehouse (or a lake, --lake): when and how long, ranks present
    against the world size, hosts, GPUs, iterations, warnings, and what looks wrong
    (sql/run_context.sql)."""
    from .session import run_context

    with _session(db, wait, lake, memory_limit=memory_limit) as session:
        result = run_context(session.con)
        write(result, fmt, output, 10_000, err, units=units, show=(
            "run_id", "span_ns", "iterations", "ranks", "world_size", "gpus", "hosts", "note"))
        if chosen_format(fmt, output) is Format.table:
            _print_run_notes(result)


def _print_run_notes(context, advice: str = "") -> None:
    """What looks wrong with a run, whole, whatever the terminal's width."""
    for run_id, note in zip(context.column("run_id"), context.column("note")):
        if note:
            err.print(f"run {run_id!r}: {note}{advice if 'overlap' in note else ''}",
                      highlight=False, markup=False)


@app.command()
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
        given = _db(db) if _db(db).exists() else ":memory:"
        with _warehouse(given, 0.0, "read" if given != ":memory:" else "write") as con:
            described = con.execute(f"DESCRIBE {name.lower()}").fetchall()  # a known view name
        columns = [(column, "ENUM" if str(kind).startswith("ENUM(") else str(kind))
                   for column, kind, *_ in described]  # an ENUM lists every name it holds
        docs = column_docs(path, [c for c, _ in columns])
        table = Rows(["column", "type", "meaning"], [False] * 3,
                     [(c, kind, docs.get(c, "")) for c, kind in columns], len(columns))
    write(table, fmt, output, 10_000, err)


@app.command()
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

    with _session(db, wait, memory_limit=memory_limit) as session:
        session.check_runs(run or [])
        context = run_context(session.con, run)
        if not context.rows:
            raise TracewhError("the warehouse holds no runs: 'tracewh ingest PATH' first")
        out = Console()
        for i, row in enumerate(context.rows):
            if i:
                out.print()
            print_summary(summarize_run(session, row[0], dict(zip(context.columns, row))), out)


@app.command()
def remove(
    db: DbOption = None,
    source: Annotated[Optional[list[str]], typer.Option(help="A file_id or path; repeatable")] = None,
    run: Annotated[Optional[list[str]], typer.Option(help="A run name; repeatable")] = None,
    wait: WaitOption = 60.0,
) -> None:
    """Remove sources or whole runs, and exactly their rows.

    Example:

    \b
        tracewh remove --run param/dlrm_kineto
    """
    from .ingest import remove_source

    if not source and not run:
        _fail("say what to remove: --source FILE_ID_OR_PATH or --run NAME")
    from .mistakes import check_runs

    with _warehouse(db, wait) as con:  # an unfinished removal rolls back
        ids = []
        for item in source or []:
            found = con.execute(
                "SELECT file_id FROM store.sources WHERE CAST(file_id AS VARCHAR) = ? OR path = ?",
                [item, str(Path(item).resolve()) if not item.isdigit() else item]).fetchall()
            if not found:
                _fail(f"no source {item!r} in the warehouse - see 'tracewh sql \"SELECT * FROM sources\"'")
            ids += [f for (f,) in found]
        check_runs(con, run or [])
        for name in run or []:
            ids += [f for (f,) in con.execute(
                "SELECT file_id FROM store.sources WHERE run_id = ?", [name]).fetchall()]
        con.execute("BEGIN TRANSACTION")
        for file_id in sorted(set(ids)):
            remove_source(con, file_id)
        con.execute("COMMIT")
        err.print(f"removed {len(set(ids))} source(s)")


@app.command()
def export(
    out: Annotated[Path, typer.Argument(help="Lake folder (parquet), or trace file/folder (chrome-trace)")],
    db: DbOption = None,
    run: Annotated[Optional[list[str]], typer.Option(help="Only this run; repeatable")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f",
                                     help="parquet (a lake of every view) or chrome-trace")] = "parquet",
    force: Annotated[bool, typer.Option(help="Rewrite runs that are already up to date")] = False,
    check: Annotated[bool, typer.Option(
        "--check", help="Read the lake at OUT: does every (run, view) hold the rows its "
        "manifest says? One line per difference, exit 1 if any")] = False,
    critical_path: Annotated[bool, typer.Option(
        "--critical-path", help="chrome-trace of one run: each step's critical path across ranks "
        "as flow arrows (critical_path ranks=all; a graph walk per step)")] = False,
    wait: WaitOption = 60.0,
) -> None:
    """Write every view as Parquet, hive-partitioned by run (a row group per rank for the big
    ones); or a run as one Chrome/Perfetto trace with all its ranks, clock offsets applied.

    Parquet: runs already exported and unchanged are skipped; runs gone from the warehouse are
    removed from the lake. Spark, Trino, polars, pyarrow and DuckDB read it with just the path.
    One export writes a lake at a time; another waits for it (--wait) or says it is busy.

    Example:

    \b
        tracewh export lake/ --db job.duckdb
        tracewh export --check lake/
        tracewh export job.trace.json --format chrome-trace --run dp4 --db job.duckdb
        tracewh export pair.trace.json --format chrome-trace --run before --run after
    """
    from .export import check_lake, chrome_trace_name, export_chrome_trace, export_lake
    from .folderlock import hold_folder

    if fmt not in ("parquet", "chrome-trace"):
        _fail(f"--format {fmt!r}: choose parquet or chrome-trace")
    if check:
        if not out.is_dir():
            _fail(f"{out}: no lake folder here")
        with hold_folder(out, "lake", wait, _waiting, _waiting):
            problems, rows = check_lake(out)
        _problems(out, problems)
        err.print(f"lake {out}: every (run, view) holds the rows its manifest says ({rows:,})",
                  highlight=False, markup=False)
        return
    if fmt == "parquet":  # the lake first: an export waiting for it does not hold the warehouse
        # the lake is written through DuckDB's COPY too: that session keeps file access
        with hold_folder(out, "lake", wait, _waiting, _waiting), \
                _session(db, wait, lock=False) as session:
            session.check_runs(run or [])
            report = export_lake(session.con, out, runs=run, force=force)
        for problem in report.problems:
            err.print(f"[red]Error:[/red] {escape(problem)}", highlight=False, soft_wrap=True)
        err.print(f"exported {len(report.exported)} run(s), {report.rows:,} rows in "
                  f"{report.seconds:.1f} s; {len(report.skipped)} unchanged, "
                  f"{len(report.removed)} removed; lake {report.bytes / 1e6:.1f} MB at {out}",
                  highlight=False, markup=False)
        if report.problems:
            raise typer.Exit(1)
        return
    with _session(db, wait) as session:
        session.check_runs(run or [], series=True)
        runs = run or session.runs()
        session.con.execute("SET VARIABLE critical_path = ?", [critical_path])
        if out.suffix == ".json":  # one file: the runs given side by side (one when none given)
            if not run and len(runs) != 1:
                _fail("a single .json file holds the runs given with --run (repeat it to see "
                      "runs side by side), or give a folder for one file per run")
            out.parent.mkdir(parents=True, exist_ok=True)
            events = export_chrome_trace(session.con, runs, out)
            err.print(f"wrote {out} ({events:,} events)", highlight=False, markup=False)
            return
        for name in runs:
            target = out / chrome_trace_name(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            events = export_chrome_trace(session.con, name, target)
            err.print(f"wrote {target} ({events:,} events)", highlight=False, markup=False)


@app.command()
def check(db: DbOption = None, wait: WaitOption = 60.0) -> None:
    """Check the warehouse: every table reads back, every source complete or absent, runs,
    ranks and devices consistent, migrations as recorded, every view answers.

    Prints one line per problem and exits 1 if there is any (audits: sql/checks/*.sql).

    Example:

    \b
        tracewh check --db job.duckdb
    """
    from .check import check_warehouse

    path = _db(db)
    with _warehouse(path, wait, "as-is") as con:
        problems = check_warehouse(con)
        sources = con.execute("SELECT count(*) FROM store.sources").fetchall()[0][0] \
            if not problems else None
        # which time base each source's times came from (store.sources.time_base)
        bases = [] if problems else con.execute(
            "SELECT count(*), coalesce(time_base, 'not recorded') FROM store.sources "
            "GROUP BY ALL ORDER BY 2").fetchall()
    _problems(path, [problem.message for problem in problems])
    err.print(f"{path}: consistent ({sources} source(s); every view answers)", highlight=False,
              soft_wrap=True, markup=False)
    if bases:
        err.print("time bases: " + "; ".join(f"{n} {base}" for n, base in bases), highlight=False,
                  soft_wrap=True, markup=False)


@app.command()
def upgrade(db: DbOption = None, wait: WaitOption = 60.0) -> None:
    """Bring a warehouse made by another tracewh version up to date (migrations and views), in
    place; read-only commands never do this themselves."""
    path = _db(db)
    if not path.exists():
        _fail(f"{path}: no warehouse here - run 'tracewh ingest PATH' first")
    with _warehouse(path, wait):
        pass  # opening it for writing brings it up to date
    err.print(f"{path}: up to date", highlight=False, soft_wrap=True, markup=False)


@app.command()
def shell(
    db: DbOption = None,
    write_access: Annotated[bool, typer.Option("--write", help="Open read-write")] = False,
    wait: WaitOption = 60.0,
) -> None:
    """Open the DuckDB shell on the warehouse (needs the `duckdb` CLI on PATH)."""
    path = _db(db)
    # the user asked for writing: bring it up to date first; else refuse another version's
    with _warehouse(path, wait, "write" if write_access else "read"):
        pass
    # on PATH, else beside this Python: tracewh's own environment, not activated
    duckdb_cli = shutil.which("duckdb") or shutil.which("duckdb", path=str(Path(sys.executable).parent))
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
    params = _parse_params(param or [])
    with _session(db, wait) as session:
        result = build_report(session, out, runs=run, size=figure_size, formats=figure_formats,
                              dpi=dpi, second_axis=second_axis, line=line_style,
                              db_label=str(session.path),
                              params=params)
    print_summary(result)
    if result.problems:
        raise typer.Exit(1)


DIFF_LEVELS = ("all", "kernel", "cpu_op", "cuda_api", "nvtx")


@app.command()
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
    with _session(db, wait) as session:
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
    _say_rows_left_out(find_metric("run_diff"), changes, "--top 0")
    for verdict in verdicts:
        err.print(verdict.line(), highlight=False, markup=False, soft_wrap=True)
    if any(v.failed for v in verdicts):
        raise typer.Exit(1)


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
    print(transpile_metric(chosen, dialect, _parse_params(param or []), catalog) + ";")


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

    with _session(db, wait) as session:
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
        _fail("give a kinds FILE to load, or --clear to remove yours")
    with _warehouse(db, wait) as con:
        load_user_patterns(con, file)
        patterns, names = con.execute(
            "SELECT (SELECT count(*) FROM store.kernel_kinds WHERE origin = 'user'), "
            "(SELECT count(*) FROM store.kernel_names)").fetchone()
    err.print(f"{patterns} pattern(s) of yours; {names} kernel name(s) classified again",
              highlight=False, markup=False)


if __name__ == "__main__":
    app()
