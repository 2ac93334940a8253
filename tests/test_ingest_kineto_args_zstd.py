"""Migration 0007: store.cpu_ops.args is stored with ZSTD; a warehouse made before keeps its ops."""

from __future__ import annotations

import shutil

import tracewh
from tracewh import warehouse
from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job
from tracewh.ingest import ingest_paths

OPS = "SELECT * FROM store.cpu_ops ORDER BY file_id, start_ns, name, args"


def _args_compression(con) -> set[str]:
    return {c for (c,) in con.execute(
        "SELECT DISTINCT compression FROM pragma_storage_info('store.cpu_ops') "
        "WHERE column_name = 'args' AND segment_type = 'VARCHAR'").fetchall()}


def test_args_of_ops_stored_before_migration_7_are_kept_and_recompressed(db_path, tmp_path,
                                                                         monkeypatch):
    traces = tmp_path / "traces"
    generate_kineto_job(traces, KinetoJobSpec(world_size=2, iterations=2, layers=2, seed=5))
    # Today's views read columns that later migrations add, so the old warehouse has every
    # migration but 0007, renumbered without gaps; 0007 then comes last, as an upgrade.
    others = [m for m in sorted(warehouse.migrations_dir().glob("*.sql")) if int(m.name[:4]) != 7]
    zstd = next(warehouse.migrations_dir().glob("0007_*.sql"))
    before_7, with_7 = tmp_path / "before_0007", tmp_path / "with_0007"
    for folder, files in ((before_7, others), (with_7, others + [zstd])):
        folder.mkdir()
        for number, existing in enumerate(files, start=1):
            shutil.copy(existing, folder / f"{number:04d}{existing.name[4:]}")
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
