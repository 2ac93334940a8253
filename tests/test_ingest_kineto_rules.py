"""Kineto input as it really arrives: truncated, gzipped badly, sloppy JSON, ranks that clash."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.resources import sql_dir
from tracewh.sqlscript import set_variables
from tracewh.store.catalog import run_catalog_script

from test_ingest_rules import ingest, table_checksums

runner = CliRunner()
DLRM = "kineto/param/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json"


@pytest.fixture
def trace(shared_data, tmp_path) -> Path:
    target = tmp_path / "job" / "rank0.pt.trace.json"
    target.parent.mkdir()
    shutil.copy(shared_data / DLRM, target)
    return target


@pytest.mark.parametrize("case, message", [
    ("truncated", "truncated JSON"),
    ("truncated-gzip", "corrupt or truncated gzip"),
    ("gzip-of-garbage", "not valid JSON"),
    ("not-a-trace", "not a Chrome trace"),
    ("empty", "empty file"),
    ("no-events", "empty trace"),
])
def test_bad_trace_is_one_line_and_changes_nothing(db_path, trace, tmp_path, case, message):
    assert ingest(db_path, str(trace)).exit_code == 0
    before = table_checksums(db_path)
    text = trace.read_bytes()
    bad = tmp_path / "bad" / f"{case}.json"
    bad.parent.mkdir()
    if case == "truncated":
        bad.write_bytes(text[: len(text) * 2 // 3])
    elif case == "truncated-gzip":
        bad = bad.with_suffix(".json.gz")
        packed = gzip.compress(text)
        bad.write_bytes(packed[: len(packed) // 2])
    elif case == "gzip-of-garbage":
        bad = bad.with_suffix(".json.gz")
        bad.write_bytes(gzip.compress(b"\x00\x01garbage" * 100))
    elif case == "not-a-trace":
        bad.write_text(json.dumps({"name": "not a trace", "values": [1, 2, 3]}))
    elif case == "empty":
        bad.write_bytes(b"")
    else:
        bad.write_text(json.dumps({"schemaVersion": 1, "traceEvents": []}))
    result = ingest(db_path, str(bad))
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and str(bad) in errors[0] and message in errors[0], result.stderr
    assert table_checksums(db_path) == before


def test_sloppy_json_is_repaired_and_said_so(db_path, trace):
    text = trace.read_text()
    # an unescaped quote inside a name (pytorch#113001), a raw control character, invalid UTF-8
    text = text.replace('"name": "aten::mm"', '"name": "aten::mm("x", "y")"', 1)
    text = text.replace('"name": "aten::add_"', '"name": "aten::add_\x07"', 1)
    data = text.encode().replace(b'"name": "aten::zeros"', b'"name": "aten::zeros\xff"', 1)
    trace.write_bytes(data)
    result = ingest(db_path, str(trace))
    assert result.exit_code == 0, result.stderr
    con = tracewh.connect(db_path, read_only=True)
    warnings = con.execute("SELECT warnings FROM sources").fetchall()[0][0]
    for repair in ("invalid UTF-8", "control characters", "unescaped quotes"):
        assert repair in warnings
    assert con.execute("SELECT count(*) FROM cpu_ops WHERE name = 'aten::mm(\"x\", \"y\")'").fetchall()[0][0] == 1


def test_args_that_are_not_objects_stay_json_in_the_fast_path(db_path, trace):
    """Some profilers write an event's args as a bare string, list or number: DuckDB's reader
    takes the file all the same, and each such args is stored as the JSON it was."""
    doc = json.loads(trace.read_text())
    ops = [e for e in doc["traceEvents"] if e.get("cat") == "cpu_op"]
    for event, args in zip(ops, ["weird text", [1, 2], 7]):
        event["args"] = args
    trace.write_text(json.dumps(doc, indent=1))
    result = ingest(db_path, str(trace))
    assert result.exit_code == 0, result.stderr
    con = tracewh.connect(db_path, read_only=True)
    assert con.execute("SELECT metadata->>'$.reader' FROM sources").fetchall() == [("duckdb read_json",)]
    assert con.execute("SELECT count(*) FROM cpu_ops").fetchall() == [(len(ops),)]
    assert sorted(con.execute("SELECT args, external_id FROM cpu_ops WHERE NOT starts_with(args, '{')").fetchall()
                  ) == [('"weird text"', None), ("7", None), ("[1,2]", None)]


def test_an_event_larger_than_the_readers_object_size_is_stored_whole(db_path, trace):
    """read_json.sql gives DuckDB's reader maximum_object_size = 4 MB (its buffers grow with it;
    the largest event in the real traces is 7 kB): an event of several MB is stored whole all
    the same, whichever decoder takes the file."""
    doc = json.loads(trace.read_text())
    ops = [e for e in doc["traceEvents"] if e.get("cat") == "cpu_op"]
    ops[0]["args"]["Input Dims"] = [[3, 224, 224]] * 400_000  # 5.2 MB of JSON in one event
    trace.write_text(json.dumps(doc, indent=1))
    result = ingest(db_path, str(trace))
    assert result.exit_code == 0, result.stderr
    con = tracewh.connect(db_path, read_only=True)
    assert con.execute("SELECT count(*) FROM cpu_ops").fetchall() == [(len(ops),)]
    assert con.execute("SELECT json_array_length(args, '$.\"Input Dims\"') FROM cpu_ops "
                       "ORDER BY length(args) DESC LIMIT 1").fetchall() == [(400_000,)]


def test_two_files_claiming_one_rank_name_both(db_path, trace, shared_data):
    other = trace.parent / "copy.pt.trace.json"
    doc = json.loads((shared_data / DLRM.replace("worker0_step_12.1694128201545", "worker1_step_12.1694128201556")).read_text())
    doc["distributedInfo"]["rank"] = 0
    other.write_text(json.dumps(doc))
    result = ingest(db_path, str(trace.parent))
    assert result.exit_code == 1
    assert str(trace) in result.stderr and str(other) in result.stderr and "--rank-map" in result.stderr
    # the copy went in first (path order) as rank 0: re-ingest it under its real rank
    fixed = ingest(db_path, "--replace", "--rank-map", "copy.pt.trace.json=1", str(trace.parent))
    assert fixed.exit_code == 0, fixed.stderr
    con = tracewh.connect(db_path, read_only=True)
    assert con.execute("SELECT rank, rank_source FROM ranks ORDER BY rank").fetchall() == [
        (0, "distributedInfo"), (1, "rank-map")]


def rankless_pair(trace: Path) -> Path:
    """The trace's folder holding a.json and b.json: the trace twice, without distributedInfo."""
    folder = trace.parent
    for name in ("a.json", "b.json"):
        doc = json.loads(trace.read_text())
        del doc["distributedInfo"]
        (folder / name).write_text(json.dumps(doc) if name == "a.json" else json.dumps(doc, indent=1))
    trace.unlink()
    return folder


