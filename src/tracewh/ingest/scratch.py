"""Scratch files of an ingest in TMPDIR (a Kineto trace gunzipped, its events cut out), named
by the process that made them: `tracewh-<kind>-<pid>-<random>.json`. A process killed before
it removes its own (kill -9, the OOM killer, a preempted job) leaves them behind, as big as
the inflated trace; the next ingest removes those of processes no longer alive."""

from __future__ import annotations

import os
import re
import tempfile
from functools import cache
from pathlib import Path

_NAME = re.compile(r"tracewh-(?:gunzipped|events)-(\d+)-[^/]*\.json")


def scratch_file(kind: str) -> tuple[int, Path]:
    """A new scratch file of this process (`kind`: gunzipped | events), open for writing."""
    _sweep_once()
    fd, name = tempfile.mkstemp(prefix=f"tracewh-{kind}-{os.getpid()}-", suffix=".json")
    return fd, Path(name)


@cache
def _sweep_once() -> None:
    folder = Path(tempfile.gettempdir())
    for path in folder.glob("tracewh-*.json"):
        match = _NAME.fullmatch(path.name)
        if match and not _alive(int(match.group(1))):
            try:
                path.unlink(missing_ok=True)
            except OSError:  # another user's, in a sticky TMPDIR
                pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True
