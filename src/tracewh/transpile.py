"""Transpile a DuckDB-dialect metric (and the macros it calls) to Spark SQL or Trino.

The metric files stay the one source of truth: this module rewrites their sqlglot AST into
SQL that reads only the public views (the tables of a Parquet lake, `tracewh export`):

1. parameters: every `getvariable('name')` becomes its bound value, a typed literal;
2. constant CTEs: a CTE that reads no table (a parsed `--param window=...`) is evaluated by
   DuckDB, with the macros of sql/views, and replaced by its rows as literals, so DuckDB-only
   helpers such as `duration_ns()` never reach the target (and bad values fail here, with
   DuckDB's message);
3. macros: scalar macros of sql/lib/*.sql (`kernel_kind(name)`, ...) are inlined as
   expressions; table macros (`intervals_union(ops)`, ... taking a table NAME through
   `query_table`, or a value: `training_steps(getvariable('step_pattern'))`) are inlined as
   CTEs of their own, hoisted before the CTE that calls them; a view of sql/views the target
   lacks (a lake holds no `launch_cpu_ops`: it has no run_id) is read from its definition;
   a field of a struct a macro builds is that field's expression alone (op_kernels asks
   perf_model for a family: not the FLOPs and bytes formulas of every model);
4. `AS [NOT] MATERIALIZED` is dropped; `SELECT * EXCLUDE (...) REPLACE (...)` and every other
   star are expanded from the view schemas (sqlglot's qualify); `UNION ALL BY NAME` is aligned
   by name; `ASOF [LEFT] JOIN` becomes an equi-join on the right side's next (or previous) key;
   a window with an empty `OVER ()` that relies on DuckDB keeping the order of a sorted
   subquery gets that order explicitly (a row number taken where the rows are sorted);
5. dialect details sqlglot leaves to us: division by zero is NULL (`a / nullif(b, 0)`), 1-based
   list subscripts NULL out of range, `len` of a list, `list_slice`, `list_aggregate(l,
   'product')`, `error()`, `range(a, b)` never runs backwards, `count(DISTINCT x) OVER`, `HUGEINT`,
   printf's `%f` of a DECIMAL, row numbers and ranks as BIGINT (Spark's are INT), a named
   window in arithmetic (`(sum(n) OVER w) - n`: Spark reads `w - n` as one identifier), and
   Spark cannot nest a generator in an expression (a
   `LATERAL VIEW` instead).

`split_shared_ctes` then lets an engine compute once the CTEs a query reads more than once.

Everything else (function names, `IS NOT DISTINCT FROM`, `QUALIFY`, ...) is sqlglot's own
DuckDB -> Spark / Trino generation.
"""

from __future__ import annotations

import itertools
import logging
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

from .errors import TracewhError
from .metrics import Metric, bind_values
from .resources import sql_dir
from .sqlmodules import closure, load_modules

DIALECTS = ("spark", "trino")
_WITH = "with_" if "with_" in exp.Select.arg_types else "with"
_FROM = "from_" if "from_" in exp.Select.arg_types else "from"


class TranspileError(TracewhError):
    """A metric cannot be turned into the target dialect."""


@dataclass(frozen=True)
class Macro:
    name: str
    params: tuple[str, ...]
    body: exp.Expression
    table: bool  # a table macro (AS TABLE ...) rather than a scalar one


@dataclass
class Catalog:
    """What the transpiler knows about the target: the views' columns and a DuckDB connection
    holding the macros of sql/views (to evaluate constant parts)."""
    schemas: dict[str, list[tuple[str, str]]]  # view -> [(column, DuckDB type)] in order
    con: duckdb.DuckDBPyConnection


class _DuckDBAsWritten(DuckDB):
    """DuckDB, reading a literal list subscript as written: sqlglot's DuckDB reader makes l[1]
    0-based (l[0]) where the index is an integer it can type, and leaves l[i] alone, so the
    rewrite of l[...] could not tell DuckDB's position."""
    INDEX_OFFSET = 0


def _parse_duckdb(sql: str) -> list[exp.Expression | None]:
    """DuckDB statements whose subscripts keep DuckDB's 1-based positions (marked offset 1, so
    that they generate back as written)."""
    statements = sqlglot.parse(sql, read=_DuckDBAsWritten)
    for statement in statements:
        for bracket in statement.find_all(exp.Bracket) if statement else ():
            bracket.set("offset", 1)
    return statements


# --- the catalogue ------------------------------------------------------------------------------

def load_macros(sql_root: str | Path | None = None) -> dict[str, Macro]:
    """Every `CREATE MACRO` of sql/lib and sql/views, by lowercase name."""
    files = tuple((m.path, m.path.stat().st_mtime_ns) for m in load_modules(sql_root).values())
    return _load_macros(files)


_USING_KEY = re.compile(r"\bUSING\s+KEY\b", re.IGNORECASE)
_MACRO_HEAD = re.compile(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?MACRO\s+(\w+)\s*\(([^)]*)\)\s*AS"
                         r"\s+(TABLE\s+)?", re.IGNORECASE)


@lru_cache(maxsize=4)
def _load_macros(files: tuple[tuple[Path, int], ...]) -> dict[str, Macro]:
    macros: dict[str, Macro] = {}
    quiet = logging.getLogger("sqlglot")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # a macro sqlglot cannot read whole falls back to a Command
    try:
        for path, _ in files:
            text = path.read_text()
            if "MACRO" not in text.upper():
                continue
            for statement in _parse_duckdb(text):
                macro = _macro(statement)
                if macro is not None:
                    macros[macro.name] = macro
    finally:
        quiet.setLevel(level)
    return macros


def _macro(statement: exp.Expression | None) -> Macro | None:
    if isinstance(statement, exp.Create) and str(statement.args.get("kind") or "").upper() == "MACRO":
        udf, body = statement.this, statement.expression
        return Macro(udf.this.name.lower(), tuple(p.name.lower() for p in udf.expressions), body,
                     isinstance(body, exp.Query))
    if isinstance(statement, exp.Command):
        match = _MACRO_HEAD.match(statement.sql("duckdb"))
        if match:
            body = _parse_duckdb(statement.sql("duckdb")[match.end():])[0]
            params = tuple(p.strip().lower() for p in match[2].split(",") if p.strip())
            return Macro(match[1].lower(), params, body, bool(match[3]))
    return None


@lru_cache(maxsize=1)
def _empty_warehouse() -> duckdb.DuckDBPyConnection:
    """An in-memory warehouse with no rows: the views, their columns and the macros."""
    from .warehouse import connect

    return connect(":memory:")


