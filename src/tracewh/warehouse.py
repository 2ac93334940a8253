"""Open a warehouse: create it at a pinned storage version, apply migrations, install views.

The file must open in the plain DuckDB shell, so it is created at STORAGE_VERSION v1.4.0
(readable by DuckDB >= 1.4, including the duckdb-cli 1.5 shell) whatever the Python package
version is; DuckDB keeps that version when the file is reopened.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import re
import shutil
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, TypeVar

import duckdb

from . import __version__, kinds
from .errors import TracewhError, WarehouseBusy, storage_fault
from .resources import migrations_dir
from .sqlscript import rollback
from .sqlmodules import install_order, load_modules, public_names
from .store import derive

T = TypeVar("T")
STORAGE_VERSION = "v1.4.0"
# Rows a transaction appends go into compressed row groups of the file as each one fills; the
# rest waits in memory and in the write-ahead log until a checkpoint. With DuckDB's default
# 122,880 rows nearly all of a Kineto file's kernels (27k per 100 MB file) and CUDA calls (57k)
# waited: 29 MB of memory more per file, until the memory limit made DuckDB evict and return
# its allocator's pages, and fault them in again (8 x 100 MB bench: 630k page faults, 2.4 s of
# system CPU). Row groups of 16,384 rows (8 vectors) send them to the file at commit. Measured
# with interleaved runs in the issue 3 note; metric queries run as fast.
ROW_GROUP_SIZE = 16_384
DEFAULT_DB = "tracewh.duckdb"
_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


def utc_now() -> datetime:
    """Naive UTC time, for TIMESTAMP columns (TIMESTAMPTZ would need pytz to read back)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def default_db_path() -> Path:
    return Path(os.environ.get("TRACEWH_DB", DEFAULT_DB))


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def load_migrations(folder: Path | None = None) -> list[Migration]:
    folder = folder or migrations_dir()
    found = []
    for path in sorted(folder.glob("*.sql")):
        match = _MIGRATION_NAME.match(path.name)
        if not match:
            raise TracewhError(f"{path}: migration files are named NNNN_name.sql")
        found.append(Migration(int(match.group(1)), path.name, path.read_text()))
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise TracewhError(f"{folder}: migrations must be numbered 0001, 0002, ... without gaps")
    return found


