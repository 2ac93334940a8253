"""nsys CUDA synchronization rows are stored as gpu_syncs and OS runtime calls as os_calls, with
the numbers read straight from the raw SQLite tables here; an export holding only OS runtime
data is accepted."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

import tracewh
from tracewh.ingest import ingest_paths

KINDS = {1: "Event Sync", 2: "Stream Wait Event", 3: "Stream Sync", 4: "Context Sync"}


def raw(path, sql):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def ingested(tmp_path, path):
    con = tracewh.connect(tmp_path / "wh.duckdb")
    results = ingest_paths(con, [path], run="r")
    assert [r.status for r in results] == ["ingested"], results[0].message
    return con


@pytest.mark.parametrize("export", ["nsys/nsys-2021/report1.sqlite", "nsys/nsys-2024.1/report1.sqlite",
                                    "nsys/nsys-ai/mfu_2gpu_before.sqlite"])
def test_synchronization_rows_become_gpu_syncs(shared_data, tmp_path, export):
    path = shared_data / export
    expected = {(KINDS[kind], n, ns, streams) for kind, n, ns, streams in raw(path, """
        SELECT syncType, count(*), sum("end" - start), count(nullif(streamId, 4294967295))
        FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION GROUP BY syncType""")}
    con = ingested(tmp_path, path)
    got = set(con.execute("SELECT sync_kind, count(*), sum(dur_ns), count(stream_id) "
                          "FROM gpu_syncs GROUP BY ALL").fetchall())
    assert got == expected and sum(n for _, n, _, _ in got) >= 18
    # each names the runtime call that waited
    assert con.execute("SELECT count(*) FROM gpu_syncs WHERE api_name IS NULL").fetchone() == (0,)
    con.close()


OSRT_SQL = """SELECT s.value, count(*), sum(o."end" - o.start) FROM OSRT_API o
              JOIN StringIds s ON s.id = o.nameId GROUP BY s.value"""


def test_os_runtime_calls_become_os_calls(shared_data, tmp_path):
    path = shared_data / "nsys/nsys-2021/report1.sqlite"
    expected = set(raw(path, OSRT_SQL))
    con = ingested(tmp_path, path)
    got = set(con.execute("SELECT name, count(*), sum(dur_ns) FROM os_calls GROUP BY ALL").fetchall())
    assert got == expected and sum(n for _, n, _ in got) == 12492
    con.close()


def test_an_export_of_os_runtime_calls_alone_is_accepted(shared_data, tmp_path):
    path = tmp_path / "osrt_only.sqlite"
    shutil.copy(shared_data / "nsys/nsys-2021/report1.sqlite", path)
    db = sqlite3.connect(path)
    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                               "AND name LIKE 'CUPTI_ACTIVITY_KIND_%'").fetchall():
        db.execute(f"DELETE FROM {table}")
    db.commit()
    db.close()
    expected = set(raw(path, OSRT_SQL))
    con = ingested(tmp_path, path)
    assert set(con.execute("SELECT name, count(*), sum(dur_ns) FROM os_calls GROUP BY ALL")
               .fetchall()) == expected
    assert con.execute("SELECT count(*) FROM ranks").fetchone() == (1,)
    con.close()
