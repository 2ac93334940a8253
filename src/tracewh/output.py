"""Write query results as a terminal table, CSV, JSON, Parquet or Markdown."""

from __future__ import annotations

import json
import os
import re
import sys
from contextlib import contextmanager
from enum import Enum
from pathlib import Path

from typing import TYPE_CHECKING

from rich.console import Console

from .atomic import written_whole
from .errors import TracewhError, storage_fault

if TYPE_CHECKING:  # polars and pyarrow load only when there is a result to write
    import polars as pl
    import pyarrow as pa


class Format(str, Enum):
    table = "table"
    csv = "csv"
    json = "json"
    parquet = "parquet"
    markdown = "markdown"


def write(result: pa.Table, fmt: Format, output: Path | None, max_rows: int,
          err: Console) -> None:
    import polars as pl

    frame = pl.from_arrow(result)
    if fmt is Format.parquet:
        if output is None:
            raise ValueError("--format parquet needs --output FILE")
        with written_whole(output, "write the result") as scratch:
            frame.write_parquet(scratch)
        return
    if fmt is Format.table and output is None:
        with stdout_faults():
            _print_table(frame, max_rows, err)
        return
    frame = _flatten_nested(frame)
    text = {
        Format.csv: lambda: frame.write_csv(),
        Format.json: lambda: frame.write_json(),
        Format.markdown: lambda: markdown(frame),
        Format.table: lambda: markdown(frame),
    }[fmt]()
    if output is None:
        if sys.stdout.isatty():  # a person reads it: no raw escape sequences
            text = printable(text)
        with stdout_faults():
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        with written_whole(output, "write the result") as scratch:
            scratch.write_text(text)


@contextmanager
def stdout_faults():
    """Flush standard output at the end of the block, so that a full or closed one (/dev/full,
    a pipe that ended) is reported as one line by the command, not by Python at exit."""
    try:
        yield
        sys.stdout.flush()
    except OSError as exc:
        _drop_stdout()
        fault = storage_fault(exc, "write the result", "standard output")
        raise fault or TracewhError(f"standard output: cannot write the result: {exc}") from None


def _drop_stdout() -> None:
    """Send what is left in stdout's buffer to /dev/null, or Python's flush at exit fails
    again with a message of its own."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no file descriptor (a test's captured stdout)
        pass


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` with control characters shown as \\xNN: an escape sequence in a kernel name or a
    path must not recolour the terminal or set its title."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _flatten_nested(frame: pl.DataFrame) -> pl.DataFrame:
    """Lists and structs as JSON text, for the text formats that have no nesting."""
    import polars as pl

    nested = [name for name, dtype in frame.schema.items() if dtype.is_nested()]
    return frame.with_columns(
        pl.col(name).map_elements(lambda v: json.dumps(v.to_list() if hasattr(v, "to_list") else v),
                                  return_dtype=pl.String)
        for name in nested
    )


def markdown(frame: pl.DataFrame) -> str:
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    for row in frame.iter_rows():
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value).replace("|", "\\|")


def _print_table(frame: pl.DataFrame, max_rows: int, err: Console) -> None:
    from rich.table import Table
    from rich.text import Text  # data is text, never markup: "[layer 1]" must print as written

    out = Console()
    if not out.is_terminal:  # piped or in make: no terminal width to fit, so do not squeeze
        out = Console(width=100_000)
    title = None
    if frame.columns[:2] == ["metric", "version"] and frame.height:
        # a metric's name and version are the same on every row: say them once, as the title
        title = f"{frame['metric'][0]} v{frame['version'][0]}"
        frame = frame.drop("metric", "version")
    table = Table(show_lines=False, header_style="bold", title=title and Text(title),
                  title_justify="left")
    for column in frame.columns:
        numeric = frame.schema[column].is_numeric()
        # long kernel names would wrap every row into a tower: cut them, the full text is
        # one --format csv away
        table.add_column(Text(printable(column)), justify="right" if numeric else "left", no_wrap=True,
                         overflow="ellipsis", max_width=None if numeric else 48)
    for row in frame.head(max_rows).iter_rows():
        table.add_row(*(Text(printable(_cell(v))) for v in row))
    out.print(table)
    if frame.height > max_rows:
        err.print(f"({frame.height - max_rows:,} more rows; see them all with --format csv "
                  f"--output FILE, or raise --max-rows)")