def default_catalog() -> Catalog:
    """The views of this tracewh (their columns from an empty in-memory warehouse)."""
    con = _empty_warehouse()
    from .export import _schema, public_views

    return Catalog({view: [tuple(c) for c in _schema(con, view)] for view in public_views(con)},
                   con)


def lake_catalog(lake: str | Path) -> Catalog:
    """The views of an exported lake, from its manifest.json (the schemas export wrote)."""
    from .lake import read_manifest

    manifest = read_manifest(lake)
    schemas = {view: [tuple(c) for c in columns] for view, columns in manifest["schemas"].items()}
    return Catalog(schemas, _empty_warehouse())


# --- the pipeline ---------------------------------------------------------------------------

def transpile_metric(metric: Metric, dialect: str, params: dict[str, object] | None = None,
                     catalog: Catalog | None = None, pretty: bool = True) -> str:
    """The metric, with `params` bound (as `tracewh query` binds them), as `dialect` SQL.
    Its output starts with the `metric` and `version` columns, as `tracewh query` does."""
    return metric_ast(metric, dialect, params, catalog).sql(dialect=dialect, pretty=pretty)


def metric_ast(metric: Metric, dialect: str, params: dict[str, object] | None = None,
               catalog: Catalog | None = None) -> exp.Expression:
    """transpile_metric's result as a sqlglot tree."""
    modules = load_modules()
    recursive = [name for name in closure(metric.uses, modules)
                 if _USING_KEY.search(modules[name].text)]
    if recursive:  # pointer doubling (WITH RECURSIVE ... USING KEY): DuckDB's alone; a plain
                   # recursive CTE (Spark 4, Trino) transpiles
        raise TranspileError(f"{metric.name}: {', '.join(recursive)} needs DuckDB's recursive "
                             f"CTEs with USING KEY, which {dialect} lacks: run it on DuckDB")
    values = bind_values(metric, params)
    types = {p.name: p.type for p in metric.params}
    tree = to_target_ast(metric.query, dialect, values, types, catalog or default_catalog(),
                         label=metric.name)
    _add_leading_columns(tree, metric)
    return tree


def split_shared_ctes(tree: exp.Expression, prefix: str) -> tuple[list[tuple[str, exp.Query]],
                                                                  exp.Expression]:
    """The top-level CTEs that are read more than once, each as (view name, query) to
    materialize in order, and what is left of `tree`, which reads them by those names.

    Spark inlines every CTE at each place it is read, so a CTE read by CTEs that are read
    twice is computed (and planned) over and over; materialized once, it is not. The view
    names start with `prefix` (unique per run) so that they never shadow a lake view."""
    with_ = tree.args.get(_WITH)
    if with_ is None:
        return [], tree
    reads: dict[str, int] = {}
    for table in tree.find_all(exp.Table):
        if isinstance(table.this, exp.Identifier) and not table.args.get("db"):
            reads[table.name] = reads.get(table.name, 0) + 1
    steps: list[tuple[str, exp.Query]] = []
    kept: list[exp.CTE] = []
    for cte in list(with_.expressions):
        name = cte.alias_or_name
        if reads.get(name, 0) < 2 or cte.args["alias"].columns or _reads_itself(cte):
            kept.append(cte)
            continue
        view = f"{prefix}{len(steps) + 1}_{name}"
        for table in tree.find_all(exp.Table):
            if (isinstance(table.this, exp.Identifier) and not table.args.get("db")
                    and table.name == name):
                if not table.alias:
                    table.set("alias", exp.TableAlias(this=exp.to_identifier(name)))
                table.set("this", exp.to_identifier(view))
        query = exp.select("*").from_(exp.Subquery(
            this=cte.this.copy(), alias=exp.TableAlias(this=exp.to_identifier("_m"))))
        if kept:
            query.set(_WITH, exp.With(expressions=[c.copy() for c in kept],
                                      recursive=with_.args.get("recursive")))
        steps.append((view, query))
    with_.set("expressions", kept)
    if not kept:
        tree.set(_WITH, None)
    return steps, tree


def _reads_itself(cte: exp.CTE) -> bool:
    """A recursive CTE: it stays a CTE (a view cannot read itself)."""
    return any(isinstance(t.this, exp.Identifier) and not t.args.get("db")
               and t.name == cte.alias_or_name for t in cte.this.find_all(exp.Table))


def to_target_ast(sql: str, dialect: str, values: dict[str, object], types: dict[str, str],
                  catalog: Catalog, label: str = "query") -> exp.Expression:
    if dialect not in DIALECTS + ("duckdb",):  # duckdb: the rewritten query, for tests
        raise TranspileError(f"unknown dialect {dialect!r}; use one of {', '.join(DIALECTS)}")
    macros = load_macros()
    tree = _parse_duckdb(sql)[0]
    _bind_variables(tree, values, types)
    tree = _fold_constant_calls(tree, catalog.con, macros, label)
    _inline_missing_views(tree, catalog, label)
    _inline_table_macros(tree, macros, itertools.count(1))
    # after the table macros: relative_window(...) and its like become constant CTEs too
    tree = _fold_constant_ctes(tree, catalog.con, label)
    tree = _inline_scalar_macros(tree, macros)
    for cte in tree.find_all(exp.CTE):
        cte.set("materialized", None)
    _check_no_macros(tree, macros, label)
    schema = {view: {name: kind for name, kind in columns}
              for view, columns in catalog.schemas.items()}
    try:
        tree = qualify(tree, schema=schema, dialect="duckdb", quote_identifiers=False,
                       identify=False, validate_qualify_columns=False)
    except sqlglot.errors.SqlglotError as exc:
        raise TranspileError(f"{label}: cannot resolve the query's columns: {exc}") from None
    _align_union_by_name(tree)
    _order_empty_windows(tree, itertools.count(1), label)
    _rewrite_asof_joins(tree, itertools.count(1))
    lengths = _list_lengths(tree, schema) if dialect != "duckdb" else set()
    _portable_expressions(tree, dialect, lengths)
    if dialect == "spark":
        _lateral_values_to_inline(tree)
        _generators_to_lateral_views(tree, itertools.count(1))
    return tree


# --- 1. parameters ------------------------------------------------------------------------------