def views_checksum() -> str:
    digest = hashlib.sha256(__version__.encode())
    for path in [*(module.path for module in load_modules().values()), kinds.shipped_path()]:
        digest.update(f"{path.parent.name}/{path.name}".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def connect(path: str | Path | None = None, read_only: bool = False, wait: float = 0.0,
            on_wait: Callable[[str], None] | None = None,
            upgrade: bool = True) -> duckdb.DuckDBPyConnection:
    """Open (creating if needed) the warehouse at `path`, up to date, and return the connection.

    DuckDB lets one process write a file and no other process open it meanwhile, readers
    included. When another process holds it, wait up to `wait` seconds (telling `on_wait` once),
    then raise WarehouseBusy. `upgrade=False` opens a read-only warehouse as it is, without
    applying pending migrations or views (what `tracewh check` inspects).
    """
    if str(path) == ":memory:":  # as duckdb.connect: a warehouse that lives in this process only
        if read_only:
            raise TracewhError(":memory: warehouses start empty: open one for writing")
        return _up_to_date(duckdb.connect(":memory:"))
    path = Path(path) if path is not None else default_db_path()
    waiting = Waiting(path, time.monotonic() + max(0.0, wait), on_wait)
    if read_only:
        if not path.exists():
            raise TracewhError(f"{path}: no warehouse here - run 'tracewh ingest PATH' first")
        con = _open(path, read_only=True, waiting=waiting)
        if upgrade and _needs_upgrade(con):
            con.close()
            _open_for_write(path, waiting).close()  # upgrade once, then reopen read-only
            con = _open(path, read_only=True, waiting=waiting)
        return con
    return _open_for_write(path, waiting)


def open_read_only(path: str | Path, wait: float = 0.0,
                   on_wait: Callable[[str], None] | None = None) -> duckdb.DuckDBPyConnection:
    """The warehouse at `path` for a command that only reads: never migrated in place (that is
    a write the user did not ask for, and fails on a read-only file); one made by another
    tracewh version is refused with how to upgrade it."""
    con = connect(path, read_only=True, wait=wait, on_wait=on_wait, upgrade=False)
    if _needs_upgrade(con):
        con.close()
        raise TracewhError(
            f"{path}: made by another tracewh version - upgrade it with 'tracewh upgrade --db "
            f"{path}' (read-only commands leave it as it is; for a file you cannot write, "
            "upgrade a copy)")
    return con


def _open_for_write(path: Path, waiting: Waiting | None = None) -> duckdb.DuckDBPyConnection:
    if not path.exists():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _create(path)
        except (OSError, duckdb.Error) as exc:  # a full or read-only file system: one line
            if _nearly_full(path.parent):  # DuckDB may report it as a short read of its copy
                exc = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            raise (storage_fault(exc, "create the warehouse", path) or TracewhError(
                f"{path}: cannot create the warehouse: {str(exc).splitlines()[0]}")) from None
    con = _open(path, read_only=False, waiting=waiting)
    try:
        return _up_to_date(con)
    except duckdb.Error as exc:  # a full or failing disk while migrating or installing views
        con.close()
        fault = storage_fault(exc, "upgrade the warehouse", path)
        if fault is None:
            raise
        raise fault from None


def _nearly_full(folder: Path) -> bool:
    """Less room than an empty warehouse takes (under 1 MB)."""
    try:
        return shutil.disk_usage(folder).free < 2**20
    except OSError:
        return False


def _up_to_date(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """`con` with every migration applied and this tracewh's views installed."""
    migrate(con)
    install_views(con)
    derive.refresh(con)  # derived rows made by another version of their scripts, or never
    return con


def _create(path: Path) -> None:
    """Create a warehouse file at the pinned storage version, migrated and with its views,
    atomically: built under a temporary name and linked into place, so a crash never leaves a
    half-made warehouse at `path`, and two processes creating it at once share one file.
    The first one built on a machine is kept as a template (see _template_path)."""
    scratch = path.with_name(f".{path.name}.{os.getpid()}.creating")
    template = _template_path()
    try:
        if template is None or not _copy_template(template, scratch):
            _build(scratch)
            if template is not None:
                _keep_as_template(scratch, template)
        try:
            os.link(scratch, path)  # fails if another process created it first: keep theirs
        except FileExistsError:
            pass
        except OSError:  # no hard links on this file system
            if not path.exists():
                os.replace(scratch, path)
    finally:
        _remove_database_file(scratch)


def _build(scratch: Path) -> None:
    with _alone(scratch, f" (STORAGE_VERSION '{STORAGE_VERSION}')") as con:
        migrate(con)
        install_views(con, fresh=True)
        derive.refresh(con)


@contextmanager
def _alone(path: Path, options: str = ""):
    """`path` as the default database of a connection of its own; detached, so checkpointed and
    closed (the file whole), when the block ends without error."""
    con = duckdb.connect(":memory:")
    try:
        con.execute(f"ATTACH '{_quote(path)}' AS wh{options}")
        con.execute("USE wh")
        yield con
        con.execute("USE memory")
        con.execute("DETACH wh")
    finally:
        con.close()


def _template_path() -> Path | None:
    """Where an empty warehouse of this tracewh (its migrations and views, on this DuckDB) is kept:
    making a warehouse is then a checked copy (0.06 s) instead of every migration and view
    (0.17-0.2 s). $TRACEWH_CACHE_DIR, else $XDG_CACHE_HOME/tracewh or ~/.cache/tracewh; an
    empty TRACEWH_CACHE_DIR keeps none."""
    root = os.environ.get("TRACEWH_CACHE_DIR")
    if root is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "tracewh")
    if not root:
        return None
    key = hashlib.sha256("\n".join([duckdb.__version__, STORAGE_VERSION, views_checksum(),
                                     *(m.checksum for m in load_migrations())]).encode())
    return Path(root) / f"empty-{key.hexdigest()[:16]}.duckdb"


def _copy_template(template: Path, scratch: Path) -> bool:
    """Make `scratch` a copy of the template, checked and dated now; False (and no scratch) when
    there is no usable template. A damaged one is removed, to be built again."""
    import shutil

    try:
        shutil.copyfile(template, scratch)
    except OSError:
        return False
    try:
        with _alone(scratch) as con:
            if _needs_upgrade(con):
                raise TracewhError(f"{template}: not this tracewh's empty warehouse")
            con.execute("UPDATE store.schema_migrations SET applied_at = ?", [utc_now()])
        return True
    except (duckdb.Error, TracewhError):
        _remove_database_file(scratch)
        template.unlink(missing_ok=True)
        return False


def _keep_as_template(scratch: Path, template: Path) -> None:
    """Keep a copy of a warehouse just built, if it is complete (tests build partial ones)."""
    import shutil
    import tempfile

    try:
        con = duckdb.connect(str(scratch), read_only=True)
        try:
            complete = not _needs_upgrade(con)
        finally:
            con.close()
        if not complete:
            return
        template.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=template.parent, prefix=".empty-", suffix=".tmp")
        os.close(fd)
        try:
            shutil.copyfile(scratch, name)
            os.replace(name, template)  # whole or not at all, also against another process
        finally:
            Path(name).unlink(missing_ok=True)
    except (OSError, duckdb.Error):
        pass  # no template: the next warehouse is built too


