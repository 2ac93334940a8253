"""Rank numbers: which are taken in a run, and the error when two files claim the same one."""

from __future__ import annotations

from pathlib import Path

import duckdb

from ..errors import IngestError


def taken_ranks(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[int, str]:
    """Rank -> path of the file that holds it, for the ranks already stored in `run_id`."""
    return dict(con.execute(
        "SELECT k.rank, s.path FROM store.ranks k JOIN store.sources s USING (file_id) "
        "WHERE k.run_id = ?", [run_id]).fetchall())


def claim(taken: dict[int, str], rank: int, source: str, path: Path, run_id: str) -> None:
    if rank in taken:
        raise IngestError(
            path, f"rank {rank} (from {source}) is already taken in run {run_id!r} by {taken[rank]}",
            "tell them apart with --rank-map FILE_GLOB=RANK or put them in different runs (--run)")
    taken[rank] = str(path)
