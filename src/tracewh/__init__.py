"""tracewh: a SQL-first warehouse for distributed-training profiles."""

__version__ = "0.1.0"


def connect(path=None, read_only: bool = False):
    """Open the warehouse (default ./tracewh.duckdb or $TRACEWH_DB; ":memory:" for one that lives
    in this process only) and return a DuckDB connection.

    Results come back as Arrow (`.arrow()`) or polars (`.pl()`).
    """
    from .warehouse import connect as _connect

    return _connect(path, read_only=read_only)
