"""Shared fixtures: real traces from ../shared/data (skipped when absent) and fresh warehouses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import tracewh

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    override = os.environ.get("TRACEWH_SHARED")
    base = Path(override) if override else REPO.parent / "shared"
    return base / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real traces of ../shared/data; tests using them skip on a machine without them."""
    path = shared_data_dir()
    if not path.is_dir():
        pytest.skip(f"real traces not available at {path}")
    return path.resolve()  # ingest records resolved paths; ../shared may be a link


@pytest.fixture(scope="session", autouse=True)
def template_cache(tmp_path_factory) -> Path:
    """The tests' warehouses copy one template (warehouse._template_path) kept here, not in
    the user's ~/.cache."""
    folder = tmp_path_factory.mktemp("tracewh-cache")
    os.environ["TRACEWH_CACHE_DIR"] = str(folder)
    return folder


@pytest.fixture
def db_path(tmp_path) -> Path:
    return tmp_path / "wh.duckdb"


@pytest.fixture
def con(db_path):
    connection = tracewh.connect(db_path)
    yield connection
    connection.close()
