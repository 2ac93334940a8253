"""Faults of the storage under the warehouse while ingest writes to it: a full disk, a read-only
or unwritable place, a failing device. They are no fault of the trace being written, and every
file after it would meet them too, so ingest names the warehouse and the fix once, and stops."""

from __future__ import annotations

import errno
import os

# DuckDB reports an OS error as text ("IO Error: Could not write file ...: No space left on
# device"): each fault by its errno, whose strerror the text holds, and what to do.
_FAULTS = {
    errno.ENOSPC: "free space and run the same ingest again (while it writes, an ingest needs "
                  "about 3 times the space it adds, for the write-ahead log, and room in the "
                  "folder <warehouse>.tmp for what DuckDB spills of a big file: up to its size)",
    errno.EDQUOT: "free space within your quota and run the same ingest again",
    errno.EROFS: "the filesystem is mounted read-only: give --db on a writable one",
    errno.EACCES: "make the warehouse and its folder writable for this user, or give --db "
                  "elsewhere",
    errno.EPERM: "make the warehouse and its folder writable for this user, or give --db "
                 "elsewhere",
    errno.EIO: "the device reported an I/O error: check it (dmesg, SMART) before writing again",
}


def storage_fault(exc: BaseException) -> tuple[str, str] | None:
    """(problem, fix) when DuckDB's error `exc` is a storage fault, else None."""
    for code, fix in _FAULTS.items():
        if os.strerror(code) in str(exc):
            return os.strerror(code).lower(), fix
    return None


def warehouse_path(con) -> str:
    """The file `con` writes to."""
    try:
        rows = con.execute("SELECT path FROM duckdb_databases() "
                           "WHERE NOT internal AND path IS NOT NULL").fetchall()
    except Exception:  # a connection the fault invalidated
        rows = []
    return rows[0][0] if len(rows) == 1 else "the warehouse"
