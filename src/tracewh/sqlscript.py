"""Run the SQL files of sql/ with variables bound through DuckDB's SET VARIABLE."""

from __future__ import annotations

from pathlib import Path

import duckdb

from .resources import sql_dir


def set_variables(con: duckdb.DuckDBPyConnection, **values) -> None:
    for name, value in values.items():
        con.execute(f"SET VARIABLE {name} = ?", [value])


def run_script(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    for statement in con.extract_statements(path.read_text()):
        con.execute(statement)


def run_folder(con: duckdb.DuckDBPyConnection, folder: str) -> None:
    """Run every .sql file of sql/<folder> in name order."""
    for path in sorted((sql_dir() / folder).glob("*.sql")):
        run_script(con, path)
