"""tracewh from Python, for notebooks: frames in, the CLI's guards and errors kept.

    import tracewh

    wh = tracewh.open("job.duckdb")                      # nothing is held open between calls
    wh.runs()                                            # `tracewh runs`, as a polars DataFrame
    wh.metrics()                                         # `tracewh metrics list`
    wh.query("temporal_breakdown", run="dp4", rank=0)    # a metric, as `tracewh query`
    wh.sql("SELECT rank, count(*) FROM kernels GROUP BY rank")
    wh.query("gpu_kernel_summary", frame="pandas")       # or "arrow"; open(..., frame=...) for all

Each call opens the warehouse read-only through a Session and closes it, so an ingest in
another process is never blocked by a notebook left open, and every call sees what the
warehouse holds now. Mistakes (an unknown run, rank, metric or parameter, a window outside the
capture) raise TracewhError with the CLI's message.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import TracewhError

if TYPE_CHECKING:
    import pyarrow as pa

FRAMES = ("polars", "arrow", "pandas")


class Warehouse:
    """A warehouse file, for queries from Python (see the module's docstring)."""

    def __init__(self, db: str | Path | None = None, *, frame: str = "polars",
                 wait: float = 60.0, memory_limit: str | None = "1GB",
                 timeout: float | None = None):
        from .warehouse import default_db_path

        self.path = Path(db) if db is not None else default_db_path()
        self.frame = _checked_frame(frame)
        self._options = {"wait": wait, "memory_limit": memory_limit, "timeout": timeout}
        with self._session():  # a file that is not a warehouse (or an old one) fails here
            pass

    def __repr__(self) -> str:
        return f"tracewh.open({str(self.path)!r})"

    def query(self, metric: str | Path, /, *, frame: str | None = None, **params: Any):
        """The rows of `metric` (a name or a .sql file) with its parameters as keywords,
        e.g. query("idle_gaps", run="dp4", rank=0, top=10); None leaves one unset."""
        with self._session() as session:
            return _as_frame(session.query(metric, params), frame or self.frame)

    def sql(self, statement: str, /, *, frame: str | None = None):
        """One read-only query over the views (`tracewh sql`)."""
        with self._session() as session:
            return _as_frame(session.sql(statement), frame or self.frame)

    def runs(self, *, frame: str | None = None):
        """One row per run: when, how long, hosts, GPUs, iterations, ranks, notes (`tracewh
        runs`)."""
        from .session import run_context

        with self._session() as session:
            return _as_frame(run_context(session.con).to_arrow(), frame or self.frame)

    def metrics(self, *, frame: str | None = None):
        """Every metric with its version, summary, parameters and grain (`tracewh metrics
        list`)."""
        from .metrics import metric_catalogue

        return _as_frame(metric_catalogue().to_arrow(), frame or self.frame)

    def show(self, metric: str) -> str:
        """A metric's file: what it computes, its parameters, and its SQL."""
        from .metrics import find_metric

        return find_metric(metric).path.read_text()

    def _session(self):
        from .session import Session

        return Session(self.path, **self._options)


def open(db: str | Path | None = None, **options) -> Warehouse:  # noqa: A001 (tracewh.open)
    """The warehouse at `db` (default ./tracewh.duckdb or $TRACEWH_DB) for queries from Python.
    Options: frame ("polars", "arrow", "pandas"), wait, memory_limit, timeout."""
    return Warehouse(db, **options)


def _checked_frame(frame: str) -> str:
    if frame not in FRAMES:
        raise TracewhError(f"frame={frame!r}: use one of {', '.join(FRAMES)}")
    return frame


def _as_frame(table: pa.Table, frame: str):
    frame = _checked_frame(frame)
    if frame == "arrow":
        return table
    if frame == "pandas":
        try:
            return table.to_pandas()
        except ImportError:
            raise TracewhError("frame='pandas' needs pandas installed "
                               "(or use frame='polars' / 'arrow')") from None
    import polars as pl

    return pl.from_arrow(table)
