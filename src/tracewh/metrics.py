"""Metrics: one read-only SELECT per file in sql/metrics, with a checked header and bound params.

A metric file is a comment header, then one query over the public views (DESIGN section 7):

    -- metric: gpu_kernel_summary          (must equal the file name)
    -- version: 1                          (raise it whenever the query changes)
    -- summary: one line
    -- unit: ns                            (optional)
    -- grain: run_id, rank, name
    -- columns: run_id VARCHAR, rank INTEGER, name VARCHAR, total_ns BIGINT   (optional: every
                                            column the query gives, in order, with its DuckDB
                                            type; checked against the result by the tests)
    -- params: run (text, optional), rank (int, optional), top (int, default 0)   (or: none)
    -- see: nsys stats -r cuda_gpu_kern_sum  (optional)
    -- uses: kernels                       (the modules of sql/lib and sql/views it reads)
    -- complexity: O(n log n) in kernels   (optional: its cost in what a capture holds many of)
    -- show: name, time_pct, total_ns      (optional: the columns a narrow terminal keeps, most
                                            telling first; the others give way first)
    SELECT ...

Header lines are `-- key: value` with one of the keys above; other leading comment lines are free
text. The query reads its parameters with `getvariable('name')`, so the same file runs unchanged in
the plain DuckDB shell after `SET VARIABLE name = ...`; the runner binds each declared parameter
with a prepared `SET VARIABLE name = ?` and never pastes a value into SQL.

The lock file (`sql/metrics.lock`) records every released (metric, version) with the SHA-256 of
its normalized body (see `normalized_body`) and of the code of every module it reads, directly or
through other modules, and of the derive scripts that fill the stored rows they read
(`sqlmodules.closure_sha256`), so neither the query nor a view, macro or derive script under it
can change under the same version. A change that gives the same answers (a faster
plan, a shared macro) is re-locked with a reason instead, logged in `sql/metrics.changes`.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from typing import TYPE_CHECKING

from .errors import TracewhError
from .resources import sql_dir

if TYPE_CHECKING:  # loaded where a query is checked or run: 'metrics list' reads headers only
    import duckdb
    import pyarrow as pa
    from sqlglot import exp

REQUIRED_KEYS = ("metric", "version", "summary", "grain", "params", "uses")
OPTIONAL_KEYS = ("unit", "see", "complexity", "show", "columns")
_HEADER_LINE = re.compile(r"^--\s*(%s):\s*(.*?)\s*$" % "|".join(REQUIRED_KEYS + OPTIONAL_KEYS))
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_COLUMN = re.compile(r"^(?P<name>[a-z_][a-z0-9_]*)\s+(?P<type>[A-Z][A-Z0-9_ ]*(?:\(.*\))?(?:\[\])*)$")
_PARAM = re.compile(
    r"^(?P<name>[a-z_][a-z0-9_]*)\s*\(\s*(?P<type>\w+)\s*"
    r"(?:,\s*(?:(?P<optional>optional)|default\s+(?P<default>.+?)))?\s*\)$"
)

LOCK_NAME = "metrics.lock"
CHANGES_NAME = "metrics.changes"
LOCK_HEADER = """\
# tracewh metrics lock: every released (metric, version), the SHA-256 of its normalized body and
# the SHA-256 of the modules it reads (its `-- uses:` closure over sql/lib and sql/views).
# Columns: metric<TAB>version<TAB>body sha256<TAB>closure sha256 (- : locked before closures
# were). Sorted; old versions stay. Never edit a line: change the query, raise its `-- version:`,
# then run `tracewh metrics lock`; a change that gives the same answers is re-locked with
# `tracewh metrics lock --same-answers "why"`, which logs the reason in metrics.changes.
# Normalized body = the file without its leading comment header, trailing whitespace stripped from
# each line, leading and trailing blank lines dropped, lines joined with a newline, UTF-8.
# Closure = sqlmodules.closure_sha256: each module's name and the SHA-256 of its SQL tokens.
"""
CHANGES_HEADER = """\
# Metric changes re-locked without a new version, because they give the same answers:
# date (UTC)<TAB>metric vN, ...<TAB>why. Appended by `tracewh metrics lock --same-answers`.
"""


class MetricError(TracewhError):
    """A metric file is malformed, or a metric cannot run with the parameters given."""


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # text | int | float | bool
    optional: bool  # True when it may be left unset (then getvariable() gives NULL)
    default: object = None  # typed value used when the caller gives none


@dataclass(frozen=True)
class Metric:
    name: str
    version: int
    summary: str
    unit: str | None
    grain: tuple[str, ...]
    params: tuple[Param, ...]
    see: str | None
    uses: tuple[str, ...]  # the modules of sql/lib and sql/views the query reads
    body: str  # the file after its header: the query, as written
    path: Path
    complexity: str | None = None  # its cost in what a capture holds many of (ranges, ops)
    show: tuple[str, ...] = ()  # the columns a narrow terminal keeps, most telling first
    columns: tuple[tuple[str, str], ...] = ()  # (name, DuckDB type) of each column it gives

    @property
    def query(self) -> str:
        """The body without its final semicolon, ready to wrap in a subquery."""
        return _strip_terminator(self.body)

    @property
    def body_sha256(self) -> str:
        return hashlib.sha256(normalized_body(self.body).encode()).hexdigest()

    @property
    def closure_sha256(self) -> str:
        from .sqlmodules import closure_sha256, load_modules

        root = _sql_root_of(self.path)
        return closure_sha256(self.uses, load_modules(root), root)


def _sql_root_of(path: Path) -> Path:
    """The sql/ folder a metric file belongs to (a file elsewhere reads this tracewh's views)."""
    root = path.resolve().parents[1]
    return root if (root / "views").is_dir() else sql_dir()


# --- parameters -----------------------------------------------------------------------------

def _parse_bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "1", "yes", "on"):
        return True
    if value in ("false", "0", "no", "off"):
        return False
    raise ValueError(text)


