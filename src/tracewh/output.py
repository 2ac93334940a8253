"""Write query results as a terminal table, CSV, JSON, Parquet or Markdown."""

from __future__ import annotations

import json
import os
import re
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from .atomic import written_whole
from .errors import TracewhError, storage_fault

if TYPE_CHECKING:  # rich, polars and pyarrow load only when there is a result to write
    import polars as pl
    import pyarrow as pa
    from rich.console import Console


class Format(str, Enum):
    table = "table"
    csv = "csv"
    json = "json"
    parquet = "parquet"
    markdown = "markdown"


class Units(str, Enum):
    """Time unit of the `*_ns` columns, as `nsys stats --timeunit`; auto: per cell in a table,
    ns in a file. nsys' own words (nsec, usec, msec, sec) name the same units."""
    auto = "auto"
    ns = "ns"
    us = "us"
    ms = "ms"
    s = "s"

    @classmethod
    def _missing_(cls, value):
        alias = {"nsec": "ns", "usec": "us", "msec": "ms", "sec": "s"}.get(str(value).lower())
        return cls(alias) if alias else None


_EXTENSIONS = {".csv": Format.csv, ".json": Format.json, ".parquet": Format.parquet,
               ".md": Format.markdown}
_SCALE = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
_EPOCH_NS = 10**17  # a *_ns value above this is a moment (1973 or later), not a duration
_TEXT_WIDTH = 48    # a long kernel name takes no more than this of the room numbers need
_TELLING_WIDTH = 32  # a text column a metric names in `-- show:` keeps at least this much


def chosen_format(fmt: Format | None, output: Path | None) -> Format:
    """--format when given, else what -o's extension says, else a table (Markdown in a file)."""
    if fmt is not None:
        return fmt
    return _EXTENSIONS.get(output.suffix.lower(), Format.table) if output else Format.table


_NUMERIC_TYPES = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
                  "UINTEGER", "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL"}


@dataclass
class Rows:
    """A result as Python values: a terminal table needs neither pyarrow nor polars, which take
    longer to load than a small command takes to run (bench/startup.py)."""

    columns: list[str]
    numeric: list[bool]
    rows: list[tuple]
    total: int  # rows in the whole result; `rows` may hold only the first ones

    @classmethod
    def of_arrow(cls, table: pa.Table, limit: int | None = None) -> Rows:
        import pyarrow as pa

        head = table.slice(0, limit) if limit is not None else table
        numeric = [pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)
                   for t in table.schema.types]
        return cls(table.column_names, numeric,
                   list(zip(*(column.to_pylist() for column in head.columns))), table.num_rows)

    @classmethod
    def of_relation(cls, relation) -> Rows:
        """All rows of a DuckDB relation (a small one: runs, a catalogue)."""
        rows = relation.fetchall()
        numeric = [str(t).split("(")[0] in _NUMERIC_TYPES for t in relation.types]
        return cls(list(relation.columns), numeric, rows, len(rows))

    def column(self, name: str) -> list:
        at = self.columns.index(name)
        return [row[at] for row in self.rows]

    def to_arrow(self) -> pa.Table:
        import pyarrow as pa

        return pa.table({name: self.column(name) for name in self.columns})


def write(result: pa.Table | Rows, fmt: Format | None, output: Path | None, max_rows: int,
          err: Console, *, units: Units = Units.auto, title_columns: bool = False,
          show: Sequence[str] = ()) -> None:
    """`title_columns`: the first two columns are a metric's name and version, the same on every
    row; a terminal table says them once, as its title. `show`: the columns a narrow terminal
    keeps, most telling first (a metric's `-- show:`)."""
    fmt = chosen_format(fmt, output)
    if fmt is Format.table and output is None:
        rows = result if isinstance(result, Rows) else Rows.of_arrow(result, max_rows)
        with stdout_faults():
            _print_table(rows, max_rows, err, units, title_columns, show)
        return
    import polars as pl

    table = result.to_arrow() if isinstance(result, Rows) else result
    if units not in (Units.auto, Units.ns):
        table, moments = in_units(table, units)
        if moments:
            err.print(f"{', '.join(moments)}: UTC moments, kept in ns", highlight=False,
                      markup=False, soft_wrap=True)
    frame = pl.from_arrow(table)
    if fmt is Format.parquet:
        if output is None:
            raise TracewhError("--format parquet needs --output FILE")
        with written_whole(output, "write the result") as scratch:
            frame.write_parquet(scratch)
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


