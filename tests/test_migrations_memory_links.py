"""What made each allocation (memory_events.cpu_op_id, nvtx_range_id) on traces whose answer is
known by hand, at ingest and, through migration 0015, on rows stored before the columns were."""

from __future__ import annotations

import duckdb
import pytest

import tracewh
from tracewh.generate.kineto import MemoryEvent, write_memory_trace
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import ingest_paths

US = 1_000
BASE = 1_700_000_000_000_000_000
STEPS = [(1, 1 * US, 100 * US), (2, 100 * US, 200 * US)]
# aten::view ends as the event at 10 us happens (it no longer holds it) and aten::empty as the
# one at 125 us does (aten::linear, around it, still holds that one)
OPS = [("aten::view", 5 * US, 10 * US), ("aten::zeros", 15 * US, 25 * US),
       ("aten::linear", 100 * US, 140 * US), ("aten::empty", 115 * US, 125 * US)]
EVENTS = [MemoryEvent(t * US, size, address) for t, size, address in (
    (5, 100, 0xA0), (10, -100, 0xA0), (20, 300, 0xA1), (30, -300, 0xA1),
    (110, 50, 0xA2), (120, 70, 0xA3), (125, -70, 0xA3), (130, -50, 0xA2))]
BY_HAND = [(5, "aten::view", "ProfilerStep#1"), (10, None, "ProfilerStep#1"),
           (20, "aten::zeros", "ProfilerStep#1"), (30, None, "ProfilerStep#1"),
           (110, "aten::linear", "ProfilerStep#2"), (120, "aten::empty", "ProfilerStep#2"),
           (125, "aten::linear", "ProfilerStep#2"), (130, "aten::linear", "ProfilerStep#2")]
# nsys: the NVTX range of the CUDA call that made each event (tests/test_memory_nsys.py says why)
NSYS_PHASES = {8 << 20: "forward", -8 << 20: "backward", 12 << 20: "optimizer", -12 << 20: "optimizer"}

LINKS = """
SELECT m.run_id, m.start_ns, m.bytes, o.name, o.start_ns, n.name, n.start_ns
FROM memory_events m
LEFT JOIN cpu_ops o ON o.op_id = m.cpu_op_id
LEFT JOIN nvtx_ranges n ON n.file_id = m.file_id AND n.range_id = m.nvtx_range_id
ORDER BY ALL"""


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    folder = tmp_path_factory.mktemp("links")
    kineto = write_memory_trace(folder / "rank0.pt.trace.json", EVENTS, STEPS, OPS, base_ns=BASE)
    job = generate_job(folder / "nsys", JobSpec(world_size=1, iterations=2, layers=2,
                                                memory_usage=True))
    return kineto, job


def _ingest(con, traces) -> None:
    kineto, job = traces
    for paths, run in (([kineto], "kineto"), (job.files, "nsys")):
        assert [r.status for r in ingest_paths(con, paths, run=run)] == ["ingested"] * len(paths)


def _check_by_hand(con, job) -> None:
    got = con.execute("SELECT m.start_ns - ?, o.name, n.name FROM memory_events m "
                      "LEFT JOIN cpu_ops o ON o.op_id = m.cpu_op_id "
                      "LEFT JOIN nvtx_ranges n ON n.file_id = m.file_id AND n.range_id = m.nvtx_range_id "
                      "WHERE m.run_id = 'kineto' ORDER BY m.start_ns", [BASE]).fetchall()
    assert [(ns // US, op, annotation) for ns, op, annotation in got] == BY_HAND
    got = con.execute("SELECT m.start_ns, m.bytes, n.name, m.cpu_op_id FROM memory_events m "
                      "LEFT JOIN nvtx_ranges n ON n.file_id = m.file_id AND n.range_id = m.nvtx_range_id "
                      "WHERE m.run_id = 'nsys' ORDER BY m.start_ns").fetchall()
    assert got == [(e.start_ns, e.bytes, None if e.iteration is None else NSYS_PHASES[e.bytes], None)
                   for e in sorted(job.memory[0])]


def test_ingest_links_each_event_to_the_op_and_range_holding_it(traces, db_path):
    con = tracewh.connect(db_path)
    _ingest(con, traces)
    _check_by_hand(con, traces[1])
    # op ids: the file's id and the op's number in the file, unique
    assert con.execute("SELECT count(*), count(DISTINCT op_id), bool_and(op_id // 4294967296 = file_id) "
                       "FROM cpu_ops").fetchone() == (len(OPS), len(OPS), True)


def test_ids_outlive_the_removal_of_other_rows(traces, db_path):
    """op_id is stored, not the table's row number: removing rows (as `tracewh remove` does)
    leaves the other ops' ids, and the events' links to them, as they were."""
    con = tracewh.connect(db_path)
    _ingest(con, traces)
    ids = dict(con.execute("SELECT name, op_id FROM cpu_ops").fetchall())
    links = con.execute(LINKS).fetchall()
    con.execute("DELETE FROM store.cpu_ops WHERE name = 'aten::view'")
    ids.pop("aten::view")
    assert dict(con.execute("SELECT name, op_id FROM cpu_ops").fetchall()) == ids
    assert con.execute(LINKS).fetchall() == [
        row if row[3] != "aten::view" else (*row[:3], None, None, *row[5:]) for row in links]


def test_migration_15_fills_rows_stored_before_it(traces, db_path):
    """The same traces ingested by today's tracewh, then taken back to how a warehouse made before
    0015 holds them (without its columns, 0015 not applied): 0015 links them to the same ops and
    ranges when the warehouse is opened."""
    con = tracewh.connect(db_path)
    _ingest(con, traces)
    expected = con.execute(LINKS).fetchall()
    con.close()
    with duckdb.connect(str(db_path)) as raw:
        for table, column in (("cpu_ops", "op_id"), ("memory_events", "cpu_op_id"),
                              ("memory_events", "nvtx_range_id")):
            raw.execute(f"ALTER TABLE store.{table} DROP COLUMN {column}")
        raw.execute("DELETE FROM store.schema_migrations WHERE version = 15")
    con = tracewh.connect(db_path)
    assert con.execute("SELECT count(*) FROM store.schema_migrations WHERE version = 15").fetchone() == (1,)
    assert con.execute(LINKS).fetchall() == expected
    _check_by_hand(con, traces[1])
    assert con.execute("SELECT count(DISTINCT op_id), bool_and(op_id // 4294967296 = file_id) "
                       "FROM cpu_ops").fetchone() == (len(OPS), True)