_TYPES = {"text": str, "int": int, "float": float, "bool": _parse_bool}


def _convert(type_name: str, raw: object) -> object:
    """The typed value of `raw` (ValueError if it does not parse as `type_name`)."""
    text = str(raw)
    return text if type_name == "text" else _TYPES[type_name](text.strip())


def _parse_params(where: str, text: str) -> tuple[Param, ...]:
    if text.strip().lower() == "none":
        return ()
    params: list[Param] = []
    for item in _split_top_level(text):
        match = _PARAM.match(item.strip())
        if not match:
            raise MetricError(
                f"{where}: cannot read parameter {item.strip()!r} - "
                "write `name (type)`, `name (type, optional)` or `name (type, default VALUE)`"
            )
        name, type_name = match["name"], match["type"].lower()
        if type_name not in _TYPES:
            raise MetricError(f"{where}: parameter {name} has type {type_name!r}; "
                              f"use one of {', '.join(_TYPES)}")
        if any(p.name == name for p in params):
            raise MetricError(f"{where}: parameter {name} is declared twice")
        default = None
        if match["default"] is not None:
            raw = match["default"].strip()
            if type_name == "text" and len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
                raw = raw[1:-1]
            try:
                default = _convert(type_name, raw)
            except ValueError:
                raise MetricError(
                    f"{where}: default of {name} ({raw!r}) is not a valid {type_name}") from None
        optional = match["optional"] is not None or default is not None
        params.append(Param(name, type_name, optional, default))
    return tuple(params)


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [part for part in parts + [current] if part.strip()]


# --- loading and checking a file ------------------------------------------------------------