def _remove_database_file(path: Path) -> None:
    for leftover in (path, path.with_name(path.name + ".wal")):
        leftover.unlink(missing_ok=True)


@dataclass
class Waiting:
    """How long to wait for a warehouse (or a lake) another process holds, and whom to tell."""

    path: Path
    deadline: float
    on_wait: Callable[[str], None] | None = None
    told: bool = False

    def pause(self, what: str, by: str) -> None:
        """Wait a moment for `what` ('warehouse', 'lake') held by `by`; WarehouseBusy, one
        line, when the time is up."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise WarehouseBusy(f"{self.path}: {what} busy - held by {by}; retry when it ends, "
                                "or give --wait SECONDS to wait for it")
        if self.on_wait and not self.told:
            self.on_wait(f"waiting for the {what} {self.path} (held by {by}) - "
                         f"up to {left:.0f} s more")
            self.told = True
        time.sleep(min(0.1, left))


_LOCK_HOLDER = re.compile(r"\(PID (\d+)\)")


def _open(path: Path, read_only: bool, waiting: Waiting | None = None
          ) -> duckdb.DuckDBPyConnection:
    while True:
        try:
            return duckdb.connect(str(path), read_only=True) if read_only else _attach(path)
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower():
                raise (storage_fault(exc, "open the warehouse", path)
                       or TracewhError(f"{path}: cannot open warehouse: {exc}")) from None
            holder = _LOCK_HOLDER.search(str(exc))
            by = f"another tracewh, pid {holder.group(1)}" if holder else "another tracewh"
            (waiting or Waiting(path, 0.0)).pause("warehouse", by)
        except duckdb.ConnectionException as exc:
            if "different configuration" in str(exc):
                raise WarehouseBusy(f"{path}: warehouse already open in this process with other "
                                    "settings - close that connection first") from None
            raise TracewhError(f"{path}: cannot open warehouse: {exc}") from None
        except duckdb.Error as exc:
            raise TracewhError(f"{path}: not a DuckDB warehouse: {exc}") from None


def _attach(path: Path) -> duckdb.DuckDBPyConnection:
    """A writing connection: the file attached with ROW_GROUP_SIZE (only ATTACH sets it), under
    the name duckdb.connect would give it, as the default database."""
    con = duckdb.connect(":memory:")
    attach = f"ATTACH '{_quote(path)}' {{}}(ROW_GROUP_SIZE {ROW_GROUP_SIZE})"
    try:
        try:
            con.execute(attach.format(""))
        except duckdb.BinderException:  # memory.duckdb: the in-memory database has that name
            con.execute(attach.format("AS memory_db "))
        _use_the_file(con)
        con.execute(f"SET temp_directory = '{_quote(path)}.tmp'")  # beside the file, as before
    except BaseException:
        con.close()
        raise
    return con


def cursor(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A new connection to `con`'s database for another thread, in the warehouse (a cursor of a
    writing connection starts in the in-memory database the file is attached to)."""
    return _use_the_file(con.cursor())


