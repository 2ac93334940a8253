"""Each NVTX range's name as an integer (migration 0023, sql/nvtx_name_ids.sql): every range's
name_id names its own text in nvtx_names, one id per name, on the sample (nsys and Kineto) and on
a real autograd-NVTX nsys export; the numbering does not depend on how many sources one ingest
wrote; and a warehouse stored before 0023 gets the ids, and the same answers, when upgraded."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb

import tracewh
from tracewh.ingest import ingest_paths

from test_stored_host_facts import EXPORT, SAMPLE, answers

METRICS = ("nvtx_summary", "nvtx_gpu_projection")


def check_ids(con) -> int:
    """Asserts the ids are a numbering of the names; returns how many names there are."""
    # a range whose name_id names another text in its run (or has none while its name is set)
    assert con.execute("""
        SELECT count(*) FROM nvtx_ranges r LEFT JOIN nvtx_names n USING (run_id, name_id)
        WHERE r.name IS DISTINCT FROM n.name OR (r.name IS NULL) <> (r.name_id IS NULL)
    """).fetchone() == (0,)
    names, ids, texts, rows, listed = con.execute("""
        SELECT count(DISTINCT (name_id, name)), count(DISTINCT name_id), count(DISTINCT name),
               count(*), (SELECT count(*) FROM (SELECT DISTINCT run_id, name_id FROM nvtx_ranges
                                                WHERE name_id IS NOT NULL))
        FROM nvtx_names""").fetchone()
    assert names == ids == texts  # one id per name, one name per id
    assert rows == listed  # a row per run and name the run's ranges hold, no more
    # numbered 1..n, by the first source that brought the name, then by text
    assert con.execute("SELECT min(name_id), max(name_id) FROM nvtx_names").fetchone() == (1, names)
    return names


def test_sample_name_ids_number_the_names(db_path):
    con = tracewh.connect(db_path)
    assert {r.status for r in ingest_paths(con, [SAMPLE], jobs=1)} == {"ingested"}
    names = check_ids(con)
    # the sample's nsys ranges and Kineto annotations both have names
    kinds = {k for (k,) in con.execute(
        "SELECT DISTINCT kind FROM nvtx_ranges WHERE name_id IS NOT NULL").fetchall()}
    con.close()
    assert {"push_pop", "annotation"} <= kinds
    assert names == len(set(_sample_names(db_path)))


def _sample_names(db_path) -> list[str]:
    with duckdb.connect(str(db_path), read_only=True) as raw:
        return [n for (n,) in raw.execute(
            "SELECT name FROM store.nvtx_ranges WHERE name IS NOT NULL").fetchall()]


def test_real_autograd_nvtx_export_name_ids(shared_data, db_path):
    con = tracewh.connect(db_path)
    results = ingest_paths(con, [shared_data / EXPORT], run="mfu")
    assert [r.status for r in results] == ["ingested"], results[0].message
    names = check_ids(con)
    # counted from the raw export: every distinct text of its marks and ranges
    raw = sqlite3.connect(f"file:{shared_data / EXPORT}?mode=ro", uri=True)
    (expected,) = raw.execute("""
        SELECT count(DISTINCT coalesce(e.text, s.value)) FROM NVTX_EVENTS e
        LEFT JOIN StringIds s ON s.id = e.textId
        WHERE e.eventType IN (34, 59, 60)""").fetchone()
    raw.close()
    con.close()
    assert names == expected


MIXED = ("nsys/nsys-ai/h100_2gpu_1s.sqlite", "nsys/nsys-ai/mfu_2gpu_before.sqlite",
         "kineto/hta/critical_path/alexnet")  # each with names of its own


def test_numbering_does_not_depend_on_how_sources_were_grouped(shared_data, tmp_path):
    """One ingest of three real traces (two small nsys exports written in one batch), and one
    ingest per trace in the same order, give each name the same id (by the first source that
    brought it, then by text)."""
    paths = []
    for n, rel in enumerate(MIXED):  # each its own run (by folder): their ranks would clash
        (tmp_path / f"run{n}").mkdir()
        paths.append(tmp_path / f"run{n}" / Path(rel).name)
        paths[-1].symlink_to(shared_data / rel)
    together = tracewh.connect(tmp_path / "together.duckdb")
    assert {r.status for r in ingest_paths(together, paths)} == {"ingested"}
    one_by_one = tracewh.connect(tmp_path / "one_by_one.duckdb")
    for path in paths:
        assert {r.status for r in ingest_paths(one_by_one, [path])} == {"ingested"}
    numbering = "SELECT DISTINCT name_id, name FROM nvtx_names ORDER BY name_id"
    first = together.execute(numbering).fetchall()
    assert first == one_by_one.execute(numbering).fetchall()
    check_ids(together)
    # each source brings names the ones before it had not (so a numbering by text alone differs)
    assert together.execute("""
        SELECT count(DISTINCT first_file) FROM (SELECT name_id, min(file_id) AS first_file
                                                FROM nvtx_ranges GROUP BY name_id)""").fetchone() == (3,)
    together.close()
    one_by_one.close()


def test_a_warehouse_stored_before_0023_gets_the_ids_and_the_same_answers(db_path):
    """The sample ingested by today's tracewh, then taken back to how a warehouse made before
    0023 holds it (no nvtx_names, no name_id, 0023 and the derive entry not recorded): opened for
    writing it is upgraded to the same ids and the same answers."""
    con = tracewh.connect(db_path)
    assert {r.status for r in ingest_paths(con, [SAMPLE], jobs=1)} == {"ingested"}
    numbering = con.execute("SELECT * FROM nvtx_names ORDER BY run_id, name_id").fetchall()
    expected = answers(con, METRICS)
    con.close()
    with duckdb.connect(str(db_path)) as raw:
        raw.execute("ALTER TABLE store.nvtx_ranges DROP COLUMN name_id")
        raw.execute("DROP TABLE store.nvtx_names")
        raw.execute("DELETE FROM store.schema_migrations WHERE version = 23")
        raw.execute("DELETE FROM store.meta WHERE key = 'derive:nvtx_names'")
    con = tracewh.connect(db_path)
    assert con.execute("SELECT count(*) FROM store.schema_migrations WHERE version = 23").fetchone() == (1,)
    assert con.execute("SELECT * FROM nvtx_names ORDER BY run_id, name_id").fetchall() == numbering
    check_ids(con)
    assert answers(con, METRICS) == expected
    con.close()
