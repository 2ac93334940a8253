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


# The TraceLens peer traces (../shared/data/kineto/tracelens), run name -> file below it
TRACELENS = {
    "h100_bert": "pairs/h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "mi300_bert": "pairs/mi300/gaunernst_bert-small-uncased__1016001.json.gz",
    "h100_vit": "pairs/h100/Falconsai_nsfw_image_detection__1016002.json.gz",
    "mi300_vit": "pairs/mi300/Falconsai_nsfw_image_detection__1016002.json.gz",
    "h100_timesformer": "pairs/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz",
    "b200": "b200/eager_trace.json.gz",
    "mi300_resnet": "mi300/resnet_act_checkpoint.json.gz",
}


@pytest.fixture(scope="session")
def tracelens_warehouse(shared_data, tmp_path_factory):
    """One warehouse of every TraceLens trace, each its own run (read-only use)."""
    from tracewh.ingest import ingest_paths
    con = tracewh.connect(tmp_path_factory.mktemp("tracelens") / "wh.duckdb")
    for run, rel in TRACELENS.items():
        results = ingest_paths(con, [shared_data / "kineto" / "tracelens" / rel], run=run, jobs=1)
        assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    yield con
    con.close()