def in_units(table: pa.Table, units: Units) -> tuple[pa.Table, list[str]]:
    """`table` for a file with its `*_ns` durations in `units`, as a terminal table shows them:
    DOUBLE values, the column renamed `*_us` (`*_ms`, `*_s`). A column of moments (UTC epoch
    ns, as a table prints them as times) keeps its exact ns: returned with their names."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names, columns, moments = [], [], []
    for name, column in zip(table.column_names, table.columns):
        numeric = pa.types.is_integer(column.type) or pa.types.is_floating(column.type) \
            or pa.types.is_decimal(column.type)
        if name.endswith("_ns") and numeric:
            low, high = pc.min_max(column).values()
            if max(abs(low.as_py() or 0), abs(high.as_py() or 0)) >= _EPOCH_NS:
                moments.append(name)
            else:
                name = f"{name[:-3]}_{units.value}"
                column = pc.divide(column.cast(pa.float64(), safe=False), _SCALE[units.value])
        names.append(name)
        columns.append(column)
    return pa.table(columns, names=names), moments


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


# --- the terminal table ----------------------------------------------------------------------

def number(value) -> str:
    """A number as people read it: separators, no exponent, two decimals at most."""
    if isinstance(value, Decimal):
        value = int(value) if value == value.to_integral_value() else float(value)
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.2f}" if abs(value) >= 1 else f"{value:.3g}"


def duration(value, units: Units) -> str:
    """A `*_ns` value: a moment as UTC time, a duration in `units` (auto: 14.46 ms)."""
    if value is None:
        return ""
    value = float(value) if isinstance(value, Decimal) else value
    if abs(value) >= _EPOCH_NS:
        moment = datetime.fromtimestamp(int(value) // 10**9, timezone.utc)
        return f"{moment:%Y-%m-%d %H:%M:%S}.{int(value) % 10**9:09d}"
    if units is Units.ns:
        return number(value)
    if units is not Units.auto:
        return number(value / _SCALE[units.value])
    for unit in ("s", "ms", "us"):
        if abs(value) >= _SCALE[unit]:
            return f"{value / _SCALE[unit]:,.2f} {unit}"
    return f"{number(value)} ns"


def _header(name: str, is_time: bool, units: Units) -> str:
    if not is_time or units is Units.ns:
        return name
    return name[:-3] if units is Units.auto else f"{name[:-3]} ({units.value})"


def _print_table(result: Rows, max_rows: int, err: Console, units: Units,
                 title_columns: bool, show: Sequence[str] = ()) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text  # data is text, never markup: "[layer 1]" must print as written

    out = Console()
    if not out.is_terminal:  # piped: fit the terminal the pipe ends in, if any
        out = Console(width=_piped_width())
    title, first = None, 0
    if title_columns and result.columns[:2] == ["metric", "version"]:
        if result.rows:
            title = f"{result.rows[0][0]} v{result.rows[0][1]}"
        first = 2
    shown = result.rows[:max_rows]
    columns = []  # (header, cells, numeric)
    for at in range(first, len(result.columns)):
        name, numeric = result.columns[at], result.numeric[at]
        is_time = numeric and name.endswith("_ns")
        values = [row[at] for row in shown]
        if is_time:
            cells = [duration(v, units) for v in values]
        elif numeric:
            cells = [number(v) for v in values]
        else:
            cells = ["" if v is None else printable(str(v)) for v in values]
        columns.append((printable(_header(name, is_time, units)), cells, numeric))
    names = result.columns[first:]
    widths, dropped = fit_columns(
        [(len(h), max((len(c) for c in cells), default=0), numeric)
         for h, cells, numeric in columns], out.width,
        [names.index(name) for name in show if name in names])
    table = Table(show_lines=False, header_style="bold", title=title and Text(title),
                  title_justify="left")
    kept = [(column, width) for column, width in zip(columns, widths) if width is not None]
    for (header, _, numeric), width in kept:
        # a number is never cut (it would read as another number); text is cut with an ellipsis
        table.add_column(Text(header), justify="right" if numeric else "left", no_wrap=True,
                         overflow="ellipsis", width=width)
    for i in range(len(shown)):
        table.add_row(*(Text(cells[i]) for (_, cells, _), _ in kept))
    out.print(table)
    if dropped:
        err.print(f"(left out to fit {out.width} columns: "
                  f"{', '.join(columns[i][0] for i in dropped)}; all with --format csv)",
                  highlight=False, markup=False)
    if result.total > max_rows:
        err.print(f"({result.total - max_rows:,} more rows: raise --max-rows, "
                  f"or --format csv -o FILE)", highlight=False, markup=False)
    if result.total == 0:
        err.print("(no rows)", highlight=False, markup=False)


def _piped_width() -> int:
    """Columns for a table whose stdout is piped (`| less`, `> file`): $COLUMNS when set, else
    the width of the terminal the command was typed in (stderr or stdin), else no limit (make,
    CI: nothing to fit, so nothing is squeezed)."""
    if os.environ.get("COLUMNS", "").isdigit() and int(os.environ["COLUMNS"]) > 0:
        return int(os.environ["COLUMNS"])
    for stream in (sys.stderr, sys.stdin):
        try:
            if stream is not None and stream.isatty():
                return os.get_terminal_size(stream.fileno()).columns
        except (OSError, ValueError):
            continue
    return 100_000


def fit_columns(columns: list[tuple[int, int, bool]], room: int,
                importance: Sequence[int] = ()) -> tuple[list, list[int]]:
    """Widths for (header width, widest cell, numeric) columns within `room` characters, and
    the columns left out. A number keeps its full width; text shrinks to 48 characters, then to
    20 (or its header; 32 for a column `importance` names). When even that does not fit, columns are left out, the least telling
    first. `importance` (a metric's `-- show:`, most telling first) says which: the columns it
    does not name give way first, from the right, then those it names from its end. Without
    it: text after the first text column that follows the first two (a name's short form, a
    kind), then numbers from the right (the headline figures come first, min/max/stddev last),
    then the rest; the first two (what a row is about) stay."""
    full = [max(h, c) for h, c, _ in columns]
    least = [w if numeric else min(w, max(h, _TELLING_WIDTH if i in importance else 20))
             for i, (w, (h, _, numeric)) in enumerate(zip(full, columns))]
    widths = [w if numeric else min(w, _TEXT_WIDTH) for w, (_, _, numeric) in zip(full, columns)]
    kept = list(range(len(columns)))

    def needed(sizes):  # rich's box: a bar before each column and at the end, a space either side
        return sum(sizes[i] for i in kept) + 3 * len(kept) + 1

    if importance:
        order = [i for i in reversed(kept) if i not in importance] + list(importance)[::-1]
    else:
        texts = [i for i in kept[2:] if not columns[i][2]]
        order = (texts[:0:-1] + [i for i in reversed(kept[2:]) if columns[i][2]] + texts[:1]
                 + list(reversed(kept[:2])))
    while len(kept) > 1 and needed(least) > room:  # the most telling column always stays
        kept.remove(order.pop(0))
    for i in sorted(kept, key=lambda i: -widths[i]):  # the widest text gives way first
        if needed(widths) > room and not columns[i][2]:
            widths[i] = max(least[i], widths[i] - (needed(widths) - room))
    for i in kept:  # room to spare after leaving columns out: cut text less
        if not columns[i][2] and needed(widths) < room:
            widths[i] = min(full[i], widths[i] + room - needed(widths))
    dropped = [i for i in range(len(columns)) if i not in kept]
    return [widths[i] if i in kept else None for i in range(len(columns))], dropped
