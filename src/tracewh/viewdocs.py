"""What a view is and what its columns mean, read from the comments of its file in sql/views
(the comment block above `CREATE ... VIEW` and the `-- ...` after each column)."""

from __future__ import annotations

import re
from pathlib import Path

from .errors import TracewhError
from .resources import sql_dir

_VIEW = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+(\w+)", re.I)
# where a view's select list is: its own, or its `<view>_of(runs)` macro's when it has one
_SELECT = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:VIEW\s+\w+|MACRO\s+\w+_of\b)", re.I)


def view_files() -> dict[str, Path]:
    """Public view name -> the file that defines it (files named `_*.sql` hold macros)."""
    return {name.lower(): path for path in sorted((sql_dir() / "views").glob("*.sql"))
            if not path.name.startswith("_") for name in _VIEW.findall(path.read_text())
            if not name.startswith("_")}  # a helper view beside the public one (_cpu_op_spans)


def view_summary(path: Path) -> str:
    """The first sentence of the comment block that opens the file."""
    lines = []
    for line in path.read_text().splitlines():
        if not line.startswith("--"):
            break
        if not line.startswith("-- uses:"):  # the modules it reads (sqlmodules), not what it holds
            lines.append(line[2:].strip())
    text = " ".join(lines)
    return text.split(". ")[0].rstrip(".") if text else ""


def column_docs(path: Path, columns: list[str]) -> dict[str, str]:
    """column -> the comment on the line that names it in the view's select list."""
    text = path.read_text()
    found = _SELECT.search(text)
    body = text[found.end():] if found else text
    docs = {}
    for column in columns:
        pattern = re.compile(rf"(?:^|[\s,(]){re.escape(column)}\s*,?\s*--\s*(.+)$", re.I | re.M)
        match = pattern.search(body)
        if match:
            docs[column] = match.group(1).strip()
    return docs


def find_view(name: str) -> Path:
    from .mistakes import did_you_mean

    files = view_files()
    if name.lower() not in files:
        raise TracewhError(f"no view {name!r}{did_you_mean(name.lower(), sorted(files))} - "
                           "'tracewh views' lists them")
    return files[name.lower()]