def _literal(value: object, type_name: str | None = None) -> exp.Expression:
    """A typed SQL literal for a Python value (DuckDB type names)."""
    if value is None:
        return exp.Null() if type_name is None else exp.cast(exp.Null(), type_name,
                                                             dialect="duckdb")
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        literal = exp.Literal.number(abs(value))
        literal = exp.Neg(this=literal) if value < 0 else literal
        return exp.cast(literal, type_name or "BIGINT", dialect="duckdb")
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return exp.cast(exp.Literal.string(repr(value)), "DOUBLE")
        literal = exp.Literal.number(repr(abs(value)))
        literal = exp.Neg(this=literal) if value < 0 else literal
        return exp.cast(literal, type_name or "DOUBLE", dialect="duckdb")
    if isinstance(value, str):
        literal = exp.Literal.string(value)
        return literal if type_name is None else exp.cast(literal, type_name, dialect="duckdb")
    if isinstance(value, (list, tuple)):
        inner = type_name[:-2] if type_name and type_name.endswith("[]") else None
        return exp.Array(expressions=[_literal(v, inner) for v in value])
    # dates, timestamps, decimals: their text, cast back
    return exp.cast(exp.Literal.string(str(value)), type_name or "VARCHAR", dialect="duckdb")


_PARAM_TYPES = {"text": "VARCHAR", "int": "BIGINT", "float": "DOUBLE", "bool": "BOOLEAN"}


def _bind_variables(tree: exp.Expression, values: dict[str, object], types: dict[str, str]):
    for call in list(tree.find_all(exp.Anonymous)):
        if call.name.lower() != "getvariable":
            continue
        name = call.expressions[0].name if call.expressions else ""
        value = values.get(name)
        kind = _PARAM_TYPES.get(types.get(name, ""))
        if value is None:
            call.replace(exp.Null())
        elif isinstance(value, bool) or kind == "BOOLEAN":
            call.replace(exp.Boolean(this=bool(value)))
        else:
            call.replace(_literal(value, kind))


# --- 2. constants, evaluated by DuckDB -------------------------------------------------------

def _reads_tables(node: exp.Expression, constant: set[str]) -> bool:
    for table in node.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier) or table.name.lower() not in constant:
            return True
    return False


def _fold_constant_ctes(tree: exp.Expression, con: duckdb.DuckDBPyConnection,
                        label: str) -> exp.Expression:
    """Replace the CTEs that read no table by their rows (evaluated by DuckDB)."""
    with_ = tree.args.get(_WITH)
    if not with_:
        return tree
    constant: dict[str, str] = {}  # name -> its DuckDB SQL
    for cte in with_.expressions:
        name = cte.alias_or_name.lower()
        if _reads_tables(cte.this, set(constant)):
            continue
        prefix = ", ".join(f"{n} AS ({s})" for n, s in constant.items())
        sql = f"WITH {prefix + ', ' if prefix else ''}{name} AS ({cte.this.sql('duckdb')}) " \
              f"SELECT * FROM {name}"
        try:
            relation = con.sql(sql)
            columns, kinds, rows = relation.columns, [str(t) for t in relation.types], \
                relation.fetchall()
        except duckdb.Error as exc:
            raise TranspileError(f"{label}: {str(exc).splitlines()[0]}") from None
        cte.set("this", _rows_as_select(columns, kinds, rows))
        constant[name] = cte.this.sql("duckdb")
    return tree


def _rows_as_select(columns: list[str], kinds: list[str], rows: list[tuple]) -> exp.Query:
    def one(row):
        return exp.select(*(exp.alias_(_literal(v, k), c, quoted=False)
                            for v, k, c in zip(row, kinds, columns)))
    if not rows:
        return one([None] * len(columns)).where(exp.false())
    query: exp.Query = one(rows[0])
    for row in rows[1:]:
        query = exp.union(query, one(row), distinct=False)
    return query


_ROW_SOURCES = (exp.Column, exp.Star, exp.Query, exp.Subquery, exp.AggFunc, exp.Window,
                exp.Lambda, exp.Placeholder)


def _fold_constant_calls(tree: exp.Expression, con: duckdb.DuckDBPyConnection,
                         macros: dict[str, Macro], label: str) -> exp.Expression:
    """A scalar-macro call on constants (`duration_ns('4s')`) becomes its value."""
    for call in list(tree.find_all(exp.Anonymous)):
        macro = macros.get(call.name.lower())
        if macro is None or macro.table or call.find(*_ROW_SOURCES):
            continue
        try:
            relation = con.sql(f"SELECT {call.sql('duckdb')} AS v")
            kind, value = str(relation.types[0]), relation.fetchall()[0][0]
        except duckdb.Error as exc:
            raise TranspileError(f"{label}: {str(exc).splitlines()[0]}") from None
        call.replace(_literal(value, kind))
    return tree


# --- 3. macros --------------------------------------------------------------------------------

def _inline_scalar_macros(tree: exp.Expression, macros: dict[str, Macro]) -> exp.Expression:
    for _ in range(50):  # macros may call macros
        calls = [c for c in tree.find_all(exp.Anonymous)
                 if c.name.lower() in macros and not macros[c.name.lower()].table]
        if not calls:
            return tree
        for call in calls:
            macro = macros[call.name.lower()]
            if len(call.expressions) != len(macro.params):
                raise TranspileError(f"{macro.name}() takes {len(macro.params)} argument(s)")
            args = dict(zip(macro.params, call.expressions))
            body = macro.body.copy()
            for column in list(body.find_all(exp.Column)):
                if not column.table and column.name.lower() in args:
                    column.replace(exp.paren(args[column.name.lower()].copy(), copy=False))
            call.replace(exp.paren(body, copy=False))
        _extract_struct_fields(tree, macros)
    raise TranspileError("scalar macros call each other without end")


def _extract_struct_fields(tree: exp.Expression, macros: dict[str, Macro]) -> None:
    """`{'family': f, 'flops': ...}.family` is f, and a field of a CASE of structs is the CASE
    of their fields: op_kernels asks perf_model(name, [], [], []) for its family alone, and
    the rest of the model (100 KB of Spark SQL) never reaches the target."""
    def bare(node):
        while isinstance(node, exp.Paren):
            node = node.this
        return node

    def pending(node):  # a scalar macro call not inlined yet: its struct comes next round
        return isinstance(node, exp.Anonymous) and node.name.lower() in macros

    def field_of(node, name):
        node = bare(node)
        if isinstance(node, exp.Null):
            return exp.Null()
        if isinstance(node, exp.Struct):
            for item in node.expressions:
                if isinstance(item, exp.PropertyEQ) and item.name.lower() == name:
                    return exp.paren(item.expression.copy(), copy=False)
            return None
        if pending(node):
            return exp.Dot(this=exp.paren(node.copy(), copy=False),
                           expression=exp.to_identifier(name))
        if isinstance(node, exp.Case):
            branches = [field_of(i.args["true"], name) for i in node.args["ifs"]]
            default = node.args.get("default")
            other = field_of(default, name) if default is not None else exp.Null()
            if other is None or any(b is None for b in branches):
                return None
            return exp.paren(exp.Case(
                this=node.this.copy() if node.this else None,
                ifs=[exp.If(this=i.this.copy(), true=b)
                     for i, b in zip(node.args["ifs"], branches)],
                default=None if default is None else other), copy=False)
        return None

    for dot in list(tree.find_all(exp.Dot)):
        if not isinstance(dot.expression, exp.Identifier) or pending(bare(dot.this)):
            continue
        value = field_of(dot.this, dot.expression.name.lower())
        if value is not None:
            dot.replace(value)


