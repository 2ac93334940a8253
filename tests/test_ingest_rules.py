"""Rules that hold from day one: atomic per file, idempotent, clear one-line errors."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app

runner = CliRunner()


def table_checksums(db_path: Path) -> dict[str, tuple]:
    """Row count and an order-independent hash of every stored table."""
    con = tracewh.connect(db_path, read_only=True)
    try:
        tables = [t for (t,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'store' ORDER BY 1").fetchall()]
        return {t: con.execute(f"SELECT count(*), sum(hash(x)) FROM store.{t} AS x").fetchall()[0]
                for t in tables}
    finally:
        con.close()


def ingest(db_path: Path, *args: str):
    return runner.invoke(app, ["ingest", "--db", str(db_path), "--quiet", *args])


@pytest.fixture
def good_export(shared_data, tmp_path) -> Path:
    target = tmp_path / "good" / "rank0.sqlite"
    target.parent.mkdir()
    shutil.copy(shared_data / "nsys" / "nsys-ai" / "h100_2gpu_1s.sqlite", target)
    return target


def corrupt_copy(source: Path, target: Path) -> Path:
    data = bytearray(source.read_bytes())
    page = 4096
    for offset in range(len(data) // 2, len(data) // 2 + 8 * page, page):  # wreck a few pages
        data[offset:offset + page] = b"\xa5" * page
    target.write_bytes(bytes(data))
    return target


def test_same_file_twice_adds_nothing(db_path, good_export):
    assert ingest(db_path, str(good_export)).exit_code == 0
    before = table_checksums(db_path)
    again = ingest(db_path, str(good_export))
    assert again.exit_code == 0
    assert table_checksums(db_path) == before
    copy = good_export.parent / "copy_of_rank0.sqlite"  # same content under another name
    shutil.copy(good_export, copy)
    assert ingest(db_path, str(copy)).exit_code == 0
    assert table_checksums(db_path) == before


@pytest.mark.parametrize("case", ["garbage", "not-nsys", "corrupt-page", "truncated", "empty"])
def test_bad_file_is_one_clear_line_and_changes_nothing(db_path, good_export, tmp_path, case):
    assert ingest(db_path, str(good_export)).exit_code == 0
    before = table_checksums(db_path)
    bad = tmp_path / "bad" / f"{case}.sqlite"
    bad.parent.mkdir()
    if case == "garbage":
        bad.write_bytes(os.urandom(10_000))
    elif case == "not-nsys":
        con = sqlite3.connect(bad)
        con.execute("CREATE TABLE people (name TEXT)")
        con.commit()
        con.close()
    elif case == "corrupt-page":
        corrupt_copy(good_export, bad)
    elif case == "truncated":
        bad.write_bytes(good_export.read_bytes()[: good_export.stat().st_size // 3])
    else:
        bad.write_bytes(b"")
    result = ingest(db_path, str(bad))
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and str(bad) in errors[0], result.stderr
    assert table_checksums(db_path) == before


def test_good_files_still_ingest_beside_a_bad_one(db_path, good_export, tmp_path, shared_data):
    folder = good_export.parent
    (folder / "broken.sqlite").write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    shutil.copy(shared_data / "nsys" / "nsys-ai" / "mock.sqlite", folder / "other.sqlite")
    result = ingest(db_path, str(folder))
    assert result.exit_code == 1
    assert "broken.sqlite" in result.stderr
    con = tracewh.connect(db_path, read_only=True)
    assert con.execute("SELECT count(*) FROM sources").fetchall() == [(2,)]


def test_missing_path_and_unreadable_file(db_path, good_export):
    result = ingest(db_path, "/no/such/trace.sqlite")
    assert result.exit_code == 1 and "/no/such/trace.sqlite: no such file" in result.stderr
    if os.geteuid() != 0:  # root reads everything
        good_export.chmod(0)
        result = ingest(db_path, str(good_export))
        assert result.exit_code == 1 and "cannot read" in result.stderr
        good_export.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_changed_file_needs_replace(db_path, good_export, shared_data):
    assert ingest(db_path, str(good_export)).exit_code == 0
    shutil.copy(shared_data / "nsys" / "nsys-ai" / "mock.sqlite", good_export)
    result = ingest(db_path, str(good_export))
    assert result.exit_code == 1 and "--replace" in result.stderr
    assert ingest(db_path, "--replace", str(good_export)).exit_code == 0
    con = tracewh.connect(db_path, read_only=True)
    assert con.execute("SELECT count(*) FROM kernels").fetchall() == [(2,)]  # mock.sqlite's


def test_two_files_claiming_one_rank_name_both_and_the_fix(db_path, tmp_path, shared_data):
    folder = tmp_path / "job"
    folder.mkdir()
    # different content, the same rank from the file name
    shutil.copy(shared_data / "nsys" / "nsys-ai" / "mock.sqlite", folder / "a_rank0.sqlite")
    shutil.copy(shared_data / "nsys" / "nsys-2021" / "report1.sqlite", folder / "b_rank0.sqlite")
    result = ingest(db_path, str(folder))
    assert result.exit_code == 1
    assert "a_rank0.sqlite" in result.stderr and "b_rank0.sqlite" in result.stderr
    assert "--rank-map" in result.stderr
    fixed = ingest(db_path, "--rank-map", "b_rank0.sqlite=1", str(folder))
    assert fixed.exit_code == 0
    con = tracewh.connect(db_path, read_only=True)
    assert con.execute("SELECT rank, rank_source FROM ranks ORDER BY rank").fetchall() == [
        (0, "filename"), (1, "rank-map")]


def _fake_nsys(bin_dir: Path, export: Path) -> None:
    """A stand-in `nsys` that 'exports' by copying a known SQLite file to --output."""
    script = bin_dir / "nsys"
    script.write_text(f"""#!/bin/sh
