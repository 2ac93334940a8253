"""Migration 0007: store.cpu_ops.args is stored with ZSTD; a warehouse made before keeps its ops."""

from __future__ import annotations

import shutil

import duckdb

import tracewh
from tracewh import warehouse
from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job
from tracewh.ingest import ingest_paths

# the columns a warehouse made before 0007 has (0015 added op_id)
OPS = ("SELECT run_id, rank, file_id, pid, tid, start_ns, end_ns, name, category, correlation_id, "
       "external_id, args, iteration FROM store.cpu_ops ORDER BY file_id, start_ns, name, args")


def _args_compression(con) -> set[str]:
    return {c for (c,) in con.execute(
        "SELECT DISTINCT compression FROM pragma_storage_info('store.cpu_ops') "
        "WHERE column_name = 'args' AND segment_type = 'VARCHAR'").fetchall()}


def test_args_of_ops_stored_before_migration_7_are_kept_and_recompressed(db_path, tmp_path,
                                                                         monkeypatch):
    """Ops ingested by today's tracewh, copied into a warehouse made by migrations 0001-0006 (a
    later migration that adds a column to cpu_ops cannot run before 0007), which is then opened
    by today's tracewh: 0007 and every later migration apply in order."""
    traces = tmp_path / "traces"
    generate_kineto_job(traces, KinetoJobSpec(world_size=2, iterations=2, layers=2, seed=5))
    today = tmp_path / "today.duckdb"
    con = tracewh.connect(today)
    results = ingest_paths(con, [traces])
    assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    con.close()
    first_6 = tmp_path / "first_6"
    first_6.mkdir()
    for path in sorted(warehouse.migrations_dir().glob("000[1-6]_*.sql")):
        shutil.copy(path, first_6)
    with monkeypatch.context() as patch, duckdb.connect(":memory:") as raw:
        patch.setattr(warehouse, "migrations_dir", lambda: first_6)
        raw.execute(f"ATTACH '{db_path}' AS old (STORAGE_VERSION '{warehouse.STORAGE_VERSION}')")
        raw.execute("USE old")
        warehouse.migrate(raw)
        raw.execute(f"ATTACH '{today}' AS today (READ_ONLY)")
        raw.execute("INSERT INTO old.store.cpu_ops SELECT * EXCLUDE (op_id, depth, parent_id, self_ns) "
                    "FROM today.store.cpu_ops")  # the columns of migrations 0015 and 0017
        raw.execute("CHECKPOINT old")
        assert "ZSTD" not in _args_compression(raw)
        before = raw.execute(OPS).fetchall()
    assert before and any(row[11] for row in before)  # ops with args
    con = tracewh.connect(db_path)
    assert "args VARCHAR USING COMPRESSION ZSTD" in con.execute(
        "SELECT sql FROM duckdb_tables() WHERE schema_name = 'store' AND table_name = 'cpu_ops'"
    ).fetchone()[0]
    assert con.execute(OPS).fetchall() == before
    con.execute("CHECKPOINT")
    assert _args_compression(con) == {"ZSTD"}
    assert con.execute("SELECT count(*) FROM cpu_ops").fetchone()[0] == len(before)  # the view
    con.close()
