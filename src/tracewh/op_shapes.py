"""The shapes of the kernel-launching ops, stored per source (migration 0016).

Ingest stores a source's rows (sql/op_shapes_add.sql, run by tracewh.ingest.derive). Rows made by
another version of that script must not mix with new ones: the warehouse records the script's
checksum (store.meta 'op_shapes_script'), and opening it for writing refills every source when
the script differs (`refresh`), as a migration would; a read-only open never refills (see
warehouse._needs_upgrade). The sources stored before migration 0016 are filled the same way."""

from __future__ import annotations

import hashlib

import duckdb

from .resources import sql_dir
from .sqlscript import run_script, set_variables

SCRIPT = "op_shapes_add.sql"
KEY = "op_shapes_script"


def script_checksum() -> str:
    return hashlib.sha256((sql_dir() / SCRIPT).read_bytes()).hexdigest()


def stale(con: duckdb.DuckDBPyConnection) -> bool:
    """Were the stored shapes made by another version of the script (or never)? A warehouse
    before migration 0016 has none to be stale."""
    tables = con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = "
                         "current_database() AND schema_name = 'store' AND table_name = "
                         "'shaped_ops'").fetchall()
    stored = con.execute("SELECT value FROM store.meta WHERE key = ?", [KEY]).fetchall()
    return tables == [(1,)] and stored != [(script_checksum(),)]


def fill(con: duckdb.DuckDBPyConnection, first_file_id: int, last_file_id: int) -> None:
    """The shapes of the sources first_file_id to last_file_id stored (again)."""
    set_variables(con, first_file_id=first_file_id, last_file_id=last_file_id)
    run_script(con, sql_dir() / SCRIPT)


def refresh(con: duckdb.DuckDBPyConnection) -> None:
    """Every source's shapes stored again, in one transaction, if the script changed."""
    if not stale(con):
        return
    con.execute("BEGIN TRANSACTION")
    try:
        for table in ("shaped_ops", "shape_sources", "op_shapes"):
            con.execute(f"DELETE FROM store.{table}")
        sources = con.execute("SELECT DISTINCT file_id FROM store.cpu_ops ORDER BY file_id")
        for (file_id,) in sources.fetchall():
            fill(con, file_id, file_id)  # one source at a time: memory stays that of one ingest
        con.execute("DELETE FROM store.meta WHERE key = ?", [KEY])
        con.execute("INSERT INTO store.meta VALUES (?, ?)", [KEY, script_checksum()])
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