def load_metric(path: str | Path, check: bool = True) -> Metric:
    """Read and check one metric file; MetricError says `FILE:LINE: what is wrong`. Without
    `check`, the query is not parsed (sqlglot): the header is all a listing needs."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise MetricError(f"{path}: cannot read metric file: {exc.strerror}") from None
    header, body_line = _read_header(path, text)
    missing = [key for key in REQUIRED_KEYS if key not in header]
    if missing:
        raise MetricError(f"{path}:1: header lacks {', '.join(f'`-- {k}:`' for k in missing)}")

    name, line = header["metric"]
    if name != path.stem or not _NAME.match(name):
        raise MetricError(f"{path}:{line}: metric is {name!r} but the file is {path.name}; "
                          "the metric name must equal the file name (lowercase, digits, _)")
    raw_version, line = header["version"]
    if not raw_version.isdigit() or int(raw_version) < 1:
        raise MetricError(f"{path}:{line}: version must be a positive integer, not {raw_version!r}")
    raw_params, params_line = header["params"]
    params = _parse_params(f"{path}:{params_line}", raw_params)
    grain = tuple(col.strip() for col in header["grain"][0].split(",") if col.strip())
    for key in ("summary", "grain"):
        if not header[key][0]:
            raise MetricError(f"{path}:{header[key][1]}: `-- {key}:` is empty")

    show = tuple(c.strip() for c in header.get("show", ("",))[0].split(",") if c.strip())
    columns = _parse_columns(path, header, grain, show)

    body = "".join(text.splitlines(keepends=True)[body_line - 1:])
    if not body.strip():
        raise MetricError(f"{path}:{body_line}: no query after the header")
    if check:
        try:
            _check_query(path, text, body_line, {p.name for p in params}, params_line)
        except RecursionError:  # sqlglot parses and walks nesting recursively
            raise MetricError(f"{path}:{body_line}: nested too deeply to check - a metric is one "
                              "read-only SELECT over the views, with fewer levels of parentheses "
                              "or subqueries") from None
        from .sqlmodules import check_uses, load_modules

        wrong_uses = check_uses(path, text, load_modules(_sql_root_of(path)))
        if wrong_uses:
            uses_line = header["uses"][1]
            raise MetricError(wrong_uses.replace(f"{path}: ", f"{path}:{uses_line}: ", 1))
    return Metric(
        name=name,
        version=int(raw_version),
        summary=header["summary"][0],
        unit=header.get("unit", (None,))[0] or None,
        grain=grain,
        params=params,
        see=header.get("see", (None,))[0] or None,
        uses=tuple(u.strip() for u in header["uses"][0].split(",")
                   if u.strip() and u.strip() != "none"),
        body=body,
        path=path,
        complexity=header.get("complexity", (None,))[0] or None,
        show=show,
        columns=columns,
    )


def _parse_columns(path: Path, header: dict[str, tuple[str, int]], grain: tuple[str, ...],
                   show: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """The declared `name TYPE` pairs; the grain and the shown columns must be among them."""
    if "columns" not in header:
        return ()
    text, line = header["columns"]
    columns: list[tuple[str, str]] = []
    for item in _split_top_level(text):
        match = _COLUMN.match(item.strip())
        if not match:
            raise MetricError(f"{path}:{line}: cannot read column {item.strip()!r} - write "
                              "`name TYPE` (a DuckDB type in capitals: BIGINT, VARCHAR[], ...)")
        if any(name == match["name"] for name, _ in columns):
            raise MetricError(f"{path}:{line}: column {match['name']} is declared twice")
        columns.append((match["name"], match["type"].strip()))
    names = {name for name, _ in columns}
    for key, wanted in (("grain", grain), ("show", show)):
        missing = [name for name in wanted if name not in names]
        if missing:
            raise MetricError(f"{path}:{header[key][1]}: `-- {key}:` names "
                              f"{', '.join(missing)}, not among `-- columns:`")
    return tuple(columns)


def _read_header(path: Path, text: str) -> tuple[dict[str, tuple[str, int]], int]:
    """The `-- key: value` lines of the leading comment block, and the line the body starts on."""
    header: dict[str, tuple[str, int]] = {}
    lines = text.splitlines()
    number = 0
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("--"):
            return header, number
        match = _HEADER_LINE.match(stripped)
        if match:
            key, value = match.groups()
            if key in header:
                raise MetricError(f"{path}:{number}: `-- {key}:` appears twice "
                                  f"(first on line {header[key][1]})")
            header[key] = (value, number)
    return header, number + 1


def _check_query(path: Path, text: str, body_line: int, declared: set[str], params_line: int):
    """One read-only query over public views and its own CTEs, using exactly the declared params."""
    import sqlglot
    from sqlglot import exp

    # statements and expressions a read-only query never contains (shared with `tracewh sql`)
    from .guard import FORBIDDEN_NODES as _FORBIDDEN
    from .guard import function_name, refused_function
    from .warehouse import public_view_names

    try:
        statements = [s for s in sqlglot.parse(text, read="duckdb") if s is not None]
    except sqlglot.errors.ParseError as exc:
        error = exc.errors[0] if exc.errors else {}
        raise MetricError(f"{path}:{error.get('line', body_line)}: cannot parse the query: "
                          f"{error.get('description', exc)}") from None
    starts = _statement_lines(text) or [body_line]
    if len(statements) != 1:
        raise MetricError(f"{path}:{starts[min(1, len(starts) - 1)]}: a metric is one statement, "
                          f"found {len(statements)}")
    query = statements[0]
    if not isinstance(query, (exp.Select, exp.SetOperation)):
        raise MetricError(f"{path}:{starts[0]}: a metric is a read-only SELECT, "
                          f"not {query.key.upper()}")
    for node in query.walk():
        if isinstance(node, _FORBIDDEN):
            raise MetricError(f"{path}:{_line_of(node, text, body_line)}: a metric is read-only; "
                              f"it may not contain {node.key.upper()}")

    public = {name.lower() for name in public_view_names()}
    function = refused_function(query, public)  # the rule of `tracewh sql`, LATERAL included
    if function is not None:
        raise MetricError(f"{path}:{_line_of(function, text, body_line)}: reads table function "
                          f"{function_name(function)}(); a metric reads only the public views")
    ctes = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
    for table in query.find_all(exp.Table):
        _check_table(path, text, body_line, table, public, ctes)

    used: set[str] = set()
    for call in query.find_all(exp.Anonymous):
        if call.name.lower() != "getvariable":
            continue
        line = _line_of(call, text, body_line)
        args = call.expressions
        if len(args) != 1 or not (isinstance(args[0], exp.Literal) and args[0].is_string):
            raise MetricError(f"{path}:{line}: getvariable() takes one quoted parameter name")
        name = args[0].this
        if name not in declared:
            raise MetricError(f"{path}:{line}: getvariable('{name}') reads a parameter that "
                              "`-- params:` does not declare")
        used.add(name)
    unused = sorted(declared - used)
    if unused:
        raise MetricError(f"{path}:{params_line}: declared parameter(s) {', '.join(unused)} "
                          "never read with getvariable()")


def _check_table(path, text, body_line, table: exp.Table, public: set[str], ctes: set[str]):
    from sqlglot import exp

    source = table.this
    line = _line_of(source, text, body_line)
    if not isinstance(source, exp.Identifier):
        name = source.name if isinstance(source, exp.Anonymous) else source.sql_name()
        if isinstance(source, exp.Anonymous) and name.lower() in public:
            return  # a table macro of sql/views
        raise MetricError(f"{path}:{line}: reads table function {name.lower()}(); "
                          "a metric reads only the public views")
    if table.args.get("db") or table.args.get("catalog"):
        raise MetricError(f"{path}:{line}: reads {table.sql(dialect='duckdb')}; a metric reads "
                          "only the public views (unqualified names), never store.* tables")
    if source.name.lower() not in public | ctes:
        raise MetricError(f"{path}:{line}: reads {source.name!r}, which is neither a public "
                          "view (sql/views) nor a CTE of this query")


def _line_of(node: exp.Expression, text: str, default: int) -> int:
    """The file line of a node: from sqlglot's token positions, else where its name appears."""
    from sqlglot import exp

    for candidate in (node, *node.find_all(exp.Identifier, exp.Literal)):
        line = candidate.meta.get("line") if candidate.meta else None
        if line:
            return line
    word = node.name or node.key
    for number, line_text in enumerate(text.splitlines(), start=1):
        if number >= default and word and word.lower() in line_text.lower():
            return number
    return default


