"""`tracewh check`: passes on a sound warehouse, and names each kind of damage on one line."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from tracewh.check import check_warehouse, checks_dir
from tracewh.store import event_tables, remove_source, source_rows
from tracewh.cli import app
from tracewh.generate.nsys import JobSpec, generate_job

runner = CliRunner()


@pytest.fixture(scope="module")
def sound(tmp_path_factory) -> Path:
    """A warehouse of two generated jobs (one report per rank; two ranks per report)."""
    root = tmp_path_factory.mktemp("check")
    generate_job(root / "job_a", JobSpec(world_size=2, iterations=2, layers=1, seed=7))
    generate_job(root / "job_b", JobSpec(world_size=4, ranks_per_file=2, iterations=2, layers=1,
                                         seed=8))
    db = root / "wh.duckdb"
    result = runner.invoke(app, ["ingest", str(root), "--db", str(db), "--quiet"])
    assert result.exit_code == 0, result.stderr
    return db


@pytest.fixture
def damaged(sound, tmp_path) -> Path:
    db = tmp_path / "wh.duckdb"
    shutil.copy(sound, db)
    return db


def check(db: Path):
    return runner.invoke(app, ["check", "--db", str(db)])


def problems(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("Problem:")]


def test_sound_warehouse_passes(sound):
    result = check(sound)
    assert result.exit_code == 0, result.stderr
    assert "consistent (4 source(s); every view answers)" in result.stderr
    assert problems(result) == []


def test_check_opens_read_only_and_changes_nothing(sound):
    before = sound.read_bytes()
    assert check(sound).exit_code == 0
    assert sound.read_bytes() == before


def test_no_warehouse_is_one_line(tmp_path):
    result = check(tmp_path / "none.duckdb")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"Error: {tmp_path / 'none.duckdb'}: no warehouse here - run 'tracewh ingest PATH' first"]


# Damage done behind tracewh's back, and the words its one line must contain.
DAMAGE = {
    "partial-source": (["DELETE FROM store.kernels WHERE file_id = 2 AND rowid % 2 = 0"],
                       ["source 2", "store.sources.rows records", "--replace"]),
    "rows-without-source": (
        ["INSERT INTO store.kernels (run_id, rank, file_id, start_ns, end_ns, name) "
         "VALUES ('job_a', 0, 77, 1, 2, 'k')"],
        ["store.kernels holds 1 row(s) of file_id 77", "no store.sources row"]),
    "source-without-rows": (
        ["INSERT INTO store.sources (file_id, run_id, path, sha256, format, bytes, rows, has_utc,"
         " ingested_at) VALUES (78, 'job_a', '/x.sqlite', 'ab', 'nsys-sqlite', 1, 10, true, now())"],
        ["source 78 (/x.sqlite)", "records 10 rows but the tables hold 0"]),
    "rank-claimed-twice": (["UPDATE store.ranks SET rank = 0 WHERE file_id = 2"],
                           ["rank 0 is claimed 2 times"]),
    "rows-of-an-unknown-rank": (["UPDATE store.kernels SET rank = 9 WHERE file_id = 1"],
                                ["store.kernels holds", "rank 9", "not a rank of that source"]),
    "device-of-an-unknown-rank": (["UPDATE store.devices SET rank = 9 WHERE file_id = 1"],
                                  ["store.devices gives device", "rank 9"]),
    "run-missing": (["DELETE FROM store.runs WHERE run_id = 'job_a'"],
                    ["belongs to run job_a, which store.runs lacks"]),
    "run-without-sources": (
        ["INSERT INTO store.runs (run_id, created_at) VALUES ('ghost', now())"],
        ["run ghost has no source"]),
    "row-in-another-run": (["UPDATE store.memcpy SET run_id = 'job_b' WHERE file_id = 1"],
                           ["store.memcpy holds", "under run job_b, but the source is in run job_a"]),
    "duplicate-content": (
        ["INSERT INTO store.sources SELECT * REPLACE (99 AS file_id, 0 AS rows, '/y' AS path) "
         "FROM store.sources WHERE file_id = 1"],
        ["is stored 2 times (file_ids 1, 99)"]),
    "migration-edited": (["UPDATE store.schema_migrations SET checksum = 'x' WHERE version = 1"],
                         ["migration 0001_initial.sql changed after it was applied"]),
    "migration-missing": (["DELETE FROM store.schema_migrations WHERE version = 2"],
                          ["migration 0002_kineto.sql is not applied"]),
    "kernel-name-unclassified": (
        ["DELETE FROM store.kernel_names WHERE name = (SELECT min(name) FROM store.kernels "
         "WHERE file_id = 1)"],
        ["source 1 has 1 kernel name(s) missing from store.kernel_names", "--replace"]),
    "view-dropped": (["DROP VIEW iterations"], ["view or macro iterations is missing"]),
    "view-broken": (["CREATE OR REPLACE VIEW memset AS SELECT error('broken on purpose') AS x"],
                    ["view memset does not answer", "broken on purpose"]),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_each_kind_of_damage_is_one_line(damaged, case):
    statements, words = DAMAGE[case]
    con = duckdb.connect(str(damaged))
    for statement in statements:
        con.execute(statement)
    con.close()
    result = check(damaged)
    assert result.exit_code == 1
    lines = problems(result)
    assert lines and any(all(w in line for w in words) for line in lines), result.stderr
    assert f"{damaged}: {len(lines)} problem(s)" in result.stderr
    assert "Traceback" not in result.stderr


def test_damaged_blocks_are_found_by_reading_every_table(damaged):
    size = damaged.stat().st_size
    with damaged.open("r+b") as handle:  # overwrite a tenth of the file, past the headers
        handle.seek(size // 3)
        handle.write(b"\xa5" * (size // 10))
    result = check(damaged)
    assert result.exit_code == 1
    lines = problems(result) or [l for l in result.stderr.splitlines() if l.startswith("Error:")]
    assert lines and all("Traceback" not in l for l in lines), result.stderr
    assert any("cannot be read back" in l or "Corrupt" in l or "cannot open" in l
               for l in lines), result.stderr


def test_audits_are_sql_files_that_return_problem_rows():
    audits = sorted(p.stem for p in checks_dir().glob("*.sql") if not p.name.startswith("_"))
    assert {"source_rows", "orphan_rows", "ranks", "run_ids", "sources", "migrations",
            "views"} <= set(audits)
    for path in checks_dir().glob("*.sql"):
        text = path.read_text()
        assert text.startswith("-- "), path  # a doc header first
        if not path.name.startswith("_"):
            assert "AS problem" in text and "-- returns:" in text, path


# the tables sql/source_rows.sql listed by hand until issue 33
COUNTED = {"kernels", "memcpy", "memset", "cuda_api", "cpu_ops", "nvtx_ranges", "nccl_ops",
           "gpu_syncs", "python_frames", "os_calls", "memory_events", "samples", "log_values",
           "gpu_metrics", "nic_metrics"}


def test_counted_tables_are_the_stored_tables_of_events(sound):
    con = duckdb.connect(str(sound), read_only=True)
    try:
        assert set(event_tables(con)) == COUNTED
    finally:
        con.close()


def test_a_new_stored_table_is_counted_checked_and_removed_with_its_source(sound, tmp_path):
    """Issue 33: a table of a source's events added by a migration alone (no list to edit) is
    counted into sources.rows, audited by tracewh check, and emptied by tracewh remove."""
    db = tmp_path / "wh.duckdb"
    shutil.copy(sound, db)
    con = duckdb.connect(str(db))
    try:
        con.execute("CREATE TABLE store.gpu_counters (run_id VARCHAR NOT NULL, rank INTEGER, "
                    "file_id BIGINT NOT NULL, start_ns BIGINT NOT NULL, value DOUBLE)")
        first, second = [f for (f,) in con.execute(
            "SELECT file_id FROM store.sources ORDER BY file_id LIMIT 2").fetchall()]
        before = dict(con.execute("SELECT file_id, rows FROM store.sources").fetchall())
        con.execute("INSERT INTO store.gpu_counters SELECT run_id, rank, file_id, i, 1.0 FROM "
                    "(SELECT run_id, min(rank) AS rank, file_id FROM store.ranks GROUP BY ALL), "
                    "range(3) t(i) WHERE file_id IN (?, ?)", [first, second])
        assert "gpu_counters" in event_tables(con)
        assert source_rows(con, first, second) == {first: before[first] + 3,
                                                   second: before[second] + 3}
        assert [p.message.split(" - ")[0] for p in check_warehouse(con)] == [
            f"source {f} ({path}): store.sources.rows records {before[f]} rows but the tables "
            f"hold {before[f] + 3}" for f, path in con.execute(
                "SELECT file_id, path FROM store.sources WHERE file_id IN (?, ?) ORDER BY 1",
                [first, second]).fetchall()]
        remove_source(con, first)
        assert con.execute("SELECT DISTINCT file_id FROM store.gpu_counters").fetchall() == [(second,)]
    finally:
        con.close()


def test_every_table_with_a_file_id_is_audited(sound):
    """_stored_rows covers every store table with a file_id (new tables included)."""
    con = duckdb.connect(str(sound), read_only=True)
    try:
        assert check_warehouse(con) == []
        with_file_id = {t for (t,) in con.execute(
            "SELECT DISTINCT table_name FROM duckdb_columns() WHERE schema_name = 'store' "
            "AND column_name = 'file_id' AND table_name <> 'sources'").fetchall()}
        audited = {t for (t,) in con.execute(
            "SELECT DISTINCT table_name FROM _stored_rows").fetchall()}
        filled = {t for t in with_file_id
                  if con.execute(f"SELECT count(*) FROM store.{t}").fetchall()[0][0]}
        assert filled and audited == filled  # an empty table has no rows to list
    finally:
        con.close()


def test_check_has_help():
    result = runner.invoke(app, ["check", "--help"])
    assert result.exit_code == 0 and "--db" in result.output and "--wait" in result.output
