"""The shapes of the kernel-launching ops stored at ingest (migration 0016, sql/op_shapes_add.sql)
give exactly what the performance models give when they parse cpu_ops.args at query time; rows
made by another version of the script are made again when the warehouse is opened for writing,
never by a read-only open; they go with their source."""

from __future__ import annotations

import pytest

import tracewh
from tracewh.errors import TracewhError
from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job
from tracewh.ingest import ingest_paths, remove_source
from tracewh import warehouse
from tracewh.store import derive

# the models evaluated on every op at query time, from its args (the perf_ops view before 0016)
AT_QUERY_TIME = """
WITH shaped AS MATERIALIZED (
    SELECT o.run_id, o.rank, o.external_id, o.name, perf_shapes(o.args) AS s
    FROM store.cpu_ops o
    SEMI JOIN (SELECT DISTINCT file_id, rank, external_id FROM store.kernels) k
        ON k.file_id = o.file_id AND k.rank = o.rank AND k.external_id = o.external_id
    WHERE o.args LIKE '%"Input Dims"%'
)
SELECT run_id, rank, external_id, name, CAST(s.dims AS VARCHAR), CAST(s.types AS VARCHAR),
       CAST(s.concrete AS VARCHAR), m.family, m.dtype, m.flops, m.bytes
FROM (SELECT *, perf_model(name, s.dims, s.types, s.concrete) AS m FROM shaped)
WHERE m IS NOT NULL
"""
STORED = """
SELECT run_id, rank, external_id, name, input_dims, input_types, concrete_inputs, family, dtype,
       flops, bytes
FROM perf_ops
"""
COUNTS = ("SELECT (SELECT count(*) FROM store.shaped_ops), (SELECT count(*) FROM store.op_shapes), "
          "(SELECT count(*) FROM store.shape_sources)")


@pytest.fixture
def db(tmp_path):
    generate_kineto_job(tmp_path / "traces", KinetoJobSpec(world_size=2, iterations=2, layers=1,
                                                           seed=7))
    path = tmp_path / "wh.duckdb"
    with tracewh.connect(path) as con:
        results = ingest_paths(con, [tmp_path / "traces"], jobs=1)
        assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    return path


def _sorted(con, sql: str) -> list[tuple]:
    return sorted(con.execute(sql).fetchall(), key=str)


def test_stored_shapes_give_what_the_models_give_on_the_args(db):
    with tracewh.connect(db, read_only=True) as con:
        expected = _sorted(con, AT_QUERY_TIME)
        assert len(expected) > 20 and {r[7] for r in expected} >= {"GEMM", "elementwise_binary"}
        assert _sorted(con, STORED) == expected
        # each distinct shape once: far fewer than the ops
        shapes, ops = con.execute("SELECT count(*), (SELECT count(*) FROM store.shaped_ops) "
                                  "FROM store.op_shapes").fetchall()[0]
        assert 0 < shapes < ops / 4


def test_rows_of_another_script_version_are_made_again_on_open_for_writing(db):
    with tracewh.connect(db) as con:
        before = _sorted(con, STORED)
        # as an older script would have left them: other rows, another checksum
        con.execute("DELETE FROM store.shaped_ops WHERE rank = 1")
        con.execute("UPDATE store.meta SET value = 'older' WHERE key = 'derive:op_shapes'")
    with pytest.raises(TracewhError, match="tracewh upgrade"):
        warehouse.open_read_only(db)  # a read-only command never refills
    with warehouse.connect(db, read_only=True, upgrade=False) as con:
        assert _sorted(con, STORED) != before  # left as it was
    with tracewh.connect(db) as con:
        assert _sorted(con, STORED) == before
        assert derive.stale(con) == []


def test_the_rows_go_with_their_source(db):
    with tracewh.connect(db) as con:
        sources = [r[0] for r in con.execute("SELECT file_id FROM store.sources").fetchall()]
        assert all(n > 0 for n in con.execute(COUNTS).fetchall()[0])
        remove_source(con, sources[0])
        assert con.execute("SELECT count(DISTINCT file_id) FROM store.shaped_ops").fetchall() == [(1,)]
        remove_source(con, sources[1])
        assert con.execute(COUNTS).fetchall() == [(0, 0, 0)]


def test_a_source_whose_ops_have_no_args_records_no_shapes(tmp_path):
    # CPU ops without any args (a trace or a copy that kept none): not a NOT NULL failure
    con = tracewh.connect(tmp_path / "w.duckdb")
    con.execute("INSERT INTO store.cpu_ops BY NAME SELECT 'r' AS run_id, 0 AS rank, 9 AS file_id, "
                "9 * 4294967296 AS op_id, 1 AS pid, 1 AS tid, 10 AS start_ns, 20 AS end_ns, "
                "'aten::mm' AS name, NULL AS args")
    derive.fill(con, 9, 9)
    assert con.execute("SELECT file_id, shapes_recorded FROM store.shape_sources").fetchall() == [(9, False)]
    assert con.execute("SELECT count(*) FROM store.shaped_ops").fetchall() == [(0,)]
