"""Run the SQL files of sql/ with variables bound through DuckDB's SET VARIABLE, in transactions
that end cleanly."""

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


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple]) -> None:
    """INSERT INTO `table` (a name, with its column list if need be) the rows, in one statement:
    one execution per row (executemany) costs about as much as a query each."""
    if rows:
        values = ", ".join(["(" + ", ".join("?" * len(rows[0])) + ")"] * len(rows))
        con.execute(f"INSERT INTO {table} VALUES {values}", [v for row in rows for v in row])


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """End the transaction that failed. A COMMIT that failed (a full disk) has ended it already:
    DuckDB's 'cannot rollback - no transaction is active' would then hide why."""
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass
