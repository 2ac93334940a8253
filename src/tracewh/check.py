"""`tracewh check`: prove a warehouse consistent. The audits are SQL (sql/checks/*.sql, each a
query returning the offending rows with a one-line `problem`); this module only drives them.

A warehouse passes when
- every stored table reads back whole (a full scan verifies DuckDB's block checksums),
- every audit of sql/checks returns no row: each source complete or absent, no rows without a
  source, runs/ranks/devices consistent, migrations recorded with matching checksums, every view
  and macro present,
- every public view answers a query.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from .resources import sql_dir
from .store import event_tables, stored_tables
from .warehouse import load_migrations, public_view_names


@dataclass(frozen=True)
class Problem:
    check: str     # the audit (file stem), 'tables' or 'views'
    message: str   # one line: what is wrong and what to do


def checks_dir() -> Path:
    return sql_dir() / "checks"


def check_warehouse(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """Every problem of the warehouse on `con` (read-only is enough), in a stable order."""
    problems = _scan_tables(con)
    if any(p.check == "tables" for p in problems):
        return problems  # damaged or not a warehouse: the audits would only repeat it
    _prepare_inputs(con)
    for path in sorted(checks_dir().glob("*.sql")):
        if path.name.startswith("_"):
            continue  # an input of the audits, not an audit
        try:
            relation = con.sql(path.read_text())
            columns = relation.columns
            rows = relation.fetchall()
        except duckdb.Error as exc:
            problems.append(Problem(path.stem, f"audit {path.name} could not run: "
                                    f"{_first_line(exc)} - is this a tracewh warehouse?"))
            continue
        where = columns.index("problem")
        problems += [Problem(path.stem, str(row[where])) for row in rows]
    problems += _views_answer(con)
    return problems


def _scan_tables(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    """Read every stored table in full: a damaged block fails its checksum here."""
    problems = []
    tables = stored_tables(con)
    if not tables:
        return [Problem("tables", "no store.* tables - not a tracewh warehouse "
                        "(create one with 'tracewh ingest PATH')")]
    for table in tables:
        try:
            con.execute(f'SELECT count(*), sum(hash(t)) FROM store."{table}" AS t').fetchall()
        except duckdb.Error as exc:
            problems.append(Problem("tables", f"store.{table} cannot be read back: "
                                    f"{_first_line(exc)} - restore the warehouse from a copy, "
                                    "or rebuild it with tracewh ingest"))
    return problems


def _prepare_inputs(con: duckdb.DuckDBPyConnection) -> None:
    """The relations the audits read besides the warehouse: what this tracewh expects
    (migrations, views) and what the warehouse holds: the tables counted into sources.rows,
    and _stored_rows."""
    migrations = load_migrations()
    con.register("_expected_migrations", pa.table({
        "version": pa.array([m.version for m in migrations], pa.int32()),
        "name": [m.name for m in migrations],
        "checksum": [m.checksum for m in migrations],
    }))
    con.register("_expected_views", pa.table({"name": sorted(public_view_names())}))
    con.register("_counted_tables", pa.table({"name": sorted(event_tables(con))}))
    template = (checks_dir() / "_stored_rows.sql").read_text()
    parts = [
        template.replace("{table}", table).replace("{rank}", "rank" if "rank" in names else "NULL")
        for table, names in stored_tables(con).items()
        if "file_id" in names and "run_id" in names and table != "sources"
    ]
    con.execute("CREATE OR REPLACE TEMP TABLE _stored_rows AS\n"
                + "\nUNION ALL\n".join(_strip_comments(part) for part in parts))


def _strip_comments(sql: str) -> str:
    return "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))


def _views_answer(con: duckdb.DuckDBPyConnection) -> list[Problem]:
    problems = []
    views = con.execute(
        "SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' "
        "AND database_name = current_database() AND NOT internal ORDER BY view_name").fetchall()
    for (view,) in views:
        try:
            con.execute(f'SELECT * FROM main."{view}" LIMIT 1').fetchall()
        except duckdb.Error as exc:
            problems.append(Problem("views", f"view {view} does not answer: {_first_line(exc)} - "
                                    "open the warehouse read-write once (tracewh ingest) to "
                                    "recreate the views"))
    return problems


# Columns that record when an ingest ran, not what it stored.
_VOLATILE = {"file_id", "ingested_at", "created_at", "applied_at"}


def content_checksums(db: str | Path) -> dict[str, tuple]:
    """(row count, order-independent hash) of every stored table, rows keyed by their source's
    path instead of their file_id and without ingest times: two warehouses holding the same
    content from the same files give equal checksums, whatever order or retries built them."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        sums = {}
        for table, names in stored_tables(con).items():
            kept = ", ".join(f't."{c}"' for c in names if c not in _VOLATILE)
            source = ""
            if "file_id" in names:
                kept += ", s.path AS _source"
                source = " LEFT JOIN store.sources s ON s.file_id = t.file_id"
            sql = f'SELECT {kept} FROM store."{table}" t{source}'
            sums[table] = tuple(con.execute(
                f"SELECT count(*), sum(hash(x)) FROM ({sql}) x").fetchall()[0])
        return sums
    finally:
        con.close()


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
