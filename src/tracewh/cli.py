"""The `tracewh` command line: ingest traces, query metrics, look around the warehouse. The
commands live in cli_* modules by what they do; this module makes the app and lists them."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from . import __version__, cliparams, cli_compare, cli_ingest, cli_query, cli_warehouse
from .cli_common import exit_with_error
from .cli_generate import generate_app
from .cli_metrics import kinds_app, metrics_app
from .errors import TracewhError, storage_fault

INTERRUPTED = "interrupted (Ctrl-C); nothing more was done"
cliparams.install()  # plain values converted without importing pydantic


class _OneLineErrors(typer.core.TyperGroup):
    """Every command ends a failure it did not foresee (a full disk, a read-only folder, a
    DuckDB error, Ctrl-C) with one line and a non-zero exit, never a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except TracewhError as exc:
            exit_with_error(str(exc))
        except KeyboardInterrupt:
            exit_with_error(INTERRUPTED, 130)
        except MemoryError:  # past the process's data bound (session.bound_process_memory)
            exit_with_error(f"tracewh {ctx.invoked_subcommand or ''}: out of memory beyond "
                            "--memory-limit (a result too large to hand on: ask fewer rows, e.g. "
                            "a top or a window, or raise --memory-limit)")
        except Exception as exc:  # duckdb is imported lazily: classified by what was loaded
            duckdb = sys.modules.get("duckdb")
            if (duckdb is not None and isinstance(exc, duckdb.InterruptException)) or (
                    type(exc) is RuntimeError and str(exc) == "Query interrupted"):
                # DuckDB's word for Ctrl-C during a call on this thread
                exit_with_error(INTERRUPTED, 130)
            if isinstance(exc, OSError) or (duckdb is not None and isinstance(exc, duckdb.Error)):
                command = f"tracewh {ctx.invoked_subcommand or ''}".strip()
                fault = storage_fault(exc, f"finish '{command}'")
                said = (str(exc).splitlines() or [type(exc).__name__])[0]  # some say nothing
                exit_with_error(str(fault) if fault else f"{command}: {said}")
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
app.add_typer(metrics_app, name="metrics")
app.add_typer(kinds_app, name="kinds")
app.add_typer(generate_app, name="generate")


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


# in the order `tracewh --help` lists them
for command in (cli_ingest.ingest, cli_query.query, cli_query.sql, cli_query.runs,
                cli_query.views, cli_query.summary, cli_warehouse.remove, cli_warehouse.export,
                cli_warehouse.check, cli_warehouse.upgrade, cli_warehouse.shell,
                cli_compare.report, cli_compare.diff):
    app.command()(command)


if __name__ == "__main__":
    app()