def _inline_missing_views(tree: exp.Expression, catalog: Catalog, label: str) -> None:
    """A view of sql/views the target lacks (a lake holds the views with a run_id column, so
    not launch_cpu_ops, a link from call to op) is read from its definition, as a subquery."""
    owner = {view: module.path for module in load_modules().values() for view in module.views}
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for _ in range(20):  # a view's definition may read another view the target lacks
        missing = [t for t in tree.find_all(exp.Table)
                   if isinstance(t.this, exp.Identifier) and not t.args.get("db")
                   and t.name.lower() in owner and t.name.lower() not in catalog.schemas
                   and t.name.lower() not in ctes]
        if not missing:
            return
        for table in missing:
            body = _view_definition(owner[table.name.lower()], table.name.lower())
            if body is None:
                raise TranspileError(f"{label}: reads {table.name}, which the target lacks")
            table.replace(exp.Subquery(this=body.copy(), alias=table.args.get("alias")
                                       or exp.TableAlias(this=exp.to_identifier(table.name))))
    raise TranspileError(f"{label}: views read each other without end")


@lru_cache(maxsize=16)
def _view_definition(path: Path, name: str) -> exp.Query | None:
    quiet = logging.getLogger("sqlglot")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # the file's macros may fall back to a Command
    try:
        statements = _parse_duckdb(path.read_text())
    finally:
        quiet.setLevel(level)
    return next((statement.expression for statement in statements
                 if isinstance(statement, exp.Create)
                 and str(statement.args.get("kind") or "").upper() == "VIEW"
                 and statement.this.name.lower() == name), None)


def _table_macro_call(node: exp.Expression, macros: dict[str, Macro]) -> bool:
    return (isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous)
            and node.this.name.lower() in macros and macros[node.this.name.lower()].table)


def _inline_table_macros(query: exp.Expression, macros: dict[str, Macro], counter) -> None:
    """Each `FROM macro(rel, ...)` becomes a reference to CTEs holding the macro's body, with
    `query_table(param)` replaced by the relation named in the call and value parameters by
    the call's (bound) values."""
    while True:
        call_site = next((t for t in query.find_all(exp.Table) if _table_macro_call(t, macros)),
                         None)
        if call_site is None:
            return
        call = call_site.this
        macro = macros[call.name.lower()]
        if len(call.expressions) != len(macro.params):
            raise TranspileError(f"{macro.name}() takes {len(macro.params)} argument(s), "
                                 f"got {call.sql('duckdb')}")
        # a bare name is a relation (read through query_table); anything else is a value, such
        # as training_steps(getvariable('step_pattern')) once the variable is bound
        relations = {param: arg.name for param, arg in zip(macro.params, call.expressions)
                     if isinstance(arg, exp.Column) and not arg.table}
        names = list(relations.values())
        mapping = relations
        body = macro.body.copy()
        values = {param: arg for param, arg in zip(macro.params, call.expressions)
                  if param not in relations}
        for column in list(body.find_all(exp.Column)):
            if not column.table and column.name.lower() in values:
                column.replace(values[column.name.lower()].copy())
        for table in list(body.find_all(exp.Table)):
            if not isinstance(table.this, exp.Anonymous):
                continue
            if table.this.name.lower() == "query_table":
                arg = table.this.expressions[0]  # a relation passed on, or a name: 'points'
                relation = (arg.name if isinstance(arg, exp.Literal) and arg.is_string
                            else mapping[arg.name.lower()])
                table.replace(exp.Table(this=exp.to_identifier(relation),
                                        alias=table.args.get("alias")))
            else:  # a macro calling a macro: pass our relations on
                for arg in table.this.expressions:
                    if arg.name.lower() in mapping:
                        arg.replace(exp.column(mapping[arg.name.lower()]))
        _inline_table_macros(body, macros, counter)

        prefix = f"_{macro.name.lstrip('_')}_{next(counter)}"
        with_ = body.args.get(_WITH)
        body.set(_WITH, None)
        ctes = list(with_.expressions) if with_ else []
        renamed = {cte.alias_or_name: f"{prefix}{cte.alias_or_name}" for cte in ctes}
        clash = set(renamed) & set(names)
        if clash:
            raise TranspileError(f"{macro.name}(): relation {clash.pop()} has the name of one "
                                 "of the macro's own CTEs")
        for part in [*(cte.this for cte in ctes), body]:
            for table in part.find_all(exp.Table):
                if (isinstance(table.this, exp.Identifier) and not table.args.get("db")
                        and table.name in renamed):
                    if not table.alias:
                        table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name)))
                    table.set("this", exp.to_identifier(renamed[table.name]))
        hoisted = [exp.CTE(this=cte.this, alias=exp.TableAlias(
                       this=exp.to_identifier(renamed[cte.alias_or_name]))) for cte in ctes]
        hoisted.append(exp.CTE(this=body, alias=exp.TableAlias(this=exp.to_identifier(prefix))))
        alias = call_site.args.get("alias") or exp.TableAlias(
            this=exp.to_identifier(macro.name))
        reference = exp.Table(this=exp.to_identifier(prefix), alias=alias)
        call_site.replace(reference)
        _insert_ctes(reference, hoisted, query, recursive=bool(with_ and with_.args.get("recursive")))


def _insert_ctes(node: exp.Expression, ctes: list[exp.CTE], root: exp.Expression,
                 recursive: bool = False) -> None:
    """Put `ctes` in the WITH that holds the CTE containing `node`, before that CTE; when `node`
    is in the final query, at the end of the root's WITH. A recursive CTE among them makes
    that WITH recursive."""
    parent = node
    while parent is not None and parent is not root:
        if isinstance(parent, exp.CTE) and isinstance(parent.parent, exp.With):
            siblings = parent.parent.expressions
            index = next(i for i, cte in enumerate(siblings) if cte is parent)
            parent.parent.set("expressions", siblings[:index] + ctes + siblings[index:])
            if recursive:
                parent.parent.set("recursive", True)
            return
        parent = parent.parent
    with_ = root.args.get(_WITH)
    if with_ is None:
        root.set(_WITH, exp.With(expressions=ctes, recursive=recursive or None))
    else:
        with_.set("expressions", list(with_.expressions) + ctes)
        if recursive:
            with_.set("recursive", True)


