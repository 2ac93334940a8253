"""The SQL modules a metric reads: the macro files of sql/lib and the views of sql/views.

Every module and metric file declares, in its leading comments, the modules it reads:

    -- uses: intervals, gpu_ops, ranks          (or: -- uses: none)

A module is named by its file (sql/lib/intervals.sql is `intervals`, sql/views/gpu_ops.sql is
`gpu_ops`); the objects it defines carry the module prefix themselves (`intervals_union`). The
declaration is checked against what sqlglot finds in the SQL (views and table macros read,
macros and types called), it orders the installation of the views, and its transitive closure is
what the metrics lock hashes beside a metric's own body (metrics.py).

A module that reads a stored table (`store.x`) reads what the derive registry
(tracewh.store.derive) fills in it: the scripts of the entries filling the table, or a column of
it the module names (UPDATEs included), and their inputs (sql/kernel_kinds.csv, through
store.kernel_kinds) count in the closure's hash, with, transitively, the modules those scripts call and the entries filling
the tables they read. Changing how stored rows are made changes the lock of every metric that
reads them.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .errors import TracewhError
from .resources import sql_dir

FOLDERS = ("lib", "views")
_USES = re.compile(r"^--\s*uses:\s*(.*?)\s*$")
_READS_STORE = re.compile(r"\bstore\.(\w+)", re.I)
# `SELECT * FROM store.x` (or `x.*`, `* EXCLUDE (...)`): every column of x, derived ones included
_STAR = re.compile(r"SELECT\s+(?:DISTINCT\s+)?(?:\w+\.)?\*(?:\s+EXCLUDE\s*\([^)]*\))?\s+FROM\s+store\.",
                   re.I)
_DEFINES = re.compile(
    r"CREATE\s+(?:OR\s+REPLACE\s+)?(VIEW|MACRO|TABLE\s+MACRO|TYPE)\s+(?:main\.)?\"?(\w+)", re.I)


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    text: str
    uses: tuple[str, ...] | None  # None: the file declares nothing
    views: frozenset[str]  # views and macros it defines (what metrics and users may read)
    types: frozenset[str]  # ENUM types it defines
    reads: StoredReads | None = None  # what it reads of the stored tables

    @property
    def defines(self) -> frozenset[str]:
        return self.views | self.types


def module_name(path: Path) -> str:
    return path.stem.lstrip("_")


def declared_uses(text: str) -> tuple[str, ...] | None:
    """The modules named by the `-- uses:` line of the leading comments (None: no such line)."""
    names = _header_list(text, _USES)
    return None if names is None else () if names == ("none",) else names


def _header_list(text: str, pattern: re.Pattern) -> tuple[str, ...] | None:
    """The comma-separated names of the leading comment line `pattern` matches (None: none)."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("--"):
            return None
        match = pattern.match(stripped)
        if match:
            return tuple(n.strip() for n in match.group(1).split(",") if n.strip())
    return None


def load_modules(sql_root: str | Path | None = None) -> dict[str, Module]:
    root = Path(sql_root or sql_dir())
    files = tuple((p, p.stat().st_mtime_ns, p.stat().st_size) for folder in FOLDERS
                  for p in sorted((root / folder).glob("*.sql")))
    return _load(files)


@lru_cache(maxsize=8)
def _load(files: tuple[tuple[Path, int, int], ...]) -> dict[str, Module]:
    modules: dict[str, Module] = {}
    for path, *_ in files:
        name = module_name(path)
        if name in modules:
            raise TracewhError(f"{path}: module {name} is also {modules[name].path}")
        text = path.read_text()
        defined = _DEFINES.findall(_code_only(text))
        modules[name] = Module(
            name, path, text, declared_uses(text),
            views=frozenset(n.lower() for kind, n in defined if kind.upper() != "TYPE"),
            types=frozenset(n.lower() for kind, n in defined if kind.upper() == "TYPE"),
            reads=stored_reads(text))
    return modules


def public_names(sql_root: str | Path | None = None) -> set[str]:
    """The views and macros of every module: what users and metrics may read."""
    return {name for module in load_modules(sql_root).values() for name in module.views}


# --- what the SQL reads ------------------------------------------------------------------------

