"""The stored tables, and the views a lake row-groups by rank, as DuckDB's own catalog lists
them: no list of tables is kept by hand. What a table is follows from its columns:
- a stored table (schema `store`) with a file_id column holds rows of one source each, and goes
  with its source (sql/remove_source.sql);
- one that also has a time (start_ns; ts_ns for samples and log lines) holds the source's events,
  which store.sources.rows counts (sql/source_rows.sql);
- a public view with a rank and a start_ns holds a rank's events, which a lake writes in a row group per rank.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import duckdb

from ..resources import sql_dir
from ..sqlscript import set_variables


def stored_tables(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Every table of schema store, with its columns in order."""
    tables: dict[str, list[str]] = {}
    for table, column in con.execute(
            "SELECT table_name, column_name FROM duckdb_columns() WHERE schema_name = 'store' "
            "AND database_name = current_database() ORDER BY table_name, column_index"
    ).fetchall():
        tables.setdefault(table, []).append(column)
    return tables


def rank_partitioned(columns: Iterable[str]) -> bool:
    """Does a view of these columns hold a rank's events (a lake writes a row group per rank)?"""
    return {"rank", "start_ns"} <= set(columns)


def run_catalog_script(con: duckdb.DuckDBPyConnection, path: Path) -> list[tuple]:
    """Run the statements of `path` in order and return the rows of the last. A query whose one
    column is named `statement` writes statements from the catalog: each row it returns is run
    in its place (in the DuckDB shell the query lists them)."""
    rows: list[tuple] = []
    for statement in con.extract_statements(path.read_text()):
        result = con.execute(statement)
        columns = [d[0] for d in result.description or []]
        rows = result.fetchall() if columns else []
        if columns == ["statement"]:
            for (generated,) in rows:
                con.execute(generated)
            rows = []
    return rows


def remove_source(con: duckdb.DuckDBPyConnection, file_id: int) -> None:
    """Every row of the source `file_id`, from every stored table that holds rows of a source."""
    set_variables(con, file_id=file_id)
    run_catalog_script(con, sql_dir() / "remove_source.sql")


def source_rows(con: duckdb.DuckDBPyConnection, first_file_id: int,
                last_file_id: int) -> dict[int, int]:
    """file_id -> its event rows stored, for the sources first_file_id to last_file_id."""
    set_variables(con, first_file_id=first_file_id, last_file_id=last_file_id)
    return dict(run_catalog_script(con, sql_dir() / "source_rows.sql"))


def event_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The stored tables of a source's events: those sql/source_rows.sql counts (it names them
    in the variable event_tables)."""
    source_rows(con, 0, -1)  # no source: it names the tables and counts nothing
    names = con.execute("SELECT getvariable('event_tables')").fetchall()[0][0] or []
    return [name.removeprefix("store.") for name in names]
