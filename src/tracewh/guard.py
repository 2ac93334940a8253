"""Read-only queries: what `tracewh sql` and `tracewh query` may run, checked twice.

1. Before a statement runs, sqlglot parses it: one query (SELECT, UNION, VALUES, DESCRIBE,
   SUMMARIZE, SHOW), with nothing nested that writes, attaches, copies, installs or loads, or
   changes settings; it reads only relations of the warehouse (its views, its `store` tables, its
   CTEs) and a short list of harmless table functions, never files (`read_csv(...)`,
   `FROM 'file.csv'`, `glob(...)`, `query('...')`).
2. After the runner has bound its own variables, `session.lock_down` turns DuckDB's own guards on for the
   connection's database: `enable_external_access = false` (no file, network, ATTACH, COPY,
   INSTALL) and `lock_configuration = true` (no SET, RESET or PRAGMA of a setting). The connection
   is read-only already, so nothing can be written. `SET VARIABLE` still works after the lock (the
   metric runner binds parameters with it), and the views read only tables, so they still answer.

The metric checks of `metrics.py` share `FORBIDDEN_NODES` (a metric is stricter still: it reads
only the public views).
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager

import duckdb
import sqlglot
from sqlglot import exp

from .errors import TracewhError

# Statements and expressions a read-only query never contains, wherever they are nested.
FORBIDDEN_NODES = (exp.DML, exp.DDL, exp.Drop, exp.Alter, exp.TruncateTable, exp.Command,
                   exp.Copy, exp.Attach, exp.Detach, exp.Install, exp.Pragma, exp.Set, exp.Use,
                   exp.Transaction, exp.Commit, exp.Kill, exp.Into)

# What the user is told a refused node does.
_WHY = [
    ((exp.Attach, exp.Detach, exp.Use), "attaches or switches databases"),
    ((exp.Copy,), "copies data to or from files"),
    ((exp.Install,), "installs extensions"),
    ((exp.Set, exp.Pragma), "changes settings"),
    ((exp.Transaction, exp.Commit, exp.Kill), "controls transactions"),
    ((exp.Into,), "creates a table"),
    ((exp.DML, exp.DDL, exp.Drop, exp.Alter, exp.TruncateTable), "writes to the warehouse"),
]
_COMMAND_WHY = {
    "LOAD": "loads extensions", "INSTALL": "installs extensions", "FORCE": "installs extensions",
    "SET": "changes settings", "RESET": "changes settings", "PRAGMA": "changes settings",
    "CALL": "calls a table function", "EXPORT": "writes files", "IMPORT": "reads files",
    "CHECKPOINT": "writes to the warehouse", "VACUUM": "writes to the warehouse",
    "ATTACH": "attaches databases", "DETACH": "attaches or switches databases",
    "COPY": "copies data to or from files", "EXPLAIN": "is not a query",
}
# Statement kinds an ad-hoc query may be.
_QUERIES = (exp.Select, exp.SetOperation, exp.Values, exp.Describe, exp.Summarize, exp.Show)
# Table functions that read nothing but the warehouse's own catalog or generate rows.
SAFE_TABLE_FUNCTIONS = frozenset({
    "range", "generate_series", "unnest",
    "duckdb_columns", "duckdb_constraints", "duckdb_databases", "duckdb_dependencies",
    "duckdb_functions", "duckdb_indexes", "duckdb_keywords", "duckdb_schemas",
    "duckdb_sequences", "duckdb_tables", "duckdb_types", "duckdb_views",
    "pragma_table_info", "pragma_show", "pragma_version", "pragma_database_size",
    "pragma_storage_info", "pragma_metadata_info", "test_all_types",
})
# Functions that read files, the settings or other SQL: refused wherever they are called, as a
# table (FROM, JOIN, LATERAL) or as a value.
FILE_OR_SQL_FUNCTIONS = frozenset({
    "query", "query_table", "read_text", "read_blob", "glob", "sniff_csv",
    "read_csv", "read_csv_auto", "read_json", "read_json_auto", "read_json_objects",
    "read_json_objects_auto", "read_ndjson", "read_ndjson_auto", "read_ndjson_objects",
    "read_parquet", "parquet_scan", "parquet_metadata", "parquet_schema",
    "parquet_file_metadata", "parquet_kv_metadata", "parquet_bloom_probe", "read_xlsx",
    "duckdb_settings", "duckdb_secrets", "duckdb_extensions", "which_secret", "getenv",
})
_HINT = "tracewh runs one read-only SELECT over the warehouse's views and tables"


class QueryRefused(TracewhError):
    """A statement that is not a read-only query over the warehouse."""


@contextmanager
def _quiet_sqlglot():
    """sqlglot logs 'falling back to parsing as a Command' for statements it half-knows."""
    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def forbidden_node(tree: exp.Expression) -> exp.Expression | None:
    """The first node of `tree` that a read-only query may not contain, or None."""
    for node in tree.walk():
        if isinstance(node, FORBIDDEN_NODES):
            return node
    return None


def why_refused(node: exp.Expression, sql: str = "") -> str:
    """What a forbidden node would do, in the user's words: 'ATTACH attaches databases'."""
    if isinstance(node, exp.Command):
        word = str(node.this).split()[0].upper() if node.this else "COMMAND"
        return f"{word} {_COMMAND_WHY.get(word, 'is not a query')}"
    if isinstance(node, exp.Set) and _keyword(node) == "SET VARIABLE":
        return "SET VARIABLE sets variables (pass metric parameters with --param)"
    for kinds, why in _WHY:
        if isinstance(node, kinds):
            return f"{_keyword(node)} {why}"
    word = (sql.split() or [node.key])[0].upper()  # e.g. CHECKPOINT, which sqlglot reads as a name
    return f"{word} {_COMMAND_WHY.get(word, 'is not a query')}"


