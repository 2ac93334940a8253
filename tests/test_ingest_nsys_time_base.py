"""An nsys export's own time base (issue 34): `nsys export --ts-normalize=true` writes every time
as UTC epoch ns already (EXPORT_PARAM_TIME_NORMALIZE = true, EXPORT_CONFIG_TIME_SHIFT = the
session start), `--ts-shift` adds a shift, and the 2023.2 exporter names its metadata table
EXPORT_META_DATA. Whatever the export's flavour, the same job must land as the same UTC rows in
every view; sources.time_base and `tracewh check` say which base each file used."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import ingest_paths

JOB = dict(world_size=2, iterations=3, layers=1, seed=3, memory_usage=True, sync_stalls=True,
           checkpoint_every=2)
# run -> how the export was made (JobSpec fields)
FLAVOURS = {
    "plain": {},
    "normalised": dict(ts_normalize=True),
    "shifted": dict(ts_shift_ns=-1_234_567_891),
    "normalised_shifted": dict(ts_normalize=True, ts_shift_ns=5_000_000_007),
    "plain_2023_2": dict(export_meta_table="EXPORT_META_DATA"),
    "normalised_2023_2": dict(ts_normalize=True, export_meta_table="EXPORT_META_DATA"),
}
TIME_BASE = {
    "plain": "session start + session-relative ns",
    "normalised": "UTC ns as exported (--ts-normalize)",
    "shifted": "session start + session-relative ns, less the export's shift of -1234567891 ns",
    "normalised_shifted": "UTC ns as exported (--ts-normalize), less the export's shift of "
                          "5000000007 ns",
    "plain_2023_2": "session start + session-relative ns",
    "normalised_2023_2": "UTC ns as exported (--ts-normalize)",
}
# Columns that name the file or the moment of ingest, not what the trace says
FILE_COLUMNS = {"run_id", "file_id", "rank_key", "api_id", "path", "sha256", "ingested_at",
                "created_at", "root", "tool_version", "schema_version", "time_base"}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    """The same generated job exported in each flavour, each flavour its own run."""
    out = tmp_path_factory.mktemp("time_base")
    truths = {run: generate_job(out / run, JobSpec(**JOB, **spec)) for run, spec in FLAVOURS.items()}
    path = out / "wh.duckdb"
    con = tracewh.connect(path)
    for run in FLAVOURS:
        results = ingest_paths(con, [out / run], run=run, jobs=1)
        assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    yield con, truths, path
    con.close()


def _raw_kernel_start(path) -> int:
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    finally:
        con.close()


def test_the_generator_writes_each_flavour_as_nsys_export_does(warehouse):
    _, truths, _ = warehouse
    for run, spec in FLAVOURS.items():
        path = truths[run].files[0]
        start = truths[run].utc_epoch_ns[path]
        table = spec.get("export_meta_table", "META_DATA_EXPORT")
        con = sqlite3.connect(path)
        meta = dict(con.execute(f"SELECT name, value FROM {table}").fetchall())
        con.close()
        shift = (start if spec.get("ts_normalize") else 0) + spec.get("ts_shift_ns", 0)
        assert meta["EXPORT_PARAM_TIME_NORMALIZE"] == str(spec.get("ts_normalize", False)).lower()
        assert int(meta["EXPORT_CONFIG_TIME_SHIFT"]) == shift
        # every event time moved by the shift, nothing else
        plain = _raw_kernel_start(truths["plain"].files[0])
        assert _raw_kernel_start(path) == plain + shift, run


@pytest.mark.parametrize("run", [r for r in FLAVOURS if r != "plain"])
def test_every_view_holds_the_same_utc_rows_as_the_plain_export(warehouse, run):
    con, _, _ = warehouse
    views = [v for (v,) in con.execute(
        "SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal "
        "AND database_name = current_database() AND NOT starts_with(view_name, '_') "
        "ORDER BY view_name").fetchall()]
    compared = 0
    for view in views:
        columns = [c for (c, *_) in con.execute(f'DESCRIBE "{view}"').fetchall()]
        if "run_id" not in columns:
            continue
        kept = ", ".join(f'"{c}"' for c in columns if c not in FILE_COLUMNS)
        rows = {r: sorted(con.execute(f'SELECT {kept} FROM "{view}" WHERE run_id = ?',
                                      [r]).fetchall(), key=repr) for r in ("plain", run)}
        assert rows[run] == rows["plain"], view
        compared += bool(rows["plain"])
    assert compared >= 20  # kernels, nvtx_ranges, memory_events, os_calls, gpu_syncs, ...


def test_times_are_the_generators_utc_truth(warehouse):
    con, truths, _ = warehouse
    for run, truth in truths.items():
        for rank, kernels in truth.kernels.items():
            got = con.execute("SELECT start_ns, end_ns FROM kernels WHERE run_id = ? AND rank = ? "
                              "ORDER BY start_ns, end_ns", [run, rank]).fetchall()
            assert got == sorted((k.start_ns, k.end_ns) for k in kernels), (run, rank)


def test_sources_and_check_say_which_time_base_each_file_used(warehouse, tmp_path):
    con, truths, path = warehouse
    got = dict(con.execute("SELECT run_id, any_value(time_base) FROM sources GROUP BY run_id "
                           "HAVING count(DISTINCT time_base) = 1").fetchall())
    assert got == TIME_BASE
    origins = dict(con.execute("SELECT path, origin_ns FROM sources").fetchall())
    for truth in truths.values():  # the session start, whatever the flavour
        assert {origins[str(f.resolve())] for f in truth.files} == \
            {truth.utc_epoch_ns[f] for f in truth.files}
    assert "approximate" not in " ".join(
        w or "" for (w,) in con.execute("SELECT warnings FROM sources").fetchall())
    con.execute("CHECKPOINT")
    copy = tmp_path / "copy.duckdb"  # the fixture's connection holds the file
    shutil.copyfile(path, copy)
    result = CliRunner().invoke(app, ["check", "--db", str(copy)])
    assert result.exit_code == 0, result.stderr
    assert ("time bases: 4 UTC ns as exported (--ts-normalize); 2 UTC ns as exported "
            "(--ts-normalize), less the export's shift of 5000000007 ns; 4 session start + "
            "session-relative ns; 2 session start + session-relative ns, less the export's shift "
            "of -1234567891 ns") in " ".join(result.stderr.split())


def test_a_normalised_export_without_its_session_start_keeps_its_utc_times(warehouse, tmp_path):
    # the shift (EXPORT_CONFIG_TIME_SHIFT) is the session start of a normalised export
    con, truths, _ = warehouse
    for source in truths["normalised"].files:
        copy = tmp_path / "cut" / source.name
        copy.parent.mkdir(exist_ok=True)
        shutil.copyfile(source, copy)
        raw = sqlite3.connect(copy)
        raw.execute("DROP TABLE TARGET_INFO_SESSION_START_TIME")
        raw.commit()
        raw.close()
    local = tracewh.connect(tmp_path / "cut.duckdb")
    try:
        results = ingest_paths(local, [tmp_path / "cut"], run="cut", jobs=1)
        assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
        want = con.execute("SELECT rank, start_ns, end_ns, name FROM kernels WHERE run_id = "
                           "'normalised' ORDER BY ALL").fetchall()
        assert local.execute("SELECT rank, start_ns, end_ns, name FROM kernels "
                             "ORDER BY ALL").fetchall() == want
        assert {b for (b,) in local.execute("SELECT time_base FROM sources").fetchall()} == {
            TIME_BASE["normalised"]}
    finally:
        local.close()

