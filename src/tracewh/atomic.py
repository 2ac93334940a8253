"""Outputs that are whole or absent: written under a temporary name, renamed when complete."""

from __future__ import annotations

import itertools
import os
import shutil
from contextlib import contextmanager, suppress
from pathlib import Path

from .errors import storage_fault

_numbers = itertools.count()


def scratch_name(path: Path) -> Path:
    """A hidden name beside `path`, short whatever `path`'s name (readers such as Spark and
    pyarrow skip names starting with '.')."""
    return path.with_name(f".tracewh-{os.getpid()}-{next(_numbers)}.tmp")


@contextmanager
def written_whole(path: str | Path, operation: str = "write it"):
    """Yield the path to write `path`'s content to; it becomes `path` when the block ends
    without error and is removed otherwise, so a full disk or a kill never leaves a truncated
    file that looks complete. A device or pipe (/dev/stdout, a FIFO) is written in place.
    A storage failure is raised as one line naming `path` and `operation`."""
    path = Path(path)
    device = path.exists() and not path.is_file() and not path.is_dir()
    scratch = path if device else scratch_name(path)
    try:
        yield scratch
        if not device:
            os.replace(scratch, path)
    except Exception as exc:
        fault = storage_fault(exc, operation, path)
        if fault is None:
            raise
        raise fault from None
    finally:
        if not device:
            # a folder that refused the scratch file may refuse this too (a read-only file
            # system says so even of a missing file): the fault above is the one to tell
            with suppress(OSError):
                scratch.unlink(missing_ok=True)


def remove_tree(path: Path) -> None:
    """Remove a folder or file if it is there."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
