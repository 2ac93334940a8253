"""tracewh: a SQL-first warehouse for distributed-training profiles.

    import tracewh

    wh = tracewh.open("job.duckdb")                      # for notebooks: polars frames
    wh.query("temporal_breakdown", run="dp4", rank=0)    # also wh.runs(), wh.metrics(), wh.sql()

    with tracewh.Session("job.duckdb") as session:        # read-only, guarded, closed at the end
        kernels = session.query("gpu_kernel_summary", rank=0)   # a metric, as a pyarrow Table
        busy = session.sql("SELECT rank, sum(dur_ns) FROM kernels GROUP BY rank")
    con = tracewh.connect("job.duckdb")                     # the DuckDB connection itself
"""

__version__ = "0.1.0"

from .errors import TracewhError  # noqa: E402 (what every mistake raises)
from .notebook import Warehouse, open  # noqa: E402,A004 (light, as Session)
from .session import Session  # noqa: E402 (light: duckdb loads when a session opens)


def connect(path=None, read_only: bool = False):
    """Open the warehouse (default ./tracewh.duckdb or $TRACEWH_DB; ":memory:" for one that lives
    in this process only) and return a DuckDB connection.

    Results come back as Arrow (`.arrow()`) or polars (`.pl()`).
    """
    from .warehouse import connect as _connect

    return _connect(path, read_only=read_only)

