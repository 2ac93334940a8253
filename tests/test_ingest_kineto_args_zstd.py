"""Migration 0007: store.cpu_ops.args is stored with ZSTD; a warehouse made before keeps its ops."""

from __future__ import annotations

import tracewh
from tracewh import warehouse
from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job
from tracewh.ingest import ingest_paths

from migration_fixtures import migrations_before_and_after

OPS = "SELECT * FROM store.cpu_ops ORDER BY file_id, start_ns, name, args"


def _args_compression(con) -> set[str]:
    return {c for (c,) in con.execute(
        "SELECT DISTINCT compression FROM pragma_storage_info('store.cpu_ops') "
        "WHERE column_name = 'args' AND segment_type = 'VARCHAR'").fetchall()}


def test_args_of_ops_stored_before_migration_7_are_kept_and_recompressed(db_path, tmp_path,
                                                                         monkeypatch):
    traces = tmp_path / "traces"
    generate_kineto_job(traces, KinetoJobSpec(world_size=2, iterations=2, layers=2, seed=5))
    before_7, with_7 = migrations_before_and_after(tmp_path, 7)
    with monkeypatch.context() as patch:
        patch.setattr(warehouse, "migrations_dir", lambda: before_7)
        con = tracewh.connect(db_path)
        results = ingest_paths(con, [traces])
        assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
        con.execute("CHECKPOINT")
        assert "ZSTD" not in _args_compression(con)
        before = con.execute(OPS).fetchall()
        con.close()
    assert before and any(row[11] for row in before)  # ops with args
    monkeypatch.setattr(warehouse, "migrations_dir", lambda: with_7)
    con = tracewh.connect(db_path)
    assert "args VARCHAR USING COMPRESSION ZSTD" in con.execute(
        "SELECT sql FROM duckdb_tables() WHERE schema_name = 'store' AND table_name = 'cpu_ops'"
    ).fetchone()[0]
    assert con.execute(OPS).fetchall() == before
    con.execute("CHECKPOINT")
    assert _args_compression(con) == {"ZSTD"}
    assert con.execute("SELECT count(*) FROM cpu_ops").fetchone()[0] == len(before)  # the view
    con.close()