def _statement_lines(text: str) -> list[int]:
    """The line each statement of `text` starts on."""
    import sqlglot
    from sqlglot.tokens import TokenType

    try:
        tokens = sqlglot.tokenize(text, read="duckdb")
    except sqlglot.errors.TokenError:
        return []
    lines, after_semicolon = [], True
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            after_semicolon = True
        elif after_semicolon:
            lines.append(token.line)
            after_semicolon = False
    return lines


def _strip_terminator(body: str) -> str:
    """The body without its final `;`; comments after it stay (wrapped_sql adds a newline)."""
    # the usual shape, without sqlglot (its import is a fifth of a second at every query): the
    # last line that is not blank or a comment ends with `;` and holds no comment
    lines = body.split("\n")
    last = len(lines) - 1
    while last >= 0 and (not lines[last].strip() or lines[last].lstrip().startswith("--")):
        last -= 1
    code = lines[last].rstrip() if last >= 0 else ""
    if code.endswith(";") and "--" not in code and "/*" not in code and "*/" not in code:
        return "\n".join(lines[:last] + [code[:-1] + lines[last][len(code):]] + lines[last + 1:])
    import sqlglot
    from sqlglot.tokens import TokenType

    tokens = sqlglot.tokenize(body, read="duckdb")
    if tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        cut = tokens[-1].start
        return body[:cut] + body[cut + 1:]
    return body