def _check_no_macros(tree: exp.Expression, macros: dict[str, Macro], label: str) -> None:
    for call in tree.find_all(exp.Anonymous):
        if call.name.lower() in macros or call.name.lower() in ("query_table", "getvariable"):
            raise TranspileError(f"{label}: {call.name}() is left after inlining")


# --- 4. stars, UNION BY NAME, ASOF --------------------------------------------------------------

def _output_names(query: exp.Expression) -> list[str]:
    while isinstance(query, exp.Subquery):
        query = query.this
    if isinstance(query, exp.SetOperation):
        return _output_names(query.this)
    return list(query.named_selects)


def _align_union_by_name(tree: exp.Expression) -> None:
    """`a UNION ALL BY NAME b` -> `a UNION ALL b'`, b's columns put in a's order (NULL where b
    lacks one; a column only b has is added to a as NULL)."""
    for union in list(tree.find_all(exp.SetOperation)):
        if not union.args.get("by_name"):
            continue
        left, right = union.this, union.expression
        if not isinstance(right, exp.Select) or isinstance(right.selects[0], exp.Star):
            raise TranspileError("UNION BY NAME needs explicit columns on its right side")
        left_names = _output_names(left)
        right_exprs = {name: proj for name, proj in zip(right.named_selects, right.selects)}
        extra = [name for name in right.named_selects if name not in left_names]
        if extra:
            if not isinstance(left, exp.Select):
                raise TranspileError("UNION BY NAME: the left side lacks " + ", ".join(extra))
            left.select(*(exp.alias_(exp.Null(), n) for n in extra), copy=False)
            left_names += extra
        right.set("expressions", [
            right_exprs[name] if name in right_exprs else exp.alias_(exp.Null(), name)
            for name in left_names])
        union.set("by_name", None)


_FLIP = {exp.GTE: exp.LTE, exp.GT: exp.LT, exp.LTE: exp.GTE, exp.LT: exp.GT}


def _rewrite_asof_joins(tree: exp.Expression, counter) -> None:
    """`l ASOF [LEFT] JOIN r ON keys AND l.t >= r.t` -> `[LEFT] JOIN` with r's next t:
    `... AND l.t >= r.t AND (r.next_t IS NULL OR l.t < r.next_t)` (and the mirror for <=)."""
    for join in list(tree.find_all(exp.Join)):
        if str(join.args.get("method") or join.args.get("kind") or "").upper() != "ASOF":
            continue
        right = join.this
        alias = right.alias_or_name
        conditions = list(join.args["on"].flatten()) if isinstance(join.args.get("on"), exp.And) \
            else [join.args.get("on")]
        keys, inequality = [], None
        for condition in conditions:
            if isinstance(condition, (exp.EQ, exp.NullSafeEQ)):
                keys.append(next(side for side in (condition.this, condition.expression)
                                 if _on_side(side, alias)))
            elif type(condition) in _FLIP and inequality is None:
                inequality = condition
            else:
                raise TranspileError(f"ASOF JOIN condition not understood: {condition.sql()}")
        if inequality is None:
            raise TranspileError("ASOF JOIN without an inequality")
        op, left_t, right_t = type(inequality), inequality.this, inequality.expression
        if _on_side(left_t, alias):
            op, left_t, right_t = _FLIP[op], right_t, left_t
        # op(left_t, right_t) with op in >=, > (latest right_t) or <=, < (earliest right_t)
        latest = op in (exp.GTE, exp.GT)
        neighbour = f"__asof_{'next' if latest else 'prev'}_{next(counter)}"
        window = exp.Window(
            this=exp.Anonymous(this="lead" if latest else "lag", expressions=[right_t.copy()]),
            partition_by=[k.copy() for k in keys],
            order=exp.Order(expressions=[exp.Ordered(this=right_t.copy(), desc=False,
                                                     nulls_first=False)]))
        # the right side keeps its alias inside, so the ON clause's alias.column still resolves
        inner = exp.select(exp.Column(this=exp.Star(), table=exp.to_identifier(alias)),
                           exp.alias_(window, neighbour)).from_(right.copy())
        join.set("this", exp.Subquery(this=inner, alias=exp.TableAlias(
            this=exp.to_identifier(alias))))
        other = exp.column(neighbour, table=alias)
        beyond = (exp.LT if op is exp.GTE else exp.LTE if op is exp.GT else
                  exp.GT if op is exp.LTE else exp.GTE)(this=left_t.copy(), expression=other)
        join.set("on", exp.and_(join.args["on"], exp.or_(exp.Is(this=other.copy(),
                                                                   expression=exp.Null()),
                                                           beyond)))
        join.set("method", None)
        join.set("kind", None)
        if not join.args.get("side"):
            join.set("kind", "INNER")


def _on_side(expression: exp.Expression, alias: str) -> bool:
    return any(c.table == alias for c in expression.find_all(exp.Column))


_PRINTF_SPEC = re.compile(r"%[-#+ 0,(<]*\d*(?:\.\d+)?([a-zA-Z])")
_ORDER_SENSITIVE = (exp.Lead, exp.Lag, exp.RowNumber, exp.FirstValue, exp.LastValue,
                    exp.NthValue)


def _needs_order(window: exp.Window) -> bool:
    """A window with an empty OVER () whose result depends on the order of its input rows."""
    if window.args.get("partition_by") or window.args.get("order") or window.args.get("alias"):
        return False
    function = window.this
    return (isinstance(function, _ORDER_SENSITIVE)
            or (isinstance(function, exp.Anonymous) and function.name.lower() in
                ("lead", "lag", "row_number", "rank", "dense_rank", "ntile", "first_value",
                 "last_value", "nth_value"))
            or window.args.get("spec") is not None)


def _order_empty_windows(tree: exp.Expression, counter, label: str) -> None:
    """DuckDB keeps the order of a sorted subquery through the window functions of an empty
    OVER () above it. Spark and Trino do not: the order becomes explicit, as a row number taken
    where the rows are sorted and carried up to every window that relies on it."""
    for select in list(tree.find_all(exp.Select)):
        windows = [w for w in select.find_all(exp.Window)
                   if w.find_ancestor(exp.Select) is select and _needs_order(w)]
        if not windows:
            continue
        source = select.args.get(_FROM).this if select.args.get(_FROM) else None
        ordinal = _source_ordinal(source, tree, counter) if source is not None else None
        if ordinal is None or select.args.get("joins"):
            raise TranspileError(f"{label}: a window with an empty OVER () reads rows whose "
                                 "order is not given by a sorted subquery: "
                                 f"{select.sql('duckdb')[:300]}")
        for window in windows:
            window.set("order", exp.Order(expressions=[exp.Ordered(
                this=exp.column(ordinal, table=source.alias_or_name), nulls_first=False)]))


