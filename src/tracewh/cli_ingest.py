"""`tracewh ingest`: traces, series and logs into the warehouse, with a line per file."""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape  # paths and messages are text, never markup

from .cli_common import (DbOption, WaitOption, db_path, err, exit_with_error, open_warehouse,
                         print_run_notes)
from .errors import StorageFault


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
    engine: Annotated[str, typer.Option(
        help="duckdb: into the warehouse (--db); spark: each file decoded on a Spark executor "
        "straight into the Parquet lake --lake, as 'tracewh export' writes it")] = "duckdb",
    lake: Annotated[Optional[Path], typer.Option(help="The lake --engine spark writes")] = None,
    master: Annotated[str, typer.Option(help="Spark master for --engine spark")] = "local[2]",
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
        tracewh ingest runs/ --engine spark --lake lake/ --master 'local[2]'
        tracewh ingest --series gpu_monitor.csv --run dp4 --db job.duckdb
        tracewh ingest --log sweep/ --name-template 'log-{model_size}-tp{tp}-dp{dp}'
    """
    if not paths and not series and not log:
        exit_with_error("nothing to ingest: give trace files or folders, --log FILE_OR_DIR or "
                        "--series FILE.csv")
    if engine not in ("duckdb", "spark"):
        exit_with_error(f"--engine {engine}: not an engine - duckdb or spark")
    if engine == "spark":
        given = [name for name, value in (("--db", db), ("--series", series), ("--log", log),
                                          ("--replace", replace), ("--jobs", jobs)) if value]
        if lake is None or given or not paths:
            exit_with_error("--engine spark takes trace files or folders and --lake DIR" + (
                f", not {', '.join(given)}" if given else ""))
        _ingest_spark(paths, lake, master, run, rank_map, memory_limit, quiet)
        return
    if lake is not None:
        exit_with_error("--lake is what --engine spark writes: for the warehouse, 'tracewh "
                        "export LAKE' after ingest")
    import duckdb

    from .warehouse import checked_memory_limit
    from .ingest import default_memory_limit, ingest_paths
    from .ingest.config import compile_template, parse_run_params
    from .ingest.discover import parse_rank_map
    from .ingest.logs import compile_pattern

    path = db_path(db)
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

    with open_warehouse(path, wait) as con:  # an interrupted file rolls back when it closes
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
            exit_with_error(f"interrupted: {stored} file(s) stored, each complete; the file(s) "
                            "being written were left out. Run the same command again: stored "
                            "files are skipped, the rest load", 130)
        for kind, count in said.items():
            if count > 3 and kind != "skipped":
                err.print(f"(warning '{kind}' for {count - 3} more file(s))", highlight=False,
                          markup=False)
        loaded = sorted({r.run_id for r in results if r.status in ("ingested", "replaced")})
        # after a storage fault (said) DuckDB may have invalidated the warehouse: no more reads
        if loaded and not quiet and not any(r.storage_fault for r in results):
            from .session import run_context

            print_run_notes(run_context(con, loaded), " - they share a folder (or --run); if "
                             "they are separate captures, 'tracewh remove --run' it and ingest "
                             "each with its own --run NAME")
    if fresh and not loaded:  # nothing stored: leave no empty warehouse behind
        for leftover in (path, path.with_name(path.name + ".wal")):
            leftover.unlink(missing_ok=True)
    _summarize(results, time.perf_counter() - started, quiet)
    if any(r.status == "failed" for r in results):
        raise typer.Exit(1)


def _ingest_spark(paths: list[Path], lake: Path, master: str, run: str | None,
                  rank_map: list[str] | None, memory_limit: str | None, quiet: bool) -> None:
    from .ingest.discover import parse_rank_map
    from .spark import spark_session
    from .spark_ingest import ingest_lake
    from .warehouse import checked_memory_limit

    rules = parse_rank_map(rank_map or [])
    limit = checked_memory_limit(memory_limit or "512MB")  # per file decoding on an executor
    spark = spark_session(master)
    done = ingest_lake(spark, paths, lake, run, rules, limit,
                       on_note=None if quiet else lambda note: err.print(
                           f"note: {note}", highlight=False, markup=False))
    for result in done.results:
        if result.status == "failed":
            err.print(f"[red]Error:[/red] {escape(result.message)}", highlight=False)
        elif result.status == "skipped" and not quiet:
            err.print(f"skipped {result.message}", highlight=False, markup=False)
    _summarize(done.results, done.seconds, quiet)
    if done.export and not quiet:
        err.print(f"lake {lake}: {len(done.export.exported)} run(s) written, "
                  f"{done.export.rows:,} rows ({done.decoded} decode(s) on Spark)",
                  highlight=False, markup=False)
    if any(r.status == "failed" for r in done.results):
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
