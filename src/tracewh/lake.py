"""Read a Parquet lake written by `tracewh export`, without the warehouse it came from.

    manifest = read_manifest("lake/")   # checked: a lake, of this layout and these views' columns
    con = connect_lake("lake/")         # DuckDB over the lake: the metrics run on it unchanged

`connect_lake` gives an in-memory DuckDB database where each view of the lake is a view of the
same name over its Parquet files (hive-partitioned by run; the manifest's runs only, so a run
an unfinished export left behind is not seen; each column of the view's type), and every macro
and view of sql/lib and sql/views that reads no stored table is created on top, in install
order, as in a warehouse. What reads the stored tables themselves (the views the lake holds,
op_shapes, the ENUM of GPU op names, kernel_kind's patterns) is left out: a query that needs it
fails, naming it. tracewh's own checks read a few stored tables for speed (the runs there are,
a window against the capture, `tracewh runs`); the views of those tables pass every stored
row through with its columns, so here `store.<table>` is that view.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb

from .errors import TracewhError
from .export import LAYOUT, MANIFEST
from .sqlmodules import _code_only, install_order, load_modules

# stored tables tracewh's checks read (mistakes.py, sql/mistakes, sql/run_context.sql), each the
# view of its name: one row per stored row, the stored columns those checks read
STORED_AS_VIEWS = ("runs", "ranks", "sources", "kernels", "memcpy", "memset", "cuda_api",
                   "cpu_ops")
_CREATES_VIEW = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+(?:main\.)?\"?(\w+)", re.I)
_READS_STORE = re.compile(r"\bstore\.", re.I)


class NotALake(TracewhError):
    """A folder that holds no lake this tracewh can read."""


def read_manifest(lake: str | Path) -> dict:
    """The lake's manifest.json, checked: a lake of this layout whose views have the columns
    this tracewh's views have (NotALake, one line, otherwise)."""
    lake = Path(lake)
    path = lake / MANIFEST
    again = f"export it again: 'tracewh export {lake} --db WAREHOUSE'"
    if not lake.is_dir():
        raise NotALake(f"{lake}: no such folder - a lake is written by 'tracewh export {lake}'")
    try:
        manifest = json.loads(path.read_text())
        schemas, runs = manifest["schemas"], manifest["runs"]
        if not isinstance(schemas, dict) or not isinstance(runs, dict):
            raise TypeError
    except FileNotFoundError:
        raise NotALake(f"{lake}: not a lake (no {MANIFEST}) - a lake is written by "
                       f"'tracewh export {lake}'") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise NotALake(f"{path}: not a lake manifest this tracewh reads "
                       f"({type(exc).__name__}) - {again}") from None
    if manifest.get("lake_layout", 1) != LAYOUT:
        raise NotALake(f"{lake}: a lake of an older layout ({manifest.get('lake_layout', 1)}, "
                       f"this tracewh reads {LAYOUT}) - {again}")
    difference = _schema_difference(manifest)
    if difference:
        made_by = manifest.get("tracewh_version", "an older tracewh")
        raise NotALake(f"{lake}: exported by tracewh {made_by}, whose views differ from this "
                       f"tracewh's ({difference}) - {again}")
    return manifest


def _schema_difference(manifest: dict) -> str | None:
    """The first view whose columns in the lake are not this tracewh's (None: none)."""
    from .warehouse import views_checksum

    if manifest.get("views_checksum") == views_checksum():
        return None  # exported with these very views
    from .export import lake_views
    from .transpile import default_catalog

    catalog = default_catalog()
    for view in lake_views(catalog.con):
        want = [list(column) for column in catalog.schemas[view]]
        have = manifest["schemas"].get(view)
        if have is None:
            return f"no {view}"
        if have != want:
            extra = [c for c in have if c not in want]
            missing = [c for c in want if c not in have]
            return f"{view}: " + "; ".join(
                [f"{name} {kind} expected" for name, kind in missing[:2]]
                + [f"{name} {kind} not expected" for name, kind in extra[:2]])
    return None


def connect_lake(lake: str | Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection where the lake's views, and the macros and views of
    sql/lib and sql/views on them, answer as in the warehouse it was exported from. File
    access is allowed inside the lake only once external access is turned off (lock_down)."""
    lake = Path(lake).resolve()
    manifest = read_manifest(lake)
    con = duckdb.connect(":memory:")
    try:
        runs = list(manifest["runs"])
        for view, columns in manifest["schemas"].items():
            con.execute(_lake_view(lake, view, columns, runs))
        con.execute("CREATE SCHEMA store")
        for table in STORED_AS_VIEWS:
            if table in manifest["schemas"]:
                con.execute(f'CREATE VIEW store."{table}" AS SELECT * FROM main."{table}"')
        for module in install_order(load_modules()):
            for statement in con.extract_statements(module.text):
                code = _code_only(statement.query)
                made = _CREATES_VIEW.search(code)
                if (made and made[1].lower() in manifest["schemas"]) or _READS_STORE.search(code):
                    continue  # the lake holds it, or it needs stored rows the lake has not
                con.execute(statement)
        con.execute("SET allowed_directories = ?", [[str(lake) + "/"]])
    except BaseException:
        con.close()
        raise
    return con


def _lake_view(lake: Path, view: str, columns: list, runs: list[str]) -> str:
    """CREATE VIEW `view` over its Parquet files: the manifest's runs, the view's columns in its
    order and types (run_id from the hive partition, as text whatever it looks like)."""
    folder = lake / view
    projection = ", ".join(f"CAST({_quoted(name)} AS {kind}) AS {_quoted(name)}"
                           for name, kind in columns)
    if not runs or not folder.is_dir():  # no rows: the columns alone
        nulls = ", ".join(f"NULL AS {_quoted(name)}" for name, _ in columns)
        return (f"CREATE VIEW {_quoted(view)} AS SELECT {projection} "
                f"FROM (SELECT {nulls}) WHERE false")
    files = _literal(f"{folder}/*/*.parquet")
    wanted = ", ".join(_literal(run) for run in runs)
    return (f"CREATE VIEW {_quoted(view)} AS SELECT {projection} FROM read_parquet({files}, "
            "hive_partitioning = true, hive_types = {'run_id': VARCHAR}) "
            f"WHERE run_id IN ({wanted})")


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# what two warehouses of the same files may hold differently: the time each was written, and
# a call's row number in store.cuda_api (api_id, "this query only": one ingest writes a batch of
# small nsys exports in one statement, their rows interleaved, so the numbers follow batching)
NOT_COMPARED = {"*": ("ingested_at", "created_at"), "gpu_op_calls": ("api_id",),
                "gpu_op_launches": ("api_id",)}


def lake_checksums(lake: str | Path) -> dict[str, tuple[int, int]]:
    """Per view of the lake: its rows and a checksum of them (the sum of each row's hash, so
    the order of rows and files does not count and a repeated row does), every column but
    those of NOT_COMPARED. Two lakes of the same files made by any route have the same
    checksums."""
    con = connect_lake(lake)
    try:
        sums = {}
        for view, columns in read_manifest(lake)["schemas"].items():
            left_out = NOT_COMPARED["*"] + NOT_COMPARED.get(view, ())
            kept = ", ".join(_quoted(name) for name, _ in columns if name not in left_out)
            sums[view] = tuple(con.execute(
                f"SELECT count(*), coalesce(sum(hash({kept})::HUGEINT), 0)::VARCHAR "
                f"FROM {_quoted(view)}").fetchone())
        return {view: (rows, int(total)) for view, (rows, total) in sums.items()}
    finally:
        con.close()
