"""A Session: the one way a metric (or an ad-hoc query) runs over a warehouse.

It opens the warehouse read-only, turns DuckDB's guards on (no file or network access, settings
frozen, a memory limit of its own), checks each metric's parameter values against the warehouse
(a run or rank it does not hold is a mistake, not an empty table), runs the query with the
memory cap and the timeout, and closes. `tracewh query`, `sql`, `summary`, `diff`, `report` and
`export` use it, and so does Python:

    import tracewh

    with tracewh.Session("job.duckdb") as session:
        table = session.query("gpu_kernel_summary", rank=0)   # a pyarrow Table
        frame = polars.from_arrow(table)
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from .errors import TracewhError

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

    from .output import Rows


class Session:
    """The warehouse at `db` (default ./tracewh.duckdb or $TRACEWH_DB), read-only, for queries.

    `wait`: seconds to wait while another tracewh holds the file (`on_wait` is told once).
    `memory_limit`: DuckDB's limit, and the most a result may hold ('1GB'; None: DuckDB's
    default). `timeout`: seconds after which a query is stopped (None: never). `lock=False`
    leaves file access on, for an export that writes Parquet through DuckDB. `bound_process`
    (the CLI's own process only): the whole process is held near the limit too
    (bound_process_memory).
    """

    def __init__(self, db: str | Path | None = None, *, wait: float = 0.0,
                 on_wait: Callable[[str], None] | None = None, memory_limit: str | None = None,
                 timeout: float | None = None, lock: bool = True, bound_process: bool = False):
        from .warehouse import checked_memory_limit, default_db_path, open_read_only

        if memory_limit is not None:
            checked_memory_limit(memory_limit)  # a mistake, said before the warehouse is opened
        self.path = Path(db) if db is not None else default_db_path()
        self.timeout = timeout
        self.con = open_read_only(self.path, wait=wait, on_wait=on_wait)
        self._owned = True
        self._guard(memory_limit, lock, bound_process)

    @classmethod
    def of_lake(cls, lake: str | Path, *, memory_limit: str | None = None,
                timeout: float | None = None, bound_process: bool = False) -> Session:
        """A session over a Parquet lake written by `tracewh export` (tracewh.lake), with no
        warehouse file: the same metrics, checks and guards (file access within the lake)."""
        from .lake import connect_lake
        from .warehouse import checked_memory_limit

        if memory_limit is not None:
            checked_memory_limit(memory_limit)
        session = cls.__new__(cls)
        session.path, session.timeout, session._owned = Path(lake), timeout, True
        session.con = connect_lake(lake)
        session._guard(memory_limit, True, bound_process)
        return session

    @classmethod
    def over(cls, con: duckdb.DuckDBPyConnection) -> Session:
        """A session on a connection the caller opened and closes (tests, notebooks): no
        guards are turned on, and closing the session leaves the connection open."""
        session = cls.__new__(cls)
        session.path, session.timeout, session.con, session._owned = None, None, con, False
        return session

    def _guard(self, memory_limit: str | None, lock: bool, bound_process: bool) -> None:
        """The guards on the connection just opened (closed again if they fail)."""
        from .warehouse import set_memory_limit

        try:
            if lock:
                lock_down(self.con, memory_limit)
            elif memory_limit is not None:
                set_memory_limit(self.con, memory_limit)
            if bound_process and memory_limit is not None:
                bound_process_memory(self.con)
        except BaseException:
            self.close()
            raise

    # --- what the warehouse holds -----------------------------------------------------------

    def runs(self) -> list[str]:
        """The run ids, in order (from store.runs: nothing scans the facts)."""
        from .mistakes import known_runs

        return known_runs(self.con)

    def check_runs(self, names: Iterable[str], series: bool = False) -> None:
        """TracewhError for the first name that is not a run (nor, with `series`, a series)."""
        from .mistakes import check_runs

        check_runs(self.con, names, series=series)

    # --- running ----------------------------------------------------------------------------

    def query(self, metric, params: dict | None = None, /, **values) -> pa.Table:
        """The rows of `metric` (a name, a .sql path or a loaded Metric) with its parameters
        from `params` and keywords (None: unset), as a pyarrow Table whose first columns are
        the metric's name and version."""
        from .metrics import Metric, bind_values, find_metric, run_metric
        from .mistakes import check_params, explain_no_rows
        from .warehouse import interruptible, memory_limit_bytes

        chosen = metric if isinstance(metric, Metric) else find_metric(metric)
        given = {k: v for k, v in {**(params or {}), **values}.items() if v is not None}
        bound = bind_values(chosen, given)
        check_params(self.con, chosen.name, bound)
        limit = memory_limit_bytes(self.con)
        with _out_of_memory_said(limit):
            result = interruptible(self.con, lambda: run_metric(self.con, chosen, given, limit),
                                   self.timeout)
        if result.num_rows == 0:
            explain_no_rows(self.con, chosen.name, bound)
        return result

    def sql(self, statement: str) -> pa.Table:
        """One ad-hoc read-only query over the views and tables (guard.check_query refuses
        anything else), with the memory cap and the timeout."""
        import duckdb

        from .guard import check_query, warehouse_relations
        from .mistakes import duckdb_message
        from .warehouse import interruptible, memory_limit_bytes, query_arrow

        check_query(statement, *warehouse_relations(self.con))
        limit = memory_limit_bytes(self.con)
        try:
            with _out_of_memory_said(limit):
                return interruptible(self.con, lambda: query_arrow(self.con, statement, limit),
                                     self.timeout)
        except duckdb.InterruptException:
            raise
        except duckdb.Error as exc:
            raise TracewhError(duckdb_message(exc)) from None

    # --- closing ----------------------------------------------------------------------------

    def close(self) -> None:
        if self._owned and self.con is not None:
            self.con.close()
        self.con = None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def run_context(con: duckdb.DuckDBPyConnection, run_ids: list[str] | None = None) -> Rows:
    """sql/run_context.sql: one row per run (of `run_ids`, when given), as `tracewh runs`
    prints it."""
    from .output import Rows
    from .resources import sql_dir

    context = Rows.of_relation(con.sql((sql_dir() / "run_context.sql").read_text()))
    if run_ids is not None:
        context.rows = [row for row in context.rows if row[0] in run_ids]
    return context


def lock_down(con: duckdb.DuckDBPyConnection, memory_limit: str | None = None) -> None:
    """DuckDB's own guards for a query connection: no file or network access, settings frozen,
    and with `memory_limit` a bound of its own (a read-only connection otherwise keeps DuckDB's
    default, 80% of the machine's memory). guard.py checks the statements themselves.

    Applies to the connection's whole database instance and cannot be undone, so call it on a
    connection made for one command and close it afterwards.
    """
    from .warehouse import set_memory_limit

    if memory_limit is not None:
        set_memory_limit(con, memory_limit)
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


# Room beyond DuckDB's limit for Python, the Arrow result (up to the limit again) and each
# DuckDB thread's stack
_PROCESS_ROOM = 1 << 30
_THREAD_ROOM = 16 << 20


def bound_process_memory(con: duckdb.DuckDBPyConnection) -> None:
    """Hold this process's data segment (RLIMIT_DATA, soft) to what it holds now plus twice
    DuckDB's memory limit plus room for Python and threads. Some DuckDB functions allocate outside its buffer manager
    (`list(range(3e9))`, `repeat('x', 3e9)`: 4 GB of RSS in 8 s at a 1 GB limit); with the bound
    they fail at once with DuckDB's "Out of Memory Error". Only for a process of its own (the
    CLI): a soft limit lasts the process's life."""
    import resource

    from .warehouse import first_row, memory_limit_bytes

    threads = int(first_row(con, "SELECT current_setting('threads')")[0])
    bound = (_data_segment_bytes() + 2 * memory_limit_bytes(con) + _PROCESS_ROOM
             + threads * _THREAD_ROOM)
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        bound = min(bound, hard)
    if soft == resource.RLIM_INFINITY or soft > bound:
        resource.setrlimit(resource.RLIMIT_DATA, (bound, hard))


def _data_segment_bytes() -> int:
    """The data segment this process maps now (VmData), which RLIMIT_DATA bounds; 0 off Linux."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@contextmanager
def _out_of_memory_said(limit: int):
    """DuckDB's "Out of Memory Error" as one line that says what to do."""
    import duckdb

    try:
        yield
    except duckdb.OutOfMemoryException:
        raise TracewhError(f"the query needs more memory than --memory-limit "
                           f"({limit / 2**20:,.0f} MiB) allows - narrow it (WHERE, GROUP BY, "
                           "LIMIT) or raise --memory-limit") from None
