"""Errors a user can act on: one line, naming the object and what to do."""

from __future__ import annotations

import errno
import os
import re


class TracewhError(Exception):
    """A failure to report as one line, without a traceback."""


class IngestError(TracewhError):
    """A file could not be ingested; the warehouse is unchanged for that file."""

    def __init__(self, path, problem: str, hint: str = ""):
        self.path = str(path)
        self.problem = problem
        self.hint = hint
        text = f"{self.path}: {problem}"
        super().__init__(f"{text} - {hint}" if hint else text)

    def __reduce__(self):  # pickles intact (the default would lose path and hint)
        return (type(self), (self.path, self.problem, self.hint))


class WarehouseBusy(TracewhError):
    pass


class StorageFault(TracewhError):
    """The storage refused a read or write (full, read-only, no permission, failing)."""


# errno -> what happened, and what the user does about it
_STORAGE = {
    errno.ENOSPC: ("no space left on device", "free space there, or write somewhere else, "
                   "and run it again"),
    errno.EDQUOT: ("disk quota exceeded", "free space there, or write somewhere else, "
                   "and run it again"),
    errno.EROFS: ("read-only file system", "write somewhere writable"),
    errno.EACCES: ("permission denied", "write where you may, or change the permissions"),
    errno.EPERM: ("operation not permitted", "write where you may, or change the permissions"),
    errno.EIO: ("input/output error", "the disk or network file system failed: check it "
                "(dmesg), then run it again"),
    errno.ENOENT: ("no such file or folder", "check the path, or create the folder first"),
    errno.ENOTDIR: ("a part of the path is not a folder", "check the path"),
    errno.EISDIR: ("is a folder", "give a file name"),
    errno.ENAMETOOLONG: ("file name too long", "choose a shorter name"),
}
# DuckDB reports the operating system's message in its text, without the errno
_OS_TEXT = {os.strerror(code): code for code in _STORAGE}


def storage_fault(exc: BaseException, operation: str, path=None) -> StorageFault | None:
    """One line for a storage failure: '`path`: cannot `operation`: what - the fix'. `exc` is an
    OSError or a DuckDB error carrying the OS message; `path` defaults to the OSError's file.
    None when `exc` is not a storage failure."""
    code = exc.errno if isinstance(exc, OSError) else None
    if code not in _STORAGE:
        code = next((c for text, c in _OS_TEXT.items() if text in str(exc)), None)
    if code is None:
        return None
    problem, fix = _STORAGE[code]
    named = re.search(r'"([^"]+)"', str(exc))  # DuckDB quotes the file it could not write
    where = path or getattr(exc, "filename", None) or (named and named.group(1)) or "storage"
    return StorageFault(f"{where}: cannot {operation}: {problem} - {fix}")
