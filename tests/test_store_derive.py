"""The derive registry (tracewh.store.derive): an entry marked stale, as a migration adding a
column marks it, or made by another version of its scripts, is filled again when the warehouse
is next opened for writing, with the same rows ingest made; never by a read-only open."""

from __future__ import annotations

import pytest

import tracewh
from tracewh import warehouse
from tracewh.errors import TracewhError
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import ingest_paths
from tracewh.store import derive

TIMELINE = ("SELECT file_id, op, start_ns, end_ns, alone, device_prev_end_ns FROM gpu_ops "
            "ORDER BY ALL")


@pytest.fixture
def db(tmp_path):
    generate_job(tmp_path / "traces", JobSpec(world_size=2, iterations=2, layers=1, seed=3))
    path = tmp_path / "wh.duckdb"
    with tracewh.connect(path) as con:
        results = ingest_paths(con, [tmp_path / "traces"], jobs=1)
        assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
        assert derive.stale(con) == []
    return path


def test_a_stale_entry_is_filled_again_on_open_for_writing(db):
    with tracewh.connect(db) as con:
        ingested = con.execute(TIMELINE).fetchall()
        assert any(row[4] for row in ingested) and not all(row[4] for row in ingested)
        # what a migration adding the columns leaves: empty columns, the entry marked stale
        con.execute("UPDATE store.kernels SET alone = NULL, device_prev_end_ns = NULL")
        con.execute("DELETE FROM store.meta WHERE key = 'derive:gpu_op_timeline'")
        assert derive.stale(con) == ["gpu_op_timeline"]
    with pytest.raises(TracewhError, match="tracewh upgrade"):
        warehouse.open_read_only(db)  # a read-only command never fills
    with tracewh.connect(db) as con:
        assert con.execute(TIMELINE).fetchall() == ingested
        assert derive.stale(con) == []


def test_every_entry_run_by_the_registry_is_recorded_and_its_fills_exist(db):
    with tracewh.connect(db, read_only=True) as con:
        recorded = {k for (k,) in con.execute(
            "SELECT key FROM store.meta WHERE key LIKE 'derive:%'").fetchall()}
        columns = {f"{t}.{c}" for t, c in con.execute(
            "SELECT table_name, column_name FROM duckdb_columns() "
            "WHERE schema_name = 'store'").fetchall()}
    assert recorded == {f"derive:{e.name}" for e in derive.REGISTRY if not e.made_by}
    for entry in derive.REGISTRY:
        for fill in entry.fills:
            assert fill in columns or any(c.startswith(fill + ".") for c in columns), fill
