"""Kernel kind patterns (DESIGN section 6): tracewh's own in sql/kernel_kinds.csv, the user's
from a file of the same form (`tracewh kinds load FILE`), both kept in store.kernel_kinds.
kernel_kind(name) (sql/views/_kernel_kind.sql) takes the first pattern that matches: the user's
first, each file in its own order. Changing either classifies every stored kernel name again."""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb

from .errors import TracewhError
from .resources import sql_dir
from .sqlscript import rollback
from .store import derive

KINDS = ("comm", "compute", "sync", "other")
SHIPPED = "kernel_kinds.csv"


def shipped_path() -> Path:
    return sql_dir() / SHIPPED


def read_patterns(path: Path, con: duckdb.DuckDBPyConnection) -> list[tuple[int, str, str, str | None]]:
    """(position, kind, pattern, note) of a kinds file: a CSV with the header kind,pattern[,note].
    A bad line is an error naming the file and the line; `con` checks each pattern compiles."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise TracewhError(f"{path}: cannot read kernel kinds: {exc}") from None
    if not rows or [c.strip() for c in rows[0][:2]] != ["kind", "pattern"]:
        raise TracewhError(f"{path}:1: a kernel kinds file starts with the header kind,pattern,note")
    patterns = []
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        kind, pattern = (row + [""])[0].strip(), (row + ["", ""])[1]
        if kind not in KINDS:
            raise TracewhError(f"{path}:{line}: kind {kind!r} is not one of {', '.join(KINDS)}")
        if not pattern:
            raise TracewhError(f"{path}:{line}: the pattern is empty")
        try:
            con.execute("SELECT regexp_matches('', ?)", [pattern])
        except duckdb.Error as exc:
            raise TracewhError(f"{path}:{line}: pattern {pattern!r} is not a regular expression "
                               f"DuckDB reads: {str(exc).splitlines()[0]}") from None
        note = row[2].strip() if len(row) > 2 and row[2].strip() else None
        patterns.append((len(patterns) + 1, kind, pattern, note))
    return patterns


def store_patterns(con: duckdb.DuckDBPyConnection, origin: str, path: Path | None) -> None:
    """Replace the patterns of `origin` (user, tracewh) with those of `path` (None: none)."""
    rows = read_patterns(path, con) if path is not None else []
    con.execute("DELETE FROM store.kernel_kinds WHERE origin = ?", [origin])
    if rows:
        con.executemany("INSERT INTO store.kernel_kinds VALUES (?, ?, ?, ?, ?)",
                        [(origin, *row) for row in rows])


def compile_kernel_kind(con: duckdb.DuckDBPyConnection) -> None:
    """Make kernel_kind(name) again as a CASE of the patterns as constants, in precedence order:
    the same answers as its reference definition (sql/views/_kernel_kind.sql, a lookup in
    store.kernel_kinds), 200x faster (20,000 names: 0.03 s instead of 6.7 s), since DuckDB
    compiles a constant regular expression once, not once per row."""
    rows = con.execute("SELECT kind, pattern FROM store.kernel_kinds "
                       "ORDER BY origin <> 'user', position").fetchall()
    whens = "".join(f"\n        WHEN regexp_matches(name, '{pattern.replace(chr(39), chr(39) * 2)}') "
                    f"THEN '{kind}'" for kind, pattern in rows)  # kinds are checked words
    con.execute("CREATE OR REPLACE MACRO kernel_kind(name) AS\n    CASE\n"
                f"        WHEN name IS NULL OR name = '' THEN 'other'{whens}\n"
                "        ELSE 'compute'\n    END")


def use_shipped_patterns(con: duckdb.DuckDBPyConnection) -> None:
    """tracewh's patterns as this tracewh ships them (when the views are installed)."""
    store_patterns(con, "tracewh", shipped_path())
    compile_kernel_kind(con)


def load_user_patterns(con: duckdb.DuckDBPyConnection, path: Path | None) -> None:
    """The user's patterns become those of `path` (None: removed), and every kernel name is
    classified again, in one transaction."""
    con.execute("BEGIN TRANSACTION")
    try:
        store_patterns(con, "user", path)
        compile_kernel_kind(con)
        derive.refill(con, "kernel_names")
        con.execute("COMMIT")
    except Exception:
        rollback(con)
        raise