# --- finding metrics ------------------------------------------------------------------------

def metrics_dir(sql_root: str | Path | None = None) -> Path:
    return Path(sql_root or sql_dir()) / "metrics"


def find_metric(name_or_path: str | Path, sql_root: str | Path | None = None) -> Metric:
    """A metric by name (sql/metrics/NAME.sql) or by the path of a .sql file."""
    candidate = Path(name_or_path)
    if candidate.suffix == ".sql" or len(candidate.parts) > 1:
        if not candidate.is_file():
            raise MetricError(f"{candidate}: no such metric file")
        return load_metric(candidate)
    path = metrics_dir(sql_root) / f"{name_or_path}.sql"
    if not path.is_file():
        from .mistakes import did_you_mean

        known = [p.stem for p in metrics_dir(sql_root).glob("*.sql")]
        raise MetricError(f"unknown metric {str(name_or_path)!r}"
                          f"{did_you_mean(str(name_or_path), known)} - "
                          "'tracewh metrics list' shows the metrics there are")
    return _locked_or_checked(path, sql_root)


def _locked_or_checked(path: Path, sql_root: str | Path | None) -> Metric:
    """A catalogue metric whose query is the one its lock entry holds, unparsed: the lock is
    written only for checked queries (update_lock), so parsing it again with sqlglot (a quarter
    of a second, most of a small query's answer) proves nothing new. Any other query is checked."""
    metric = load_metric(path, check=False)
    lock_path = default_lock_path(sql_root)
    try:
        locked = read_lock(lock_path).get((metric.name, metric.version))
    except MetricError:
        locked = None
    if locked is not None and locked.body == metric.body_sha256:
        return metric
    return load_metric(path)


def list_metrics(sql_root: str | Path | None = None, check: bool = True) -> list[Metric]:
    """Every metric of sql/metrics, by name; the first bad file raises MetricError."""
    return [load_metric(path, check) for path in sorted(metrics_dir(sql_root).glob("*.sql"))]



def metric_catalogue(sql_root: str | Path | None = None):
    """Every metric's name, version, summary, parameters and grain (`tracewh metrics list`),
    from the headers alone ('tracewh metrics check' parses the queries)."""
    from .output import Rows

    found = list_metrics(sql_root, check=False)
    return Rows(["metric", "version", "summary", "params", "grain"],
                [False, True, False, False, False],
                [(m.name, m.version, m.summary, ", ".join(p.name for p in m.params),
                  ", ".join(m.grain)) for m in found], len(found))


# --- running --------------------------------------------------------------------------------

_REST_TEXT = re.compile(r"([\d,]+ more (ops|rows)[^(]*) \(top=0 lists them\)")


def rows_left_out(metric: Metric, result: pa.Table) -> str | None:
    """What the last row stands for when a metric that keeps its `top` rows (run_diff,
    regressions) left others out: its 'rest' row's text without the hint ('15,726 more rows,
    8 flagged, 3 worse'); else None."""
    if result.num_rows == 0 or not any(p.name == "top" for p in metric.params):
        return None
    grain = [c for c in metric.grain if c in result.column_names]
    last = list(result.slice(result.num_rows - 1).select(grain).to_pylist()[0].values())
    if "rest" not in last[:-1]:  # the rest row: 'rest' in one grain column, its text next
        return None
    found = _REST_TEXT.fullmatch(str(last[last.index("rest") + 1]))
    return found.group(1) if found else None