def test_rankless_files_sharing_a_folder_are_separate_runs(db_path, trace, tmp_path):
    # single-process captures side by side (three models profiled one after the other): nothing
    # ties them into one job, so each is its own run, and the user is told
    folder = rankless_pair(trace)
    result = runner.invoke(app, ["ingest", "--db", str(db_path), str(folder)])
    assert result.exit_code == 0, result.stderr
    assert f"run {folder.name!r}: 2 Kineto traces with no rank information are taken as " \
           "separate runs" in result.stderr
    con = tracewh.connect(db_path, read_only=True)
    assert con.execute("SELECT run_id, rank, rank_source FROM ranks ORDER BY 1").fetchall() == [
        (f"{folder.name}/a", 0, "default"), (f"{folder.name}/b", 0, "default")]
    con.close()


def test_rankless_files_put_in_one_run_need_a_rank_map(db_path, trace, tmp_path):
    folder = rankless_pair(trace)
    result = ingest(db_path, "--run", "job", str(folder))
    assert result.exit_code == 1 and "no rank in the trace" in result.stderr
    result = ingest(db_path, "--run", "job", "--rank-map", "a.json=0", "--rank-map", "b.json=1",
                    str(folder))
    assert result.exit_code == 0, result.stderr


def test_the_store_step_places_every_staged_column_or_stops(tmp_path):
    """sql/ingest/kineto/store.sql writes its INSERTs from the catalog: staged ids <x>_no become
    file_id * 2^32 + <x>_no, and a staged column no stored column takes is an error, not a
    silent loss."""
    store = sql_dir() / "ingest" / "kineto" / "store.sql"
    with tracewh.connect(tmp_path / "wh.duckdb") as con:
        con.execute("CREATE TEMP TABLE _kineto_cpu_ops AS SELECT 7 AS op_no, 2 AS parent_no, "
                    "'aten::mm' AS name, 10 AS start_ns, 20 AS end_ns, 1 AS tid")
        set_variables(con, run_id="r", rank=3, rank_source="filename", file_id=5)
        run_catalog_script(con, store)
        assert con.execute("SELECT run_id, rank, file_id, op_id, parent_id, name FROM "
                           "store.cpu_ops").fetchall() == [
            ("r", 3, 5, 5 * 2**32 + 7, 5 * 2**32 + 2, "aten::mm")]
        con.execute("CREATE TEMP TABLE _kineto_kernels AS SELECT 1 AS start_ns, 1 AS bogus")
        with pytest.raises(duckdb.Error, match="staged column _kineto_kernels.bogus fills no "
                                               "column of store.kernels"):
            run_catalog_script(con, store)
