"""The CLI in a process of its own, with the peak resident memory of that process.

A child's ru_maxrss is no measure: Linux starts it at the RSS of the process that spawned it
(vfork shares the parent's pages until exec, and exec keeps the old high-water mark), and a
pytest worker passes 700 MB late in the suite. The child reports its own VmHWM instead: the
high-water mark of the address space exec gave it."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

_PEAK_CLI = """\
import atexit, sys
def _peak(path=sys.argv.pop(1)):
    with open("/proc/self/status") as status, open(path, "w") as out:
        out.write(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
atexit.register(_peak)
from tracewh.cli import app
sys.argv[0] = "tracewh"
app()
"""


def run_cli_measured(args: list[str], env: dict | None = None,
                     timeout: float = 600) -> tuple[subprocess.CompletedProcess, float]:
    """`tracewh ARGS` in a fresh interpreter: its result and its peak RSS in MB."""
    with tempfile.TemporaryDirectory() as scratch:
        peak = Path(scratch) / "peak_kb"
        done = subprocess.run([sys.executable, "-c", _PEAK_CLI, str(peak), *args],
                              capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "COLUMNS": "200", **(env or {})})
        return done, int(peak.read_text()) / 1024
