"""The derive registry: what the warehouse stores beyond the rows a trace brings, each entry naming
the scripts that make it and the stored tables or columns they fill.

Ingest runs every entry's scripts for the sources it just wrote (`fill`). The warehouse records,
per entry, the checksum of its scripts and inputs (store.meta 'derive:NAME'); opening it for
writing fills again every entry made by other versions of them, or never (`refresh`), in one
transaction; a read-only open never does (warehouse._needs_upgrade sees `stale`). So a migration
only adds a column, and marks its entry stale if the scripts did not change
(`DELETE FROM store.meta WHERE key = 'derive:NAME'`): no migration copies derive SQL again.

The metrics lock (tracewh.sqlmodules) hashes, into every metric reading a stored table, the
scripts and inputs of the entries that fill it, and, through what those scripts read, the
entries and modules under them: a change to how the rows are made trips `tracewh metrics check`.

To derive a new column: add it in a migration, and its script here (or a statement in the
script of the entry it belongs to); mark the entry `spans_files` when it numbers things across
sources (a lake whose files were decoded apart fills it again over all of them). Every script's writes (INSERT INTO store.t; UPDATE store.t
SET c) must be among its entry's `fills` (checked with the lock: sqlmodules.registry_problems).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..resources import sql_dir
from ..sqlscript import rollback, run_script, set_variables
from .catalog import stored_tables

META_PREFIX = "derive:"
_ALL = (-(2**63), 2**63 - 1)  # every file_id


@dataclass(frozen=True)
class Derived:
    name: str
    scripts: tuple[str, ...]  # under sql/, run in order with first_file_id, last_file_id
    fills: tuple[str, ...]  # stored tables ('op_shapes') and columns ('kernels.alone') written
    inputs: tuple[str, ...] = ()  # other files under sql/ that shape what it fills
    per_source: bool = False  # filled again one source at a time (memory of one ingest)
    # what it makes is numbered across sources (ids, a warehouse-wide name list): a lake of
    # files decoded apart fills it again over all of them (tracewh.spark_ingest)
    spans_files: bool = False
    made_by: str = ""  # not run by this registry: who makes it (the lock still hashes it)

    def tables(self) -> set[str]:
        return {fill.split(".")[0] for fill in self.fills}


REGISTRY = (
    Derived("kernel_kinds", (), fills=("kernel_kinds",), inputs=("kernel_kinds.csv",),
            made_by="tracewh.kinds, from the CSV, when the views are installed"),
    # each distinct kernel name classified by kernel_kind(); the ENUM of GPU op names made again
    # (plain text instead when there are too many names for one: gpu_op_name_text.sql)
    Derived("kernel_names", ("kernel_names_add.sql", "views/_gpu_op_name.sql"),
            fills=("kernel_names",), inputs=("gpu_op_name_text.sql",), spans_files=True),
    Derived("gpu_op_timeline", ("gpu_op_timeline.sql",), per_source=True,
            fills=tuple(f"{t}.{c}" for t in ("kernels", "memcpy", "memset")
                        for c in ("alone", "device_prev_end_ns"))),
    Derived("op_shapes", ("op_shapes_add.sql",), per_source=True, spans_files=True,
            fills=("shape_sources", "op_shapes", "shaped_ops")),
    # what each NVTX range's name says (iteration, host phase, data loading, collective phase)
    Derived("nvtx_range_facts", ("nvtx_range_facts.sql",), per_source=True,
            fills=tuple(f"nvtx_ranges.{c}" for c in ("iteration", "phase", "data_loading",
                                                      "launch_phase"))),
    # each NVTX range's name as an integer of a warehouse-wide numbering (grouping by name)
    Derived("nvtx_names", ("nvtx_name_ids.sql",), per_source=True, spans_files=True,
            fills=("nvtx_names", "nvtx_ranges.name_id")),
    # which CUDA API calls wait for the GPU, and which are a runtime call's driver call
    Derived("cuda_api_roles", ("cuda_api_roles.sql",), per_source=True,
            fills=("cuda_api.in_runtime_call", "cuda_api.blocking_rule")),
    Derived("cpu_op_tree", ("ingest/kineto/22_cpu_op_tree.sql",),
            fills=("cpu_ops.depth", "cpu_ops.parent_id", "cpu_ops.self_ns"),
            made_by="the Kineto loader, as each file is staged (sql/ingest/kineto/store.sql)"),
)


def entry(name: str) -> Derived:
    return next(e for e in REGISTRY if e.name == name)


def spanning() -> tuple[Derived, ...]:
    """The entries this registry runs whose rows are numbered across sources, in order."""
    return tuple(e for e in REGISTRY if e.spans_files and not e.made_by)


def checksum(derived: Derived, root: Path | None = None) -> str:
    root = root or sql_dir()
    digest = hashlib.sha256()
    for name in (*derived.scripts, *derived.inputs):
        digest.update(name.encode() + b"\n" + (root / name).read_bytes())
    return digest.hexdigest()


def _run(con: duckdb.DuckDBPyConnection, derived: Derived, first: int, last: int) -> None:
    set_variables(con, first_file_id=first, last_file_id=last)
    for script in derived.scripts:
        run_script(con, sql_dir() / script)
        if script == "views/_gpu_op_name.sql" and _names_left_out(con):
            run_script(con, sql_dir() / "gpu_op_name_text.sql")


def _names_left_out(con: duckdb.DuckDBPyConnection) -> bool:
    """The ENUM gpu_op_name left the kernel names out: more than it takes (its file says)."""
    return con.execute(
        "SELECT EXISTS (SELECT 1 FROM store.kernel_names WHERE name NOT IN "
        "(SELECT unnest(enum_range(NULL::gpu_op_name))::VARCHAR))").fetchone()[0]


def fill(con: duckdb.DuckDBPyConnection, first_file_id: int, last_file_id: int) -> None:
    """What the sources first_file_id to last_file_id, just stored, imply: every entry, in order."""
    for derived in REGISTRY:
        if not derived.made_by:
            _run(con, derived, first_file_id, last_file_id)


def fill_entry(con: duckdb.DuckDBPyConnection, name: str, first_file_id: int,
               last_file_id: int) -> None:
    """Entry `name` alone, for the sources first_file_id to last_file_id (a lake assembled from
    files decoded apart fills what spans files: tracewh.spark_ingest)."""
    _run(con, entry(name), first_file_id, last_file_id)


def refill(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Entry `name` made again for every source (inside the caller's transaction): what it
    fills emptied, its scripts run, and its checksum recorded."""
    derived = entry(name)
    sources = _sources(con, derived) if derived.per_source else []
    for fill_ in derived.fills:
        table, _, column = fill_.partition(".")
        con.execute(f'UPDATE store."{table}" SET "{column}" = NULL' if column
                    else f'DELETE FROM store."{table}"')
    if derived.per_source:
        for file_id in sources:
            _run(con, derived, file_id, file_id)
    else:
        _run(con, derived, *_ALL)
    key = META_PREFIX + derived.name
    con.execute("DELETE FROM store.meta WHERE key = ?", [key])
    con.execute("INSERT INTO store.meta VALUES (?, ?)", [key, checksum(derived)])