def found_uses(text: str, modules: dict[str, Module], own: frozenset[str] = frozenset()) -> set[str]:
    """The modules whose objects `text` reads, as sqlglot finds them: tables and table macros it
    selects from, macros it calls, types it casts to (statements sqlglot keeps as a Command are
    searched token by token). Objects in `own` (defined by the text itself) do not count."""
    import sqlglot  # here, not at the top: opening a warehouse needs no parser (bench/startup.py)
    from sqlglot import exp

    owner = {obj: m.name for m in modules.values() for obj in m.defines}
    names: set[str] = set()
    try:
        statements = _parse_quietly(text)
    except sqlglot.errors.ParseError:
        statements, names = [], _identifiers(text)  # SQL sqlglot cannot read: token by token
    for statement in statements:
        if isinstance(statement, exp.Command):
            names |= _identifiers(statement.sql(dialect="duckdb"))
            continue
        ctes = {cte.alias_or_name.lower() for cte in statement.find_all(exp.CTE)}
        for table in statement.find_all(exp.Table):
            if table.args.get("db") or table.args.get("catalog"):
                continue  # store.* tables
            source = table.this
            name = source.name if isinstance(source, (exp.Identifier, exp.Anonymous)) else ""
            if name.lower() not in ctes:
                names.add(name.lower())
            if isinstance(source, exp.Anonymous):  # a table macro: a bare name is a relation
                names |= {arg.name.lower() for arg in source.expressions
                          if isinstance(arg, exp.Column) and not arg.table
                          and arg.name.lower() not in ctes}
        names |= {call.name.lower() for call in statement.find_all(exp.Anonymous)}
        for kind in statement.find_all(exp.DataType):
            if kind.this == exp.DataType.Type.USERDEFINED:
                names.add(str(kind.args.get("kind") or kind.sql(dialect="duckdb")).lower())
    return {owner[n] for n in names if n in owner and n not in own}


def _parse_quietly(sql: str) -> list:
    """sqlglot's statements of `sql`, without its warnings about statements it keeps as a
    Command (CREATE MACRO, CREATE TYPE)."""
    import sqlglot

    quiet = logging.getLogger("sqlglot")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        return [s for s in sqlglot.parse(sql, read="duckdb") if s is not None]
    finally:
        quiet.setLevel(level)


def _identifiers(sql: str) -> set[str]:
    """Names in `sql` that are not qualified (`store.memcpy` is a table, not the view)."""
    import sqlglot
    from sqlglot.tokens import TokenType

    tokens = sqlglot.tokenize(sql, read="duckdb")
    return {token.text.lower() for before, token in zip([None, *tokens], tokens)
            if token.token_type in (TokenType.VAR, TokenType.IDENTIFIER)
            and not (before and before.token_type == TokenType.DOT)}


def check_uses(path: Path, text: str, modules: dict[str, Module],
               own: frozenset[str] = frozenset()) -> str | None:
    """What is wrong with the `-- uses:` line of `text`, or None."""
    declared = declared_uses(text)
    found = found_uses(text, modules, own) - {module_name(path)}
    if declared is None:
        return (f"{path}: no `-- uses:` line; it reads "
                f"{', '.join(sorted(found)) or 'none'}")
    unknown = sorted(set(declared) - modules.keys())
    if unknown:
        return f"{path}: `-- uses:` names {', '.join(unknown)}, which no file of sql/lib or sql/views is"
    if set(declared) != found:
        missing, extra = sorted(found - set(declared)), sorted(set(declared) - found)
        return (f"{path}: `-- uses:` does not match the SQL"
                + (f"; reads undeclared {', '.join(missing)}" if missing else "")
                + (f"; declares unused {', '.join(extra)}" if extra else ""))
    return None


@dataclass(frozen=True)
class StoredReads:
    """What SQL reads of the stored tables: the tables it names (store.x), and the columns it may
    read of them: every name in its code, or every column when it selects `*` from one."""

    tables: frozenset[str]
    words: frozenset[str]
    star: bool

    def reads(self, fill: str) -> bool:
        """Does it read `fill` (a derive entry's 'table' or 'table.column')?"""
        table, _, column = fill.partition(".")
        return table in self.tables and (not column or self.star or column in self.words)


def stored_reads(sql: str) -> StoredReads:
    code = _code_only(sql)
    return StoredReads(frozenset(t.lower() for t in _READS_STORE.findall(code)),
                       frozenset(w.lower() for w in re.findall(r"\w+", code)),
                       bool(_STAR.search(code)))


def derive_writes(sql: str) -> set[str]:
    """What `sql` writes in schema store: 'table' for an INSERT, 'table.column' for each column
    an UPDATE sets."""
    from sqlglot import exp

    written: set[str] = set()
    for statement in _parse_quietly(sql):
        target = statement.this
        if isinstance(statement, exp.Insert):
            target = target.find(exp.Table)
        if not isinstance(target, exp.Table) or target.db.lower() != "store":
            continue
        if isinstance(statement, exp.Insert):
            written.add(target.name.lower())
        elif isinstance(statement, exp.Update):
            written |= {f"{target.name.lower()}.{eq.this.name.lower()}"
                        for eq in statement.expressions}
    return written


def registry_problems(sql_root: str | Path | None = None) -> list[str]:
    """What is wrong with the derive registry: a file it names that sql/ has not; a script that
    writes what its entry does not name in its fills."""
    from .store.derive import REGISTRY

    root = Path(sql_root or sql_dir())
    found = []
    for derived in REGISTRY:
        for name in (*derived.scripts, *derived.inputs):
            if not (root / name).is_file():
                found.append(f"derive entry {derived.name}: {root / name} does not exist")
        for name in derived.scripts:
            path = root / name
            unnamed = sorted(w for w in (derive_writes(path.read_text()) if path.is_file() else ())
                             if w not in derived.fills and w.split(".")[0] not in derived.fills)
            if unnamed:
                found.append(f"{path}: writes {', '.join(unnamed)}, which derive entry "
                             f"{derived.name} does not name in its fills (tracewh/store/derive.py)")
    return found


