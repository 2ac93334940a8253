"""Turn a .nsys-rep report into the SQLite export tracewh reads, with the user's own nsys."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import IngestError


def export_sqlite(report: Path) -> Path:
    """Export `report` with `nsys export --type sqlite`; beside it when the folder is writable."""
    target = report.with_suffix(".sqlite")
    command_hint = f"nsys export --type sqlite --output {target} {report}"
    nsys = shutil.which("nsys")
    if nsys is None:
        raise IngestError(report, "a .nsys-rep report must be exported to SQLite and 'nsys' is "
                          "not on PATH", f"run: {command_hint}  then ingest the .sqlite")
    if not os.access(report.parent, os.W_OK):
        target = Path(tempfile.mkdtemp(prefix="tracewh-")) / (report.stem + ".sqlite")
    done = subprocess.run(
        [nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "--output", str(target),
         str(report)],
        capture_output=True, text=True)
    if done.returncode != 0 or not target.exists():
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise IngestError(report, f"nsys export failed ({detail[-1] if detail else done.returncode})",
                          f"try it by hand: {command_hint}")
    return target