def _source_ordinal(source: exp.Expression, tree: exp.Expression, counter) -> str | None:
    if isinstance(source, exp.Subquery):
        return _ordinal(source.this, tree, counter)
    if isinstance(source, exp.Table) and isinstance(source.this, exp.Identifier):
        cte = next((c for c in tree.find_all(exp.CTE) if c.alias_or_name == source.name), None)
        return _ordinal(cte.this, tree, counter) if cte is not None else None
    return None


def _ordinal(query: exp.Expression, tree: exp.Expression, counter) -> str | None:
    """The name of a column of `query`'s output numbering its rows in their DuckDB order (added
    where the rows are sorted and passed through order-keeping selects); None if unordered."""
    if "tracewh_ordinal" in query.meta:
        return query.meta["tracewh_ordinal"]
    name = _new_ordinal(query, tree, counter)
    query.meta["tracewh_ordinal"] = name
    return name


def _new_ordinal(query: exp.Expression, tree: exp.Expression, counter) -> str | None:
    order = query.args.get("order")
    if isinstance(query, exp.SetOperation):
        if order is None:
            return None
        name = f"__ord_{next(counter)}"
        names = _output_names(query)
        keys = order.copy()
        for column in keys.find_all(exp.Column):
            column.set("table", exp.to_identifier("__ord_src"))
        query.set("order", None)
        wrapped = exp.select(*(exp.column(n, table="__ord_src") for n in names),
                             exp.alias_(exp.Window(this=exp.RowNumber(), order=keys), name)) \
            .from_(exp.Subquery(this=query.copy(),
                                alias=exp.TableAlias(this=exp.to_identifier("__ord_src"))))
        wrapped.meta["tracewh_ordinal"] = name
        query.replace(wrapped)
        return name
    if not isinstance(query, exp.Select):
        return None
    if order is not None:
        name = f"__ord_{next(counter)}"
        keys = order.copy()
        aliases = {p.alias: p.this for p in query.selects if isinstance(p, exp.Alias)}
        for column in list(keys.find_all(exp.Column)):
            if not column.table and column.name in aliases:
                column.replace(aliases[column.name].copy())
        query.select(exp.alias_(exp.Window(this=exp.RowNumber(), order=keys), name), copy=False)
        query.set("order", None)
        return name
    if (query.args.get("joins") or query.args.get("group") or query.args.get("distinct")
            or query.args.get("laterals") or not query.args.get(_FROM)
            or any(agg.find_ancestor(exp.Window) is None for agg in query.find_all(exp.AggFunc)
                   if agg.find_ancestor(exp.Select) is query)):
        return None
    source = query.args[_FROM].this
    inner = _source_ordinal(source, tree, counter)
    if inner is None:
        return None
    if inner not in query.named_selects:
        query.select(exp.column(inner, table=source.alias_or_name), copy=False)
    return inner


# --- 5. expressions -----------------------------------------------------------------------------

def _list_lengths(tree: exp.Expression, schema: dict) -> set[int]:
    """The ids of the len() calls that measure a list (DuckDB's len takes text or a list)."""
    calls = list(tree.find_all(exp.Length))
    if not calls:
        return set()
    annotate_types(tree, schema=schema, dialect="duckdb")
    return {id(call) for call in calls if call.this.is_type(exp.DataType.Type.ARRAY)}


