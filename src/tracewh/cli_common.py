"""What every command shares: the options, the console for messages, the one-line failure,
and the two ways a command opens the warehouse (a read-only Session, or a connection)."""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape  # paths and messages are text, never markup

from .errors import TracewhError, storage_fault
from .output import Format, Rows, Units, printable, write

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


def waiting(message: str) -> None:
    err.print(message, highlight=False, soft_wrap=True, markup=False)


def say_problems(subject: Path, problems: list[str]) -> None:
    """A line per problem found in `subject` (a warehouse, a lake), then exit 1; none: return."""
    for problem in problems:
        err.print(f"[red]Problem:[/red] {escape(problem)}", highlight=False, soft_wrap=True)
    if problems:
        err.print(f"{subject}: {len(problems)} problem(s)", highlight=False, soft_wrap=True,
                  markup=False)
        raise typer.Exit(1)


def exit_with_error(message: str, code: int = 1) -> None:
    err.print(f"[red]Error:[/red] {escape(printable(message))}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


# duckdb, pyarrow, polars and sqlglot load inside the commands that use them: '--help' and
# 'metrics list' need none of them (bench/startup.py). Every command that opens the warehouse
# does it through one of these two, which close it whatever happens; a failure is said in one
# line by the group (cli._OneLineErrors).
@contextmanager
def open_session(db: Path | None, wait: float, lake: Path | None = None, **options):
    """A Session (session.py) on the warehouse, or with `lake` on a Parquet lake, for one
    command: read-only, locked down, closed at the end; a damaged file met while reading is
    said with what to run."""
    import duckdb

    from .mistakes import duckdb_message
    from .session import Session

    if lake is not None and db is not None:
        raise TracewhError("--db and --lake: give one (the warehouse, or a lake exported from one)")
    path = lake if lake is not None else db_path(db)
    with (Session.of_lake(lake, bound_process=own_process(), **options) if lake is not None
          else Session(path, wait=wait, on_wait=waiting, bound_process=own_process(),
                       **options)) as session:
        try:
            yield session
        except duckdb.Error as exc:  # e.g. a damaged page met while reading
            if isinstance(exc, duckdb.InterruptException) or storage_fault(exc, "read"):
                raise
            check = f"'tracewh export --check {path}'" if lake is not None else "'tracewh check'"
            raise TracewhError(f"{path}: {duckdb_message(exc)} - {check} tells what "
                               "is damaged") from None


def own_process() -> bool:
    """This process is the tracewh command itself (the console script, python -m tracewh.cli),
    not a program calling the CLI in-process (tests, notebooks), whose memory is its own."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return (spec is not None and spec.name == "tracewh.cli") or Path(sys.argv[0]).name == "tracewh"


@contextmanager
def open_warehouse(db: Path | str | None, wait: float, mode: str = "write"):
    """The warehouse connection of a command that does not only run queries, closed at the
    end (an unfinished write rolls back). `mode`: write (brought up to date first), read
    (read-only, refused when made by another version) or as-is (read-only, never upgraded)."""
    from .warehouse import connect, open_read_only

    path = db_path(Path(db) if db is not None else None)
    if mode == "read":
        con = open_read_only(path, wait=wait, on_wait=waiting)
    else:
        con = connect(path, read_only=mode == "as-is", upgrade=mode != "as-is", wait=wait,
                      on_wait=waiting)
    try:
        yield con
    finally:
        con.close()


def db_path(db: Path | None) -> Path:
    from .warehouse import default_db_path

    path = db if db is not None else default_db_path()
    try:
        with path.open("rb") as handle:
            is_sqlite = handle.read(16) == b"SQLite format 3\x00"
    except OSError:
        is_sqlite = False  # not there (yet) or unreadable: connect says which
    if is_sqlite:  # DuckDB would fetch its SQLite extension from the network to open it
        exit_with_error(f"{path} is an SQLite file (a trace?), not a tracewh warehouse - did "
                        f"you mean 'tracewh ingest {path}'?")
    return path


def parse_params(specs: list[str]) -> dict[str, str]:
    params = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        if not sep or not name.strip():
            raise TracewhError(f"--param {spec!r}: expected NAME=VALUE")
        params[name.strip()] = value
    return params


def say_rows_left_out(chosen, result, all_rows: str) -> None:
    """On stderr, when the metric kept its top rows and summed the others in a last 'rest'
    row: how many it left out (a terminal table may not reach that row)."""
    from .metrics import rows_left_out

    left_out = rows_left_out(chosen, result)
    if left_out:
        err.print(f"{chosen.name} kept its top rows: the last row, 'rest', stands for "
                  f"{left_out} ({all_rows} lists them)",
                  highlight=False, markup=False, soft_wrap=True)


def print_run_notes(context, advice: str = "") -> None:
    """What looks wrong with a run, whole, whatever the terminal's width."""
    for run_id, note in zip(context.column("run_id"), context.column("note")):
        if note:
            err.print(f"run {run_id!r}: {note}{advice if 'overlap' in note else ''}",
                      highlight=False, markup=False)
