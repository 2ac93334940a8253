"""A scratch warehouse in a worker process: run a source's mapping SQL where it was decoded.

Mapping a big trace (JSON fields, iterations, nesting, collectives) costs more than appending
its rows. Each decoder process keeps an in-memory DuckDB with the same stored tables and macros
as the real warehouse, runs the format's sql/ingest/<format>/ files there, and hands back the
rows of each stored table as Arrow; the writer only appends them. The SQL is the same files
either way.
"""

from __future__ import annotations

import os
import tempfile

import duckdb
import pyarrow as pa

from ..warehouse import install_views, migrate
from .sqlscript import run_folder, set_variables

_scratch: duckdb.DuckDBPyConnection | None = None

# The stored tables a source's rows go to (bookkeeping tables are the writer's).
EVENT_TABLES = ("cuda_api", "cpu_ops", "nvtx_ranges", "kernels", "memcpy", "memset", "nccl_ops",
                "ranks", "devices")
FILE_PLACEHOLDER = -1  # file_id and rank are the writer's to give; rows carry this until then


def scratch() -> duckdb.DuckDBPyConnection:
    """This process's scratch warehouse, made once."""
    global _scratch
    if _scratch is None:
        con = duckdb.connect(":memory:")
        con.execute("SET memory_limit = ?", [os.environ.get("TRACEWH_WORKER_MEMORY", "256MB")])
        con.execute("SET threads = 1")  # one decoder process per core already
        con.execute("SET enable_progress_bar = false")  # workers must not draw on the terminal
        con.execute("SET temp_directory = ?", [tempfile.mkdtemp(prefix="tracewh-scratch-")])
        migrate(con)
        install_views(con)
        _scratch = con
    return _scratch


def map_source(folder: str, inputs: dict[str, pa.Table], setup: str | None = None,
               **variables) -> dict[str, pa.Table]:
    """Run sql/<folder>/ over the Arrow `inputs` (registered under their names), after the SQL
    script `setup` if given, and return the rows it wrote, per stored table. file_id and rank
    are FILE_PLACEHOLDER in them."""
    con = scratch()
    for table in EVENT_TABLES:
        con.execute(f"DELETE FROM store.{table}")
    for name, table in inputs.items():
        con.register(name, table)
    try:
        set_variables(con, file_id=FILE_PLACEHOLDER, rank=FILE_PLACEHOLDER, **variables)
        if setup:
            for statement in con.extract_statements(setup):
                con.execute(statement)
        run_folder(con, folder)
        return {table: _arrow(con, f"SELECT * FROM store.{table}") for table in EVENT_TABLES}
    finally:
        for name in inputs:
            con.unregister(name)
        temps = con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()
        for (name,) in temps:
            con.execute(f'DROP TABLE IF EXISTS temp."{name}"')


def _arrow(con: duckdb.DuckDBPyConnection, sql: str) -> pa.Table:
    relation = con.sql(sql)
    method = getattr(relation, "to_arrow_table", None) or relation.arrow
    return method()


def append(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table], file_id: int,
           rank: int) -> None:
    """Append mapped rows to the warehouse under their real file_id and rank."""
    for table, rows in tables.items():
        if rows.num_rows == 0:
            continue
        con.register("_mapped_rows", rows)
        try:
            con.execute(
                f"INSERT INTO store.{table} BY NAME SELECT * REPLACE "
                f"(CAST(? AS BIGINT) AS file_id, CAST(? AS INTEGER) AS rank) FROM _mapped_rows",
                [file_id, rank])
        finally:
            con.unregister("_mapped_rows")