def _portable_expressions(tree: exp.Expression, dialect: str, list_lengths: set[int]) -> None:
    # children before their parents: a rewrite copies its arguments, rewritten already
    for node in reversed(list(tree.walk())):
        if isinstance(node, exp.DataType) and node.this == exp.DataType.Type.INT128:
            node.replace(exp.DataType.build("DECIMAL(38, 0)"))  # HUGEINT
        elif (isinstance(node, exp.Window) and isinstance(node.this, exp.Count)
                and isinstance(node.this.this, exp.Distinct) and not node.args.get("order")):
            node.replace(_window_count_distinct(node))
        elif dialect == "duckdb":
            continue
        elif (dialect == "spark" and isinstance(node, exp.Window)
                and (isinstance(node.this, (exp.RowNumber, exp.Rank, exp.DenseRank))
                     or (isinstance(node.this, exp.Anonymous)
                         and node.this.name.lower() in ("row_number", "rank", "dense_rank")))
                and not isinstance(node.parent, exp.Cast)):
            # Spark's are INT, DuckDB's BIGINT: `(row_number() - 1) << 40` overflowed
            node.replace(exp.cast(node.copy(), "BIGINT"))
        elif (isinstance(node, exp.Window) and node.args.get("alias") is not None
                and not node.args.get("partition_by") and not node.args.get("order")
                and isinstance(node.parent, exp.Binary)):
            # `sum(n) OVER w - n`: Spark reads `w - n` as one (invalid) identifier w-n
            node.replace(exp.paren(node.copy()))
        elif (isinstance(node, exp.Anonymous) and node.name.lower() in ("printf", "format")
                and node.expressions and isinstance(node.expressions[0], exp.Literal)):
            # %f of a DECIMAL (DuckDB's 100.0) fails in Spark's formatter: pass a DOUBLE
            specs = _PRINTF_SPEC.findall(node.expressions[0].this.replace("%%", ""))
            for spec, arg in zip(specs, node.expressions[1:]):
                if spec.lower() in ("f", "e", "g", "a"):
                    arg.replace(exp.cast(arg.copy(), "DOUBLE"))
        elif (isinstance(node, exp.Anonymous)
                and node.name.lower() in ("list_aggregate", "array_aggregate", "list_aggr",
                                          "array_aggr")
                and len(node.expressions) == 2 and isinstance(node.expressions[1], exp.Literal)
                and node.expressions[1].name.lower() == "product"):
            node.replace(_list_product(node.expressions[0], dialect))
        elif isinstance(node, exp.RegexpSplit) or (
                isinstance(node, exp.Anonymous)
                and node.name.lower() in ("regexp_split_to_array", "string_split_regex")):
            args = [node.this, node.expression] if isinstance(node, exp.RegexpSplit) \
                else node.expressions[:2]
            node.replace(exp.Anonymous(this="split" if dialect == "spark" else "regexp_split",
                                       expressions=[a.copy() for a in args]))
        elif isinstance(node, exp.Div):
            # DuckDB: x / 0 is NULL; Spark (ANSI) and Trino raise
            divisor = node.expression
            if not (isinstance(divisor, exp.Literal) and divisor.name not in ("0", "0.0")):
                node.set("expression", exp.Nullif(this=divisor.copy(),
                                                  expression=exp.Literal.number(0)))
        elif isinstance(node, exp.Bracket) and len(node.expressions) == 1 \
                and not (isinstance(node.expressions[0], exp.Literal)
                         and node.expressions[0].is_string):
            node.replace(_list_element(node.this, node.expressions[0], dialect))
        elif isinstance(node, exp.Anonymous) and node.name.lower() == "error" \
                and len(node.expressions) == 1:
            # DuckDB's error(message): Spark's raise_error, Trino's fail
            node.set("this", "raise_error" if dialect == "spark" else "fail")
        elif _is_list_slice(node):
            node.replace(_list_slice(*_slice_args(node)))
        elif dialect == "spark" and isinstance(node, exp.JSONType):
            node.replace(_json_type(node.this))
        elif isinstance(node, exp.Cast) and node.to.is_type(exp.DataType.Type.JSON):
            # DuckDB's CAST(text AS JSON) reads the text as JSON: Spark keeps JSON as text (its
            # to_json takes no text), Trino parses it (its CAST makes a JSON string of it)
            node.replace(node.this.copy() if dialect == "spark" else exp.Anonymous(
                this="json_parse", expressions=[node.this.copy()]))
        elif (isinstance(node, exp.TryCast) and node.to.is_type(exp.DataType.Type.ARRAY)
                and not isinstance(node.this, exp.Array)):
            # DuckDB reads list text ('[0, 1]'); Spark and Trino cast no text to a list
            node.replace(_list_from_text(node.this, node.to, dialect))
        elif isinstance(node, exp.Length) and id(node) in list_lengths:
            # DuckDB's len(list); Spark's and Trino's length() take text only
            node.replace(exp.ArraySize(this=node.this.copy()))
        elif isinstance(node, exp.GenerateSeries) and node.args.get("is_end_exclusive"):
            # range(a, b): empty when b <= a (sequence(a, b - 1) would run backwards)
            start = node.args.get("start") or exp.Literal.number(0)
            end = node.args["end"]
            step = node.args.get("step")
            sequence = exp.Anonymous(this="sequence", expressions=[
                start.copy(), exp.Sub(this=exp.paren(end.copy()), expression=exp.Literal.number(1)),
                *([step.copy()] if step else [])])
            node.replace(exp.If(this=exp.GT(this=end.copy(), expression=start.copy()),
                                true=sequence,
                                false=exp.cast(exp.Array(expressions=[]), "ARRAY<BIGINT>")))
        elif isinstance(node, (exp.Median, exp.PercentileCont)) and dialect == "trino" \
                and not isinstance(node.parent, exp.WithinGroup):
            # Trino has no exact percentile: its approx_percentile (a documented difference)
            quantile = node.expression if isinstance(node, exp.PercentileCont) \
                else exp.Literal.number(0.5)
            node.replace(exp.Anonymous(this="approx_percentile",
                                       expressions=[node.this.copy(), quantile.copy()]))
        elif isinstance(node, exp.PercentileCont) and dialect == "spark" \
                and not isinstance(node.parent, exp.WithinGroup):
            # quantile_cont(x, q): Spark's exact, interpolating percentile(x, q)
            node.replace(exp.Anonymous(this="percentile",
                                       expressions=[node.this.copy(), node.expression.copy()]))


_LIST_PRODUCT = {  # a fold over the non-NULL elements, NULL when none, as DuckDB's product
    "spark": "aggregate(filter(__list, __v -> __v IS NOT NULL), CAST(NULL AS DOUBLE), "
             "(__acc, __v) -> coalesce(__acc, CAST(1 AS DOUBLE)) * __v)",
    "trino": "reduce(filter(__list, __v -> __v IS NOT NULL), CAST(NULL AS DOUBLE), "
             "(__acc, __v) -> coalesce(__acc, CAST(1 AS DOUBLE)) * __v, __acc -> __acc)",
}


def _list_element(values: exp.Expression, index: exp.Expression, dialect: str) -> exp.Expression:
    """DuckDB's l[i]: 1-based, negative from the end, NULL when out of range or 0. Spark's
    element_at raises there (ANSI) and its try_element_at still raises on 0; Trino's
    element_at raises on 0."""
    literal = index.this if isinstance(index, exp.Neg) else index
    if isinstance(literal, exp.Literal) and literal.is_int and int(literal.name) == 0:
        return exp.Null()
    if not isinstance(literal, exp.Literal):
        index = exp.Nullif(this=index.copy(), expression=exp.Literal.number(0))
    return exp.Anonymous(this="try_element_at" if dialect == "spark" else "element_at",
                         expressions=[values.copy(), index.copy()])


def _json_type(text: exp.Expression) -> exp.Expression:
    """DuckDB's json_type(json) for Spark, where JSON is text: told by the text's first
    character (a JSON string is 'VARCHAR' to DuckDB)."""
    return sqlglot.parse_one(
        "CASE WHEN x IS NULL THEN NULL WHEN ltrim(x) LIKE '\"%' THEN 'VARCHAR' "
        "WHEN ltrim(x) LIKE '{%' THEN 'OBJECT' WHEN ltrim(x) LIKE '[%' THEN 'ARRAY' "
        "WHEN trim(x) IN ('true', 'false') THEN 'BOOLEAN' WHEN trim(x) = 'null' THEN 'NULL' "
        "WHEN trim(x) RLIKE '^[0-9]+$' THEN 'UBIGINT' WHEN trim(x) RLIKE '^-[0-9]+$' "
        "THEN 'BIGINT' ELSE 'DOUBLE' END", read="spark",
    ).transform(lambda n: text.copy() if isinstance(n, exp.Column) and n.name == "x" else n)


def _list_from_text(text: exp.Expression, to: exp.DataType, dialect: str) -> exp.Expression:
    """DuckDB's TRY_CAST(text AS T[]): the list written as JSON, NULL when it is not one."""
    if dialect == "spark":
        return exp.Anonymous(this="from_json", expressions=[
            text.copy(), exp.Literal.string(to.sql(dialect="spark").lower())])
    parsed = exp.Anonymous(this="try", expressions=[
        exp.Anonymous(this="json_parse", expressions=[text.copy()])])
    return exp.TryCast(this=parsed, to=to.copy())


def _is_list_slice(node: exp.Expression) -> bool:
    return ((isinstance(node, exp.ArraySlice) and not node.args.get("is_length")
             and node.args.get("end") is not None)
            or (isinstance(node, exp.Anonymous) and len(node.expressions) == 3
                and node.name.lower() in ("list_slice", "array_slice")))