def _use_the_file(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    files = con.execute("SELECT database_name FROM duckdb_databases() "
                        "WHERE NOT internal AND path IS NOT NULL").fetchall()
    if len(files) == 1:
        con.execute('USE "{}"'.format(files[0][0].replace('"', '""')))
    return con


def _quote(path: Path) -> str:
    return str(path).replace("'", "''")


def _needs_upgrade(con: duckdb.DuckDBPyConnection) -> bool:
    try:
        applied = first_row(con, "SELECT count(*) FROM store.schema_migrations")[0]
        stored = first_row(con, "SELECT value FROM store.meta WHERE key = 'views_checksum'")
        if applied < len(load_migrations()) or stored is None or stored[0] != views_checksum():
            return True
        return bool(derive.stale(con))
    except duckdb.CatalogException:
        return True


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply pending migrations in order; refuse if an applied one was edited afterwards."""
    con.execute("CREATE SCHEMA IF NOT EXISTS store")
    con.execute(
        "CREATE TABLE IF NOT EXISTS store.schema_migrations ("
        " version INTEGER NOT NULL, name VARCHAR NOT NULL, checksum VARCHAR NOT NULL,"
        " applied_at TIMESTAMP NOT NULL)"
    )
    applied = {
        version: (name, checksum)
        for version, name, checksum in con.execute(
            "SELECT version, name, checksum FROM store.schema_migrations"
        ).fetchall()
    }
    done = []
    for migration in load_migrations():
        if migration.version in applied:
            name, checksum = applied[migration.version]
            if checksum != migration.checksum:
                raise TracewhError(
                    f"migration {migration.name} changed after it was applied to this warehouse "
                    f"(recorded as {name}) - add a new migration instead of editing an applied one"
                )
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(migration.sql)
            con.execute(
                "INSERT INTO store.schema_migrations VALUES (?, ?, ?, ?)",
                [migration.version, migration.name, migration.checksum, utc_now()],
            )
            con.execute("COMMIT")
        except duckdb.Error as exc:
            rollback(con)
            if storage_fault(exc, "migrate"):
                raise  # the disk's fault, not the migration's: said by whoever opened it
            raise TracewhError(
                f"migration {migration.name} failed on this warehouse: "
                f"{str(exc).splitlines()[0]} - its schema_migrations may have been edited; "
                "'tracewh check' lists what differs") from None
        except Exception:
            rollback(con)
            raise
        done.append(migration.name)
    return done


def install_views(con: duckdb.DuckDBPyConnection, force: bool = False, fresh: bool = False) -> None:
    """(Re)create every view and macro of sql/views when this tracewh's SQL differs. `fresh`:
    a warehouse just made, with no views yet to drop (looking for them takes 25 ms)."""
    checksum = views_checksum()
    stored = first_row(con, "SELECT value FROM store.meta WHERE key = 'views_checksum'")
    if stored and stored[0] == checksum and not force:
        return
    con.execute("BEGIN TRANSACTION")
    try:
        if not fresh:
            _drop_public_objects(con)
        _create_in_install_order(con)
        # the kind patterns may have changed: classify every kernel name again, and make the
        # names' ENUM again from the names classified
        kinds.use_shipped_patterns(con)
        derive.refill(con, "kernel_names")
        con.execute("DELETE FROM store.meta WHERE key IN ('views_checksum', 'tracewh_version')")
        con.execute(
            "INSERT INTO store.meta VALUES ('views_checksum', ?), ('tracewh_version', ?)",
            [checksum, __version__],
        )
        con.execute("COMMIT")
    except Exception:
        rollback(con)
        raise


def _drop_public_objects(con: duckdb.DuckDBPyConnection) -> None:
    views = con.execute(
        "SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' "
        "AND database_name = current_database() AND NOT internal"
    ).fetchall()
    for (name,) in views:
        con.execute(f'DROP VIEW IF EXISTS main."{name}"')
    macros = con.execute(
        "SELECT DISTINCT function_name, function_type FROM duckdb_functions() "
        "WHERE schema_name = 'main' AND database_name = current_database() "
        "AND function_type IN ('macro', 'table_macro') AND NOT internal"
    ).fetchall()
    for name, kind in macros:
        keyword = "MACRO TABLE" if kind == "table_macro" else "MACRO"
        con.execute(f'DROP {keyword} IF EXISTS main."{name}"')


def public_view_names() -> set[str]:
    """Names of the views and macros that sql/views and sql/lib define: what users and metrics
    may read."""
    return public_names()


def _create_in_install_order(con: duckdb.DuckDBPyConnection) -> None:
    """Every module of sql/lib and sql/views, each after the modules its `-- uses:` names."""
    for module in install_order(load_modules()):
        try:
            con.execute(module.text)
        except duckdb.Error as exc:
            raise TracewhError(f"{module.path}: cannot create view: {exc}") from None


def first_row(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None):
    """The first row of a query, or None; reads the whole result (DuckDB 2 refuses new work on a
    connection with an unfinished result)."""
    rows = con.execute(sql, params or []).fetchall()
    return rows[0] if rows else None


def query_arrow(con: duckdb.DuckDBPyConnection, sql: str, max_bytes: int | None = None):
    """Run one query and return a pyarrow Table. The result lives outside DuckDB's memory limit,
    so with `max_bytes` it is read in batches and refused once it holds more. VARIANT columns
    come as text (no Arrow writer of ours can store DuckDB's encoding)."""
    import pyarrow as pa

    relation = con.sql(sql)
    if relation is None:  # a statement that returns no rows
        return pa.table({})
    if any(str(kind) == "VARIANT" for kind in relation.types):
        relation = relation.project(", ".join(
            f'"{name}"::VARCHAR AS "{name}"' if str(kind) == "VARIANT" else f'"{name}"'
            for name, kind in zip((c.replace('"', '""') for c in relation.columns),
                                  relation.types)))
    reader = (getattr(relation, "to_arrow_reader", None) or relation.fetch_arrow_reader)(65_536)
    batches, held = [], 0
    for batch in reader:
        held += batch.nbytes
        if max_bytes is not None and held > max_bytes:
            raise QueryStopped(f"the result passed the memory limit ({max_bytes / 2**20:,.0f} MiB) "
                               "after {:,} rows - narrow it (WHERE, GROUP BY, LIMIT) or raise "
                               "--memory-limit".format(sum(b.num_rows for b in batches)))
        batches.append(batch)
    return pa.Table.from_batches(batches, schema=reader.schema)


class QueryStopped(TracewhError):
    """A query stopped by its time or memory limit, or by Ctrl-C."""


_BYTES = {"bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50,
          "EiB": 2**60}


@functools.cache  # a command checks its limit twice: one scratch database is enough
def checked_memory_limit(limit: str) -> str:
    """`limit` when it bounds something, else TracewhError: DuckDB reads a negative size as no
    limit at all, and a limit above the machine's memory is none either. Checked on a database
    of its own, before any warehouse is opened or made."""
    flag = f"--memory-limit {limit!r}"
    if str(limit).strip().startswith("-"):
        raise TracewhError(f"{flag}: a size is positive, e.g. 1GB or 512MB")
    with duckdb.connect() as scratch:
        try:
            scratch.execute("SET memory_limit = ?", [limit])
        except duckdb.Error as exc:
            raise TracewhError(f"{flag}: {str(exc).splitlines()[0]}") from None
        machine = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        if memory_limit_bytes(scratch) > machine:
            raise TracewhError(f"{flag}: more than this machine's {machine / 2**30:.1f} GiB of "
                               "memory, so it would bound nothing; give at most that, e.g. 1GB")
    return limit


def set_memory_limit(con: duckdb.DuckDBPyConnection, limit: str) -> None:
    con.execute("SET memory_limit = ?", [checked_memory_limit(limit)])


def memory_limit_bytes(con: duckdb.DuckDBPyConnection) -> int:
    """DuckDB's memory limit on `con`, in bytes (it reports '953.6 MiB')."""
    number, unit = first_row(con, "SELECT current_setting('memory_limit')")[0].split()
    return int(float(number) * _BYTES[unit])


def interruptible(con: duckdb.DuckDBPyConnection, work: Callable[[], T],
                  timeout: float | None = None) -> T:
    """`work()` (queries on `con`), stopped with QueryStopped after `timeout` seconds, or with
    KeyboardInterrupt at Ctrl-C. It runs in a thread of its own while this one waits: Python handles Ctrl-C only
    between steps of the main thread, which a long DuckDB call never gives back (11 of 20
    Ctrl-C stopped such a query before), and DuckDB stops at con.interrupt() within a vector."""
    outcome: dict = {}
    done, interrupted = threading.Event(), threading.Event()

    def run():
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed to the waiting thread
            outcome["error"] = exc
        finally:
            done.set()

    def on_ctrl_c(signum, frame):  # instead of KeyboardInterrupt, which could strike anywhere
        interrupted.set()
        con.interrupt()

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, on_ctrl_c) if main else None
    try:
        threading.Thread(target=run, name="tracewh-query", daemon=True).start()
        deadline = None if timeout is None else time.monotonic() + timeout
        timed_out, stopping_since = False, None
        while not done.wait(0.05):
            timed_out = timed_out or (deadline is not None and time.monotonic() > deadline)
            if interrupted.is_set() or timed_out:
                # again and again: an interrupt before the query starts is lost; and Python code
                # of `work` (a conversion) gets a moment to notice
                stopping_since = stopping_since or time.monotonic()
                if time.monotonic() > stopping_since + 5:
                    break
                con.interrupt()
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)
    if interrupted.is_set() or timed_out:
        outcome.clear()  # DuckDB objects left alive at exit make its binding print warnings
        if interrupted.is_set():
            raise KeyboardInterrupt
        raise QueryStopped(f"stopped after --timeout {timeout:g} s - narrow the query or "
                           "raise --timeout")
    if "error" in outcome:
        raise outcome.pop("error")
    return outcome["value"]