def module_problems(sql_root: str | Path | None = None) -> list[str]:
    modules = load_modules(sql_root)
    return [problem for m in modules.values()
            if (problem := check_uses(m.path, m.text, modules, m.defines))
            ] + registry_problems(sql_root)


# --- order and closure -------------------------------------------------------------------------

def install_order(modules: dict[str, Module]) -> list[Module]:
    """Every module after the modules it declares it uses."""
    ordered: list[Module] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        module = modules[name]
        if module in ordered:
            return
        if name in visiting:
            raise TracewhError(f"{module.path}: modules use each other in a cycle")
        visiting.add(name)
        for used in module.uses or ():
            if used not in modules:
                raise TracewhError(f"{module.path}: `-- uses:` names {used}, which no file is")
            visit(used)
        visiting.discard(name)
        ordered.append(module)

    for name in sorted(modules):
        visit(name)
    return ordered


def closure(uses: tuple[str, ...], modules: dict[str, Module]) -> list[str]:
    """The modules `uses` names and, transitively, the ones they use; sorted."""
    seen: set[str] = set()
    todo = list(uses)
    while todo:
        name = todo.pop()
        if name not in seen and name in modules:
            seen.add(name)
            todo.extend(modules[name].uses or ())
    return sorted(seen)


def code_sha256(text: str) -> str:
    """SHA-256 of the SQL's tokens: comments, spacing and line breaks do not count."""
    import sqlglot

    tokens = sqlglot.tokenize(text, read="duckdb")
    return hashlib.sha256("\n".join(f"{t.token_type.name} {t.text}" for t in tokens)
                          .encode()).hexdigest()


def lock_closure(uses: tuple[str, ...], modules: dict[str, Module],
                 sql_root: str | Path | None = None) -> tuple[list[str], list]:
    """What a reader of `uses` depends on: the modules of its closure, the derive entries filling
    what they read of the stored tables, and transitively the modules those entries' scripts call
    and the entries filling what the scripts read. (modules sorted, entries in registry order)"""
    from .store.derive import REGISTRY

    root = Path(sql_root or sql_dir())
    names: set[str] = set()
    readers: list[StoredReads] = []
    entries: set[str] = set()

    def add_modules(used) -> None:
        for name in closure(tuple(used), modules):
            if name not in names:
                names.add(name)
                readers.append(modules[name].reads)

    add_modules(uses)
    while readers:
        reader = readers.pop()
        for derived in REGISTRY:
            if derived.name not in entries and any(map(reader.reads, derived.fills)):
                entries.add(derived.name)
                for script in derived.scripts:
                    used, read, _ = _script_facts(root / script, root)
                    add_modules(used)
                    readers.append(read)
    return sorted(names), [e for e in REGISTRY if e.name in entries]


def _script_facts(path: Path, root: Path) -> tuple[frozenset[str], StoredReads, str]:
    """(modules it calls, what it reads of the stored tables, code_sha256) of a derive script."""
    stat = path.stat()
    return _facts(path, stat.st_mtime_ns, stat.st_size, root)


@lru_cache(maxsize=64)
def _facts(path: Path, mtime_ns: int, size: int, root: Path):
    text = path.read_text()
    modules = load_modules(root)
    module = modules.get(module_name(path))
    own = module.defines if module is not None and module.path == path else frozenset()
    return frozenset(found_uses(text, modules, own)), stored_reads(text), code_sha256(text)


def closure_sha256(uses: tuple[str, ...], modules: dict[str, Module],
                   sql_root: str | Path | None = None) -> str:
    """SHA-256 over everything `lock_closure` finds: each module's name and code_sha256, each
    derive entry's scripts (code_sha256) and inputs (their bytes)."""
    root = Path(sql_root or sql_dir())
    names, entries = lock_closure(uses, modules, root)
    digest = hashlib.sha256()
    for name in names:
        digest.update(f"{name} {code_sha256(modules[name].text)}\n".encode())
    for derived in entries:
        digest.update(f"derive {derived.name}\n".encode())
        for script in derived.scripts:
            digest.update(f"  {script} {_script_facts(root / script, root)[2]}\n".encode())
        for name in derived.inputs:
            digest.update(f"  {name} {hashlib.sha256((root / name).read_bytes()).hexdigest()}\n"
                          .encode())
    return digest.hexdigest()


def _code_only(sql: str) -> str:
    """SQL without comments and string literals."""
    sql = re.sub(r"--[^\n]*", " ", sql)
    return re.sub(r"'(?:[^']|'')*'", " ", sql)