def _sources(con: duckdb.DuckDBPyConnection, derived: Derived) -> list[int]:
    """The sources to fill `derived` for: those recorded, and any holding rows of what it fills."""
    tables = stored_tables(con)
    parts = ["SELECT file_id FROM store.sources", *(
        f'SELECT file_id FROM store."{t}"' for t in sorted(derived.tables())
        if "file_id" in tables.get(t, ()))]
    return [f for (f,) in con.execute(f"SELECT DISTINCT file_id FROM ({' UNION '.join(parts)}) "
                                      "ORDER BY file_id").fetchall()]


def stale(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The entries made by other versions of their scripts (or never), in registry order; an
    entry whose tables or columns the warehouse has not yet (a migration to come) is not."""
    recorded = dict(con.execute("SELECT key, value FROM store.meta WHERE key LIKE ?",
                                [META_PREFIX + "%"]).fetchall())
    tables = stored_tables(con)
    stored = {f"{t}.{c}" for t, columns in tables.items() for c in columns} | set(tables)
    return [e.name for e in REGISTRY
            if not e.made_by and set(e.fills) <= stored
            and recorded.get(META_PREFIX + e.name) != checksum(e)]


def refresh(con: duckdb.DuckDBPyConnection) -> None:
    """Every stale entry made again, in one transaction, once the views are installed (the
    scripts call their macros)."""
    installed = con.execute("SELECT count(*) FROM store.meta WHERE key = 'views_checksum'")
    names = stale(con) if installed.fetchall() == [(1,)] else []
    if not names:
        return
    con.execute("BEGIN TRANSACTION")
    try:
        for name in names:
            refill(con, name)
        con.execute("COMMIT")
    except Exception:
        rollback(con)
        raise