def bind_values(metric: Metric, params: dict[str, object] | None) -> dict[str, object]:
    """Typed value (None = unset) of every declared parameter, from `params` and the defaults."""
    params = dict(params or {})
    declared = {p.name: p for p in metric.params}
    for name in params:
        if name not in declared:
            from .mistakes import did_you_mean

            known = ", ".join(declared) or "none"
            raise MetricError(f"{metric.name}: no parameter {name!r}"
                              f"{did_you_mean(name, list(declared))} (declared: {known})")
    values: dict[str, object] = {}
    for param in metric.params:
        if param.name in params and params[param.name] is not None:
            try:
                values[param.name] = _convert(param.type, params[param.name])
            except ValueError:
                raise MetricError(f"{metric.name}: parameter {param.name}="
                                  f"{params[param.name]!r} is not a valid {param.type}") from None
        elif param.default is not None:
            values[param.name] = param.default
        elif param.optional:
            values[param.name] = None
        else:
            raise MetricError(f"{metric.name}: parameter {param.name} is required - "
                              f"pass --param {param.name}=VALUE")
    return values


def wrapped_sql(metric: Metric) -> str:
    """The metric's query with the leading `metric` and `version` columns."""
    # name is checked against _NAME and version is an int: nothing user-given is pasted here.
    return (f"SELECT '{metric.name}' AS metric, CAST({metric.version} AS INTEGER) AS version, *\n"
            f"FROM (\n{metric.query}\n)")


def run_metric(con: duckdb.DuckDBPyConnection, metric: Metric,
               params: dict[str, object] | None = None, max_bytes: int | None = None) -> pa.Table:
    """Run `metric` on `con` with `params` (strings, as typed on the command line); a result
    holding more than `max_bytes` is refused (warehouse.query_arrow)."""
    import duckdb

    from .warehouse import query_arrow

    values = bind_values(metric, params)
    try:
        for name, value in values.items():
            # Names are quoted (`window` is a keyword) and checked by _PARAM; values are bound.
            if value is None:
                con.execute(f'RESET VARIABLE "{name}"')  # no stale value from an earlier run
            else:
                con.execute(f'SET VARIABLE "{name}" = ?', [value])
        return query_arrow(con, wrapped_sql(metric), max_bytes)
    except duckdb.Error as exc:
        from .mistakes import duckdb_message

        raise MetricError(f"{metric.name} v{metric.version} ({metric.path}) failed: "
                          f"{duckdb_message(exc)}") from None
    finally:
        for name in values:
            con.execute(f'RESET VARIABLE "{name}"')


# --- the lock -------------------------------------------------------------------------------

def normalized_body(body: str) -> str:
    """What the lock hashes: trailing whitespace and surrounding blank lines do not count."""
    return "\n".join(line.rstrip() for line in body.splitlines()).strip("\n")


def default_lock_path(sql_root: str | Path | None = None) -> Path:
    return Path(sql_root or sql_dir()) / LOCK_NAME


@dataclass(frozen=True)
class LockEntry:
    body: str  # sha256 of the normalized body
    closure: str | None  # sha256 of the modules it reads; None: locked before closures were