out=""
while [ $# -gt 0 ]; do
  if [ "$1" = "--output" ]; then out="$2"; shift; fi
  shift
done
cp "{export}" "$out"
""")
    script.chmod(0o755)


def test_nsys_rep_is_exported_with_nsys_on_path(db_path, tmp_path, shared_data, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_nsys(bin_dir, shared_data / "nsys" / "nsys-ai" / "mock.sqlite")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    report = tmp_path / "job" / "report1.nsys-rep"
    report.parent.mkdir()
    report.write_bytes(b"not really a report")
    result = ingest(db_path, str(report))
    assert result.exit_code == 0, result.stderr
    assert (report.parent / "report1.sqlite").exists()
    con = tracewh.connect(db_path, read_only=True)
    assert con.execute("SELECT count(*) FROM kernels").fetchall() == [(2,)]


def test_nsys_rep_without_nsys_gives_the_export_command(db_path, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    report = tmp_path / "report1.nsys-rep"
    report.write_bytes(b"x")
    result = ingest(db_path, str(report))
    assert result.exit_code == 1
    assert f"nsys export --type sqlite --output {tmp_path / 'report1.sqlite'} {report}" in result.stderr


def test_ingest_checkpoints_and_leaves_the_connection_settings_as_it_found_them(db_path, tmp_path):
    from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job
    from tracewh.ingest import ingest_paths

    generate_kineto_job(tmp_path / "traces", KinetoJobSpec(world_size=2, iterations=2, seed=1))
    con = tracewh.connect(db_path)
    con.execute("SET checkpoint_threshold = '1GB'")  # as the CLI: commits stay in the WAL
    con.execute("SET max_vacuum_tasks = 7")
    before = con.execute("SELECT current_setting('threads'), current_setting('max_vacuum_tasks')"
                         ).fetchall()
    results = ingest_paths(con, [tmp_path / "traces"], jobs=2)
    assert [r.status for r in results] == ["ingested", "ingested"]
    assert con.execute("SELECT current_setting('threads'), current_setting('max_vacuum_tasks')"
                       ).fetchall() == before
    wal = Path(f"{db_path}.wal")
    assert not wal.exists() or wal.stat().st_size == 0  # checkpointed by the ingest itself
    con.close()
