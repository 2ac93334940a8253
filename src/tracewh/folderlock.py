"""One writer at a time for a folder (a Parquet lake): a lock file in it, held by one process.

The lock is the operating system's (flock) on `FOLDER/.tracewh.lock`, so it is released on any
exit, a kill -9 included; the file holds the holder's pid, to name it to a process that waits,
and is removed on a clean release. A file still there when the lock is free is a holder that
died: it is taken over, with a one-line note. The name starts with '.', which Spark,
pyarrow and polars skip.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from .errors import storage_fault
from .warehouse import Waiting

LOCK = ".tracewh.lock"
_held: dict[Path, int] = {}  # folders this process holds, and how many holds are nested


@contextmanager
def hold_folder(folder: Path, what: str = "lake", wait: float = 0.0,
                on_wait: Callable[[str], None] | None = None,
                on_note: Callable[[str], None] | None = None):
    """Hold `folder` (created if missing) for the block. Another process holding it: wait up to
    `wait` seconds (`on_wait` told once), then WarehouseBusy '`folder`: lake busy - held by
    another tracewh, pid N'. A hold nested in this process's own is free."""
    created = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise (storage_fault(exc, f"write the {what}", folder) or exc) from None
    key = folder.resolve()
    if key in _held:
        _held[key] += 1
        try:
            yield
        finally:
            _held[key] -= 1
        return
    path = folder / LOCK
    waiting = Waiting(folder, time.monotonic() + max(0.0, wait), on_wait)
    while True:
        try:
            handle = open(path, "a+")
        except OSError as exc:
            raise (storage_fault(exc, f"write the {what}", folder) or exc) from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _pid_in(handle)
            handle.close()
            waiting.pause(what, f"another tracewh, pid {holder}" if holder else "another tracewh")
            continue
        if _same_file(handle, path):
            break
        handle.close()  # its holder removed it on release: lock the file now there
    try:
        left = _pid_in(handle)
        if left and left != os.getpid() and on_note:
            on_note(f"{folder}: took over the {what} lock of pid {left}, which ended without "
                    "releasing it")
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        _held[key] = 1
        try:
            yield
        finally:
            del _held[key]
            path.unlink(missing_ok=True)  # before the lock goes: a waiter then locks a new file
            if created and not any(folder.iterdir()):
                folder.rmdir()  # nothing was written: no folder left behind
    finally:
        handle.close()  # closing the file releases the lock


def _same_file(handle, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(handle.fileno()), os.stat(path))
    except FileNotFoundError:
        return False


def _pid_in(handle) -> int | None:
    handle.seek(0)
    text = handle.read().strip()
    return int(text) if text.isdigit() else None
