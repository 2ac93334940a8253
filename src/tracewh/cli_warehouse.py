"""The warehouse file's upkeep: `remove` a source, `export` Parquet, `check`, `upgrade`, `shell`."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape  # paths and messages are text, never markup

from .cli_common import (DbOption, WaitOption, db_path, err, exit_with_error, open_session,
                         open_warehouse, say_problems, waiting)
from .output import write


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
        exit_with_error("say what to remove: --source FILE_ID_OR_PATH or --run NAME")
    from .mistakes import check_runs

    with open_warehouse(db, wait) as con:  # an unfinished removal rolls back
        ids = []
        for item in source or []:
            found = con.execute(
                "SELECT file_id FROM store.sources WHERE CAST(file_id AS VARCHAR) = ? OR path = ?",
                [item, str(Path(item).resolve()) if not item.isdigit() else item]).fetchall()
            if not found:
                exit_with_error(f"no source {item!r} in the warehouse - see "
                                "'tracewh sql \"SELECT * FROM sources\"'")
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
        exit_with_error(f"--format {fmt!r}: choose parquet or chrome-trace")
    if check:
        if not out.is_dir():
            exit_with_error(f"{out}: no lake folder here")
        with hold_folder(out, "lake", wait, waiting, waiting):
            problems, rows = check_lake(out)
        say_problems(out, problems)
        err.print(f"lake {out}: every (run, view) holds the rows its manifest says ({rows:,})",
                  highlight=False, markup=False)
        return
    if fmt == "parquet":  # the lake first: an export waiting for it does not hold the warehouse
        # the lake is written through DuckDB's COPY too: that session keeps file access
        with hold_folder(out, "lake", wait, waiting, waiting), \
                open_session(db, wait, lock=False) as session:
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
    with open_session(db, wait) as session:
        session.check_runs(run or [], series=True)
        runs = run or session.runs()
        session.con.execute("SET VARIABLE critical_path = ?", [critical_path])
        if out.suffix == ".json":  # one file: the runs given side by side (one when none given)
            if not run and len(runs) != 1:
                exit_with_error("a single .json file holds the runs given with --run (repeat it to "
                                "see runs side by side), or give a folder for one file per run")
            out.parent.mkdir(parents=True, exist_ok=True)
            events = export_chrome_trace(session.con, runs, out)
            err.print(f"wrote {out} ({events:,} events)", highlight=False, markup=False)
            return
        for name in runs:
            target = out / chrome_trace_name(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            events = export_chrome_trace(session.con, name, target)
            err.print(f"wrote {target} ({events:,} events)", highlight=False, markup=False)


def check(db: DbOption = None, wait: WaitOption = 60.0) -> None:
    """Check the warehouse: every table reads back, every source complete or absent, runs,
    ranks and devices consistent, migrations as recorded, every view answers.

    Prints one line per problem and exits 1 if there is any (audits: sql/checks/*.sql).

    Example:

    \b
        tracewh check --db job.duckdb
    """
    from .check import check_warehouse

    path = db_path(db)
    with open_warehouse(path, wait, "as-is") as con:
        problems = check_warehouse(con)
        sources = con.execute("SELECT count(*) FROM store.sources").fetchall()[0][0] \
            if not problems else None
        # which time base each source's times came from (store.sources.time_base)
        bases = [] if problems else con.execute(
            "SELECT count(*), coalesce(time_base, 'not recorded') FROM store.sources "
            "GROUP BY ALL ORDER BY 2").fetchall()
    say_problems(path, [problem.message for problem in problems])
    err.print(f"{path}: consistent ({sources} source(s); every view answers)", highlight=False,
              soft_wrap=True, markup=False)
    if bases:
        err.print("time bases: " + "; ".join(f"{n} {base}" for n, base in bases), highlight=False,
                  soft_wrap=True, markup=False)


def upgrade(db: DbOption = None, wait: WaitOption = 60.0) -> None:
    """Bring a warehouse made by another tracewh version up to date (migrations and views), in
    place; read-only commands never do this themselves."""
    path = db_path(db)
    if not path.exists():
        exit_with_error(f"{path}: no warehouse here - run 'tracewh ingest PATH' first")
    with open_warehouse(path, wait):
        pass  # opening it for writing brings it up to date
    err.print(f"{path}: up to date", highlight=False, soft_wrap=True, markup=False)


def shell(
    db: DbOption = None,
    write_access: Annotated[bool, typer.Option("--write", help="Open read-write")] = False,
    wait: WaitOption = 60.0,
) -> None:
    """Open the DuckDB shell on the warehouse (needs the `duckdb` CLI on PATH)."""
    path = db_path(db)
    # the user asked for writing: bring it up to date first; else refuse another version's
    with open_warehouse(path, wait, "write" if write_access else "read"):
        pass
    # on PATH, else beside this Python: tracewh's own environment, not activated
    duckdb_cli = shutil.which("duckdb") or shutil.which("duckdb", path=str(Path(sys.executable).parent))
    if duckdb_cli is None:
        exit_with_error("the DuckDB shell is not on PATH - install it with 'pip install "
                        "duckdb-cli' (1.4 or newer reads tracewh warehouses)")
    args = [duckdb_cli, str(path)] if write_access else [duckdb_cli, "-readonly", str(path)]
    sys.stdout.flush()
    os.execv(duckdb_cli, args)