def read_lock(lock_path: str | Path) -> dict[tuple[str, int], LockEntry]:
    """(metric, version) -> its locked hashes; a missing file is an empty lock."""
    lock_path = Path(lock_path)
    if not lock_path.exists():
        return {}
    entries: dict[tuple[str, int], LockEntry] = {}
    for number, line in enumerate(lock_path.read_text().splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if (len(fields) not in (3, 4) or not fields[1].isdigit()
                or not all(re.fullmatch(r"[0-9a-f]{64}", f) for f in fields[2:3])
                or not all(re.fullmatch(r"[0-9a-f]{64}|-", f) for f in fields[3:])):
            raise MetricError(f"{lock_path}:{number}: expected "
                              "metric<TAB>version<TAB>sha256<TAB>closure sha256")
        key = (fields[0], int(fields[1]))
        if key in entries:
            raise MetricError(f"{lock_path}:{number}: {fields[0]} v{fields[1]} appears twice")
        closure = fields[3] if len(fields) == 4 and fields[3] != "-" else None
        entries[key] = LockEntry(fields[2], closure)
    return entries


def write_lock(lock_path: str | Path, entries: dict[tuple[str, int], LockEntry]) -> None:
    lines = [f"{name}\t{version}\t{entry.body}\t{entry.closure or '-'}\n"
             for (name, version), entry in sorted(entries.items())]
    Path(lock_path).write_text(LOCK_HEADER + "".join(lines))


def lock_entry(metric: Metric) -> LockEntry:
    return LockEntry(metric.body_sha256, metric.closure_sha256)


def _differences(metric: Metric, locked: LockEntry) -> list[str]:
    """What changed since `metric` was locked: its query, the modules it reads, or both."""
    now = lock_entry(metric)
    changed = []
    if locked.body != now.body:
        changed.append(f"its query (lock {locked.body[:12]}, file {now.body[:12]})")
    if locked.closure != now.closure:
        changed.append(f"a module it reads or a script making its rows "
                       f"({', '.join(metric_closure(metric))})")
    return changed


def metric_closure(metric: Metric) -> list[str]:
    """The modules a metric reads and the derive scripts and inputs that make their stored rows."""
    from .sqlmodules import load_modules, lock_closure

    root = _sql_root_of(metric.path)
    names, entries = lock_closure(metric.uses, load_modules(root), root)
    return names + [name for e in entries for name in (*e.scripts, *e.inputs)]


def check_lock(lock_path: str | Path | None = None,
               sql_root: str | Path | None = None) -> list[str]:
    """Problems between sql/metrics and the lock: a metric, or a view or macro it reads, changed
    without a version bump or a logged same-answers re-lock; a metric not locked."""
    from .sqlmodules import module_problems

    lock_path = Path(lock_path or default_lock_path(sql_root))
    locked = read_lock(lock_path)
    problems = [problem for problem in module_problems(sql_root)]
    for path in sorted(metrics_dir(sql_root).glob("*.sql")):
        try:
            metric = load_metric(path)
        except MetricError as exc:
            problems.append(str(exc))
            continue
        recorded = locked.get((metric.name, metric.version))
        if recorded is None:
            problems.append(f"{path}: {metric.name} v{metric.version} is not in {lock_path} - "
                            "run tracewh metrics lock")
        elif changed := _differences(metric, recorded):
            problems.append(
                f"{path}: {metric.name} v{metric.version} changed without raising its version: "
                f"{' and '.join(changed)} - raise `-- version:` and run tracewh metrics lock, or, "
                "if every answer stays the same, tracewh metrics lock --same-answers \"why\"")
    return problems


def update_lock(lock_path: str | Path | None = None,
                sql_root: str | Path | None = None,
                same_answers: str | None = None) -> list[str]:
    """Add new (metric, version) entries. A locked one that changed is refused, writing nothing,
    unless `same_answers` says why its answers stay the same: then it is locked again and the
    reason appended to metrics.changes with the date."""
    lock_path = Path(lock_path or default_lock_path(sql_root))
    entries = read_lock(lock_path)
    added, relocked, refused = [], [], []
    for metric in list_metrics(sql_root):
        key, now = (metric.name, metric.version), lock_entry(metric)
        locked = entries.get(key)
        if locked is None:
            added.append(f"{metric.name} v{metric.version}")
        elif locked.body == now.body and locked.closure is None:
            added.append(f"{metric.name} v{metric.version} (closure)")  # an older lock's entry
        elif locked == now:
            continue
        elif same_answers and same_answers.strip():
            relocked.append(f"{metric.name} v{metric.version}")
        else:
            refused.append(f"{metric.name} v{metric.version}")
            continue
        entries[key] = now
    if refused:
        raise MetricError(f"{lock_path}: will not overwrite the locked hashes of "
                          f"{', '.join(refused)} - raise the version of a metric whose answers "
                          "changed, or pass --same-answers \"why\" if none did")
    if relocked:
        _log_change(lock_path.parent / CHANGES_NAME, relocked, same_answers)
    if added or relocked or not lock_path.exists():
        write_lock(lock_path, entries)
    return added + [f"{name} locked again: {same_answers.strip()}" for name in relocked]


def _log_change(changes_path: Path, metrics: list[str], why: str) -> None:
    today = datetime.now(timezone.utc).date().isoformat()
    reason = " ".join(why.split())  # one line
    head = "" if changes_path.exists() else CHANGES_HEADER
    with changes_path.open("a") as log:
        log.write(f"{head}{today}\t{', '.join(metrics)}\t{reason}\n")
