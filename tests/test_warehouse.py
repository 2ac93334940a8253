"""Warehouse file: pinned storage version, migrations with checksums, views in the plain shell."""

from __future__ import annotations

import shutil
import subprocess

import duckdb
import pytest

import tracewh
from tracewh import warehouse
from tracewh.errors import TracewhError


def test_new_warehouse_is_readable_by_duckdb_1_4(db_path):
    tracewh.connect(db_path).close()
    con = duckdb.connect(str(db_path), read_only=True)
    tags = con.execute("SELECT tags FROM duckdb_databases() WHERE database_name = current_database()"
                       ).fetchall()[0][0]
    assert tags["storage_version"].startswith("v1.4.0")


def test_writes_go_in_row_groups_of_16384_rows_and_any_duckdb_reads_them(db_path):
    con = tracewh.connect(db_path)
    con.execute("CREATE TABLE t AS SELECT range AS i FROM range(40000)")
    groups = con.execute("SELECT row_group_id, max(count) FROM pragma_storage_info('t') "
                         "GROUP BY ALL ORDER BY 1").fetchall()
    assert groups == [(0, 16384), (1, 16384), (2, 40000 - 2 * 16384)]
    assert warehouse.ROW_GROUP_SIZE == 16384
    con.close()
    plain = duckdb.connect(str(db_path), read_only=True)
    assert plain.execute("SELECT count(*), sum(i) FROM t").fetchone() == (40000, 39999 * 40000 // 2)


def test_a_cursor_works_in_the_warehouse_not_the_memory_database(db_path):
    con = tracewh.connect(db_path)
    cur = warehouse.cursor(con)
    assert cur.execute("SELECT current_database()").fetchone() == (db_path.stem,)
    assert cur.execute("SELECT count(*) FROM store.sources").fetchone() == (0,)
    assert con.execute("SELECT current_setting('temp_directory')").fetchone()[0] == f"{db_path}.tmp"


def test_a_writing_connection_spills_beside_the_file(db_path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an in-memory database's default would be ./.tmp
    con = tracewh.connect(db_path)
    con.execute("SET memory_limit = '32MB'; SET preserve_insertion_order = false")
    con.execute("CREATE TEMP TABLE big AS SELECT range AS i, repeat('x', 100) AS s FROM range(2000000)")
    spilled = con.execute("SELECT count(*) FROM duckdb_temporary_files()").fetchone()[0]
    assert spilled > 0 and (tmp_path / f"{db_path.name}.tmp").is_dir()
    assert not (tmp_path / ".tmp").exists()


@pytest.mark.parametrize("stem, name", [("memory", "memory_db"), ("temp", "temp_db"),
                                        ("job.v2", "job"), ("a b", "a b")])
def test_any_file_name_opens_for_writing(tmp_path, stem, name):
    con = tracewh.connect(tmp_path / f"{stem}.duckdb")
    assert con.execute("SELECT current_database()").fetchone() == (name,)
    assert warehouse.cursor(con).execute("SELECT count(*) FROM store.runs").fetchone() == (0,)


def test_migrations_recorded_with_checksums(con):
    rows = con.execute("SELECT version, name, checksum FROM store.schema_migrations").fetchall()
    expected = [(m.version, m.name, m.checksum) for m in warehouse.load_migrations()]
    assert rows == expected


def _fake_migrations(tmp_path, monkeypatch, files: dict[str, str]):
    folder = tmp_path / "migrations"
    folder.mkdir(exist_ok=True)
    for existing in warehouse.migrations_dir().glob("*.sql"):
        shutil.copy(existing, folder / existing.name)
    for name, text in files.items():
        (folder / name).write_text(text)
    monkeypatch.setattr(warehouse, "migrations_dir", lambda: folder)
    return folder


def test_older_warehouse_is_upgraded_in_place(db_path, tmp_path, monkeypatch):
    con = tracewh.connect(db_path)
    con.execute("INSERT INTO store.meta VALUES ('kept', 'yes')")
    con.close()
    following = len(warehouse.load_migrations()) + 1
    _fake_migrations(tmp_path, monkeypatch, {
        f"{following:04d}_add_note.sql": "ALTER TABLE store.runs ADD COLUMN note VARCHAR;"})
    con = tracewh.connect(db_path)
    assert con.execute("SELECT max(version) FROM store.schema_migrations").fetchall() == [(following,)]
    assert con.execute("SELECT value FROM store.meta WHERE key = 'kept'").fetchall() == [("yes",)]
    assert "note" in [c[0] for c in con.execute("DESCRIBE store.runs").fetchall()]


def test_edited_applied_migration_is_an_error(db_path, tmp_path, monkeypatch):
    tracewh.connect(db_path).close()
    folder = _fake_migrations(tmp_path, monkeypatch, {})
    first = sorted(folder.glob("*.sql"))[0]
    first.write_text(first.read_text() + "\n-- edited\n")
    with pytest.raises(TracewhError, match="changed after it was applied"):
        tracewh.connect(db_path)


def test_read_only_open_of_missing_warehouse_says_what_to_do(tmp_path):
    with pytest.raises(TracewhError, match="tracewh ingest"):
        tracewh.connect(tmp_path / "none.duckdb", read_only=True)
    assert not (tmp_path / "none.duckdb").exists()


def test_memory_warehouse_lives_in_the_process_only(tmp_path, monkeypatch):
    """connect(":memory:") is what duckdb.connect(":memory:") is: no file, even one named so."""
    from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job
    from tracewh.ingest import ingest_paths

    monkeypatch.chdir(tmp_path)
    truth = generate_kineto_job(tmp_path / "job", KinetoJobSpec(world_size=2, iterations=2, layers=1))
    con = tracewh.connect(":memory:")
    assert [r.status for r in ingest_paths(con, [tmp_path / "job"])] == ["ingested", "ingested"]
    assert con.execute("SELECT count(*) FROM kernels").fetchall() == [
        (sum(len(k) for k in truth.kernels.values()),)]
    con.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job"]
    with pytest.raises(TracewhError, match="empty"):
        tracewh.connect(":memory:", read_only=True)


def test_views_recreated_when_the_sql_changes(con):
    con.execute("UPDATE store.meta SET value = 'old' WHERE key = 'views_checksum'")
    con.execute("DROP VIEW kernels")
    warehouse.install_views(con)
    assert con.execute("SELECT count(*) FROM kernels").fetchall() == [(0,)]


@pytest.mark.skipif(shutil.which("duckdb") is None, reason="duckdb CLI (pip install duckdb-cli) absent")
def test_every_view_answers_in_the_plain_duckdb_shell(db_path):
    con = tracewh.connect(db_path)
    views = [v for (v,) in con.execute(
        "SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main' "
        "ORDER BY view_name").fetchall()]
    con.close()
    assert {"kernels", "gpu_ops", "nccl_ops", "nvtx_ranges", "iterations", "runs"} <= set(views)
    script = "".join(f"SELECT '{v}', count(*) FROM {v};\n" for v in views)
    done = subprocess.run(["duckdb", "-readonly", "-csv", "-noheader", str(db_path)], input=script,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [line.split(",")[0] for line in done.stdout.split()] == views


def test_launch_ns_is_filled_in_for_ops_stored_before_migration_5(db_path, tmp_path, monkeypatch):
    # a warehouse at migration 4: ops and their launch calls, but no launch_ns column yet
    folder = tmp_path / "migrations_0004"
    folder.mkdir()
    for existing in sorted(warehouse.migrations_dir().glob("000[1-4]_*.sql")):
        shutil.copy(existing, folder / existing.name)
    with monkeypatch.context() as patch:
        patch.setattr(warehouse, "migrations_dir", lambda: folder)
        patch.setattr(warehouse, "install_views", lambda con, **_: None)
        con = tracewh.connect(db_path)
        assert "launch_ns" not in [c[0] for c in con.execute("DESCRIBE store.kernels").fetchall()]
        for table in ("kernels", "memcpy", "memset"):
            con.execute(f"INSERT INTO store.{table} BY NAME SELECT 'r' AS run_id, 0 AS rank, "
                        "1 AS file_id, pid, start_ns, start_ns + 100 AS end_ns, correlation_id, "
                        "'k' AS name FROM (VALUES (7, 100, 5), (7, 300, 6), (8, 500, 5)) "
                        "v(pid, start_ns, correlation_id)"
                        .replace(", 'k' AS name", ", 'k' AS name" if table == "kernels" else ""))
        # call 5 of process 7 launched the first op; process 8's call 5 is another call (40)
        con.execute("INSERT INTO store.cuda_api (run_id, rank, file_id, pid, tid, start_ns, end_ns, "
                    "name, api_kind, correlation_id) VALUES "
                    "('r', 0, 1, 7, 7, 90, 95, 'cudaLaunchKernel', 'runtime', 5), "
                    "('r', 0, 1, 8, 8, 40, 45, 'cudaLaunchKernel', 'runtime', 5)")
        con.close()
    con = tracewh.connect(db_path)
    for view in ("kernels", "memcpy", "memset", "gpu_ops"):
        got = con.execute(f"SELECT pid, start_ns, launch_ns FROM {view}").fetchall()
        expected = [(7, 100, 90), (7, 300, None), (8, 500, 40)] * (3 if view == "gpu_ops" else 1)
        assert sorted(got, key=str) == sorted(expected, key=str), view


def _schema(path) -> list:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(
            "SELECT 'table', schema_name, table_name, sql FROM duckdb_tables() WHERE database_name = current_database() "
            "UNION ALL SELECT 'view', schema_name, view_name, sql FROM duckdb_views() WHERE NOT internal "
            "AND database_name = current_database() UNION ALL SELECT DISTINCT 'macro', schema_name, "
            "function_name, '' FROM duckdb_functions() WHERE NOT internal AND database_name = current_database() "
            "UNION ALL SELECT 'meta', key, value, '' FROM store.meta "
            "UNION ALL SELECT 'migration', version::VARCHAR, name, checksum FROM store.schema_migrations "
            "ORDER BY ALL").fetchall()
    finally:
        con.close()


def test_a_new_warehouse_is_a_copy_of_the_template_dated_now(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACEWH_CACHE_DIR", str(tmp_path / "cache"))
    tracewh.connect(tmp_path / "built.duckdb").close()  # no template yet: built, then kept
    (template,) = (tmp_path / "cache").glob("empty-*.duckdb")
    assert _schema(template) == _schema(tmp_path / "built.duckdb")
    marker = duckdb.connect(str(template))  # mark the template: the next warehouse must carry it
    marker.execute("INSERT INTO store.meta VALUES ('marker', 'from the template')")
    marker.close()
    before = warehouse.utc_now()
    con = tracewh.connect(tmp_path / "copied.duckdb")
    assert con.execute("SELECT value FROM store.meta WHERE key = 'marker'").fetchall() == [
        ("from the template",)]
    applied = con.execute("SELECT min(applied_at) FROM store.schema_migrations").fetchone()[0]
    assert applied >= before  # the migrations are dated when this warehouse was made
    con.close()
    assert [row for row in _schema(tmp_path / "copied.duckdb") if row[1] != "marker"] == \
        _schema(tmp_path / "built.duckdb")


def test_a_damaged_template_is_replaced_by_a_built_warehouse(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACEWH_CACHE_DIR", str(tmp_path / "cache"))
    tracewh.connect(tmp_path / "first.duckdb").close()
    (template,) = (tmp_path / "cache").glob("empty-*.duckdb")
    template.write_bytes(b"not a database" * 1000)
    con = tracewh.connect(tmp_path / "second.duckdb")
    assert con.execute("SELECT count(*) FROM kernels").fetchone() == (0,)
    con.close()
    assert _schema(template) == _schema(tmp_path / "first.duckdb")  # built again, whole
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no scratch left


def test_a_warehouse_is_made_without_a_usable_cache(tmp_path, monkeypatch):
    tracewh.connect(tmp_path / "usual.duckdb").close()
    (tmp_path / "a file").write_text("not a folder")
    for cache in ("", str(tmp_path / "a file" / "tracewh")):  # none kept; a cache it cannot write
        monkeypatch.setenv("TRACEWH_CACHE_DIR", cache)
        path = tmp_path / f"wh{len(cache)}.duckdb"
        tracewh.connect(path).close()
        assert _schema(path) == _schema(tmp_path / "usual.duckdb")  # whole: tables, views, macros
    assert (tmp_path / "a file").read_text() == "not a folder"


def test_an_incomplete_warehouse_is_not_kept_as_the_template(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACEWH_CACHE_DIR", str(tmp_path / "cache"))
    with monkeypatch.context() as patch:
        patch.setattr(warehouse, "install_views", lambda con, **_: None)
        tracewh.connect(tmp_path / "no_views.duckdb").close()
    assert not list((tmp_path / "cache").glob("empty-*"))
    tracewh.connect(tmp_path / "whole.duckdb").close()
    assert len(list((tmp_path / "cache").glob("empty-*"))) == 1