def _slice_args(node: exp.Expression) -> tuple[exp.Expression, exp.Expression, exp.Expression]:
    if isinstance(node, exp.ArraySlice):
        return node.this, node.args["start"], node.args["end"]
    return tuple(node.expressions)


def _list_slice(values: exp.Expression, begin: exp.Expression,
                end: exp.Expression) -> exp.Expression:
    """DuckDB's list_slice(l, b, e): 1-based and inclusive, a negative index counts from the
    end (-1: the last), 0 and a begin before the start mean the start, an end past the end
    means the end, NULL when any argument is NULL; b past e is empty. Spark's and Trino's
    slice(l, start, length) raise on start 0 or a negative length, so both are computed here."""
    size = exp.ArraySize(this=exp.paren(values.copy()))

    def pick(condition, true, false):
        return exp.paren(exp.Case(ifs=[exp.If(this=condition, true=true.copy())],
                                  default=false.copy()))

    def position(i):  # 1-based: -1 is the last
        return pick(exp.LT(this=i.copy(), expression=exp.Literal.number(0)),
                    exp.Add(this=exp.Add(this=size.copy(), expression=exp.paren(i.copy())),
                            expression=exp.Literal.number(1)), i)
    one = exp.Literal.number(1)
    first, last = position(begin), position(end)
    first = pick(exp.LT(this=first.copy(), expression=one.copy()), one, first)
    last = pick(exp.GT(this=last.copy(), expression=size.copy()), size, last)
    count = exp.Add(this=exp.Sub(this=last, expression=first.copy()), expression=one.copy())
    length = pick(exp.LT(this=count.copy(), expression=exp.Literal.number(0)),
                  exp.Literal.number(0), count)
    return exp.Anonymous(this="slice", expressions=[values.copy(), first, length])


def _list_product(values: exp.Expression, dialect: str) -> exp.Expression:
    """list_aggregate(l, 'product') (perf_numel), which neither Spark nor Trino has."""
    fold = sqlglot.parse_one(_LIST_PRODUCT[dialect], read=dialect)
    next(c for c in fold.find_all(exp.Column) if c.name == "__list").replace(
        exp.paren(values.copy()))
    return fold


def _window_count_distinct(window: exp.Window) -> exp.Expression:
    """count(DISTINCT x) OVER (PARTITION BY p), which neither Spark nor Trino has, as
    dense_rank up + dense_rank down - 1, less one when x has NULLs in the partition."""
    value = window.this.this.expressions[0]
    partition = window.args.get("partition_by") or []
    if window.args.get("alias") is not None and not partition:  # OVER name: the WINDOW clause
        select = window.find_ancestor(exp.Select)
        named = next((w for w in (select.args.get("windows") or [])
                      if w.name == window.args["alias"].name), None)
        if named is None or named.args.get("order") or named.args.get("spec"):
            raise TranspileError(f"count(DISTINCT) over window {window.args['alias'].name}: "
                                 "only PARTITION BY is supported")
        partition = named.args.get("partition_by") or []

    def over(function, order=None):
        return exp.Window(this=function, partition_by=[p.copy() for p in partition],
                          order=order)
    up = over(exp.Anonymous(this="dense_rank"), exp.Order(expressions=[
        exp.Ordered(this=value.copy(), nulls_first=True)]))
    down = over(exp.Anonymous(this="dense_rank"), exp.Order(expressions=[
        exp.Ordered(this=value.copy(), desc=True, nulls_first=False)]))
    nulls = over(exp.Max(this=exp.If(this=exp.Is(this=value.copy(), expression=exp.Null()),
                                      true=exp.Literal.number(1), false=exp.Literal.number(0))))
    return exp.paren(exp.Sub(this=exp.Sub(this=exp.Add(this=up, expression=down),
                                          expression=exp.Literal.number(1)),
                             expression=nulls))


def _generators_to_lateral_views(tree: exp.Expression, counter) -> None:
    """Spark cannot nest explode() in an expression (`x * 10 + unnest(...)`): each generator in
    a projection becomes a LATERAL VIEW column."""
    for select in list(tree.find_all(exp.Select)):
        for projection in select.selects:
            for generator in list(projection.find_all(exp.Explode, exp.Unnest)):
                if generator.find_ancestor(exp.Select) is not select:
                    continue
                number = next(counter)
                column = f"__gen_{number}"
                array = generator.this if isinstance(generator, exp.Explode) \
                    else generator.expressions[0]
                lateral = exp.Lateral(this=exp.Explode(this=array.copy()), view=True,
                                      alias=exp.TableAlias(this=exp.to_identifier(f"__lv_{number}"),
                                                           columns=[exp.to_identifier(column)]))
                select.append("laterals", lateral)
                generator.replace(exp.column(column, table=f"__lv_{number}"))


def _lateral_values_to_inline(tree: exp.Expression) -> None:
    """Spark evaluates no column of the row in an inline table (`CROSS JOIN LATERAL (VALUES
    (c.x, 1), ...) s(a, b)`): the rows become a LATERAL VIEW INLINE of an array of structs.
    Only the last join moves, so the order the joins read each other in stays."""
    for select in list(tree.find_all(exp.Select)):
        joins = select.args.get("joins") or []
        last = joins[-1] if joins else None
        lateral = last.this if last is not None else None
        if (last is None or last.args.get("kind") != "CROSS"
                or not isinstance(lateral, exp.Lateral)
                or not isinstance(lateral.this, exp.Subquery)
                or not isinstance(lateral.this.this, exp.Values)):
            continue
        names = [column.copy() for column in lateral.args["alias"].columns]
        rows = [exp.Anonymous(this="struct", expressions=[
                    exp.alias_(value.copy(), name.copy())
                    for value, name in zip(row.expressions, names)])
                for row in lateral.this.this.expressions]
        last.pop()
        select.append("laterals", exp.Lateral(
            this=exp.Anonymous(this="inline", expressions=[
                exp.Anonymous(this="array", expressions=rows)]),
            view=True, alias=exp.TableAlias(this=lateral.args["alias"].this.copy(), columns=names)))


def _add_leading_columns(tree: exp.Expression, metric: Metric) -> None:
    leading = [exp.alias_(exp.Literal.string(metric.name), "metric"),
               exp.alias_(exp.cast(exp.Literal.number(metric.version), "INT"), "version")]
    if isinstance(tree, exp.Select):
        tree.set("expressions", leading + list(tree.expressions))
    else:
        raise TranspileError(f"{metric.name}: the final query is a {tree.key.upper()}; "
                             "wrap it in SELECT ... FROM (...)")
