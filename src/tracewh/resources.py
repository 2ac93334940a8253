"""Where the SQL and migration files live: inside the wheel, or at the top of a checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parents[1]


def _find(name: str) -> Path:
    bundled = _PACKAGE / "_data" / name
    return bundled if bundled.is_dir() else _CHECKOUT / name


def sql_dir() -> Path:
    return _find("sql")


def migrations_dir() -> Path:
    return _find("migrations")


def read_sql(relative: str) -> str:
    return (sql_dir() / relative).read_text()