def _keyword(node: exp.Expression) -> str:
    if isinstance(node, exp.Set) and any(
            isinstance(item, exp.SetItem) and item.args.get("kind") == "VARIABLE"
            for item in node.expressions):
        return "SET VARIABLE"
    return {"into": "SELECT ... INTO", "truncatetable": "TRUNCATE"}.get(node.key, node.key.upper())


_TOO_DEEP = QueryRefused(f"refused: nested too deeply to check - {_HINT}, with fewer levels of "
                         "parentheses or subqueries")


def parse_one_statement(sql: str) -> exp.Expression:
    """The single statement of `sql`; QueryRefused if it does not parse or holds several."""
    try:
        with _quiet_sqlglot():
            statements = [s for s in sqlglot.parse(sql, read="duckdb") if s is not None]
    except RecursionError:  # sqlglot parses nesting recursively (about 45 levels)
        raise _TOO_DEEP from None
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError) as exc:
        detail = exc.errors[0].get("description") if getattr(exc, "errors", None) else str(exc)
        raise QueryRefused(f"refused: cannot check this statement ({str(detail).splitlines()[0]})"
                           f" - {_HINT}, in SQL that sqlglot reads") from None
    if len(statements) != 1:
        raise QueryRefused(f"refused: {len(statements)} statements - {_HINT}")
    return statements[0]


def check_query(sql: str, relations: set[str], macros: set[str] = frozenset()) -> exp.Expression:
    """Refuse (QueryRefused, one line) anything but one read-only query over the warehouse.

    `relations` are the lower-case names a query may read, bare (`kernels`) and schema-qualified
    (`store.kernels`); `macros` the table macros of sql/views. Returns the parsed statement.
    """
    tree = parse_one_statement(sql)
    try:
        _check_tree(sql, tree, relations, macros)
    except RecursionError:
        raise _TOO_DEEP from None
    return tree


def _check_tree(sql: str, tree: exp.Expression, relations: set[str], macros: set[str]) -> None:
    if not isinstance(tree, _QUERIES):
        raise QueryRefused(f"refused: {why_refused(tree, sql)} - {_HINT}")
    node = forbidden_node(tree)
    if node is not None:
        raise QueryRefused(f"refused: {why_refused(node)} - {_HINT}")
    function = refused_function(tree, SAFE_TABLE_FUNCTIONS | macros)
    if function is not None:
        _refuse_function(function_name(function))
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        _check_table(table, relations, macros, ctes)


def refused_function(tree: exp.Expression, table_functions: set[str]) -> exp.Func | None:
    """The first call in `tree` of a function that reads files, settings or other SQL, as a value
    or as a table, or of a table function in LATERAL that is not one of `table_functions`; else
    None. The one rule for `tracewh sql` and for metric files."""
    for function in tree.find_all(exp.Func):
        if function_name(function) in FILE_OR_SQL_FUNCTIONS:
            return function
    for lateral in tree.find_all(exp.Lateral):  # LATERAL f(...) is a table function too
        if isinstance(lateral.this, exp.Func) and function_name(lateral.this) not in table_functions:
            return lateral.this
    return None


def function_name(function: exp.Func) -> str:
    return (function.name if isinstance(function, exp.Anonymous) else function.sql_name()).lower()


def _refuse_function(name: str):
    raise QueryRefused(f"refused: reads table function {name}(), which may read files, "
                       f"settings or other SQL - {_HINT}")


def _check_table_function(function: exp.Func, macros: set[str]) -> None:
    name = function_name(function)
    if name not in SAFE_TABLE_FUNCTIONS and name not in macros:
        _refuse_function(name)


def _check_table(table: exp.Table, relations: set[str], macros: set[str], ctes: set[str]):
    source = table.this
    if isinstance(source, exp.Identifier):
        parts = [p.name.lower() for p in (table.args.get("catalog"), table.args.get("db"))
                 if p is not None] + [source.name.lower()]
        name = ".".join(parts)
        if name in ctes or name in relations or ".".join(parts[-2:]) in relations:
            return
        raise QueryRefused(f"refused: reads {source.name!r}, which is not a view or table of the "
                           f"warehouse (files are not read) - {_HINT}")
    if isinstance(source, exp.Func):
        _check_table_function(source, macros)
        return
    if source is not None:
        raise QueryRefused(f"refused: reads {source.sql(dialect='duckdb')} - {_HINT}")


def warehouse_relations(con: duckdb.DuckDBPyConnection) -> tuple[set[str], set[str]]:
    """Names a query on `con` may read: every table and view (bare and schema-qualified, internal
    catalog views included), and the table macros of the warehouse."""
    rows = con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() "
        "UNION ALL SELECT schema_name, view_name FROM duckdb_views()").fetchall()
    relations = {name.lower() for _, name in rows} | {f"{s}.{n}".lower() for s, n in rows}
    macros = {name.lower() for (name,) in con.execute(
        "SELECT DISTINCT function_name FROM duckdb_functions() "
        "WHERE function_type = 'table_macro'").fetchall()}
    return relations, macros
