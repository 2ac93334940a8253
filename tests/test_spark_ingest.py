"""`tracewh ingest --engine spark`: the lake Spark's executors write from the files equals, view by
view (rows and a checksum of every row, tracewh.lake.lake_checksums), the lake `tracewh ingest`
+ `tracewh export` make of the same files; a killed Spark ingest leaves the lake as it was, and
the same command again completes it.

The default takes a few real traces of each kind (Kineto of two eras, an nsys export with two
processes); TRACEWH_SPARK_ALL=1 takes every real trace of ../shared/data."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tracewh.cli import app
from tracewh.lake import lake_checksums
from tracewh.spark import spark_missing, spark_session
from tracewh.spark_ingest import FILES, ingest_lake

runner = CliRunner()
MISSING = spark_missing()
pytestmark = [pytest.mark.spark,
              pytest.mark.skipif(MISSING is not None, reason=f"Spark unavailable: {MISSING}")]
ALL = os.environ.get("TRACEWH_SPARK_ALL") == "1"

# small and of every kind: Kineto of 2024+ (2 ranks) and of 2023 sampled (2 ranks), nsys 2026
# with two processes in one report (ranks in process order)
FEW = ["kineto/generated", "kineto/hta/trace_filter", "nsys/nsys-ai/mock.sqlite"]


@pytest.fixture(scope="module")
def spark():
    session = spark_session("local[2]", shuffle_partitions=2, app_name="tracewh-test-ingest")
    yield session
    session.stop()


def _reference(tmp: Path, paths: list[Path]) -> dict:
    """The checksums of the lake `tracewh ingest` + `tracewh export` make of `paths`."""
    db = tmp / "reference.duckdb"
    result = runner.invoke(app, ["ingest", *map(str, paths), "--db", str(db), "-q"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["export", str(tmp / "reference"), "--db", str(db)])
    assert result.exit_code == 0, result.output
    return lake_checksums(tmp / "reference")


def _assert_same_lake(want: dict, lake: Path) -> None:
    got = lake_checksums(lake)
    assert sorted(got) == sorted(want)
    differ = {view: (want[view], got[view]) for view in want if want[view] != got[view]}
    assert not differ, f"views that differ (rows, checksum) want/got: {differ}"


def test_spark_ingest_equals_ingest_and_export(spark, shared_data, tmp_path):
    paths = [shared_data] if ALL else [shared_data / p for p in FEW]
    want = _reference(tmp_path, paths)
    assert sum(rows for rows, _ in want.values()) > (500_000 if ALL else 20_000)
    lake = tmp_path / "lake"
    done = ingest_lake(spark, paths, lake)
    assert not [r.message for r in done.results if r.status == "failed"]
    _assert_same_lake(want, lake)
    # the same files again: nothing decoded, the lake untouched
    manifest = (lake / "manifest.json").read_bytes()
    again = ingest_lake(spark, paths, lake)
    assert {r.status for r in again.results} == {"skipped"} and again.decoded == 0
    assert (lake / "manifest.json").read_bytes() == manifest


def test_rank_taken_by_an_earlier_file_fails_alone(spark, shared_data, tmp_path):
    """Two Kineto files of one run claiming rank 0 (one by its file name, one alone without a
    rank): the second fails with ingest's own line, the first lands, as in `tracewh ingest`."""
    run = tmp_path / "traces"
    run.mkdir()
    shutil.copy(shared_data / "kineto/generated/rank-0.json", run / "rank0.json")
    shutil.copy(shared_data / "kineto/hta/rank_unavailable/rank_not_found.json.gz",
                run / "rank_0_again.json.gz")  # copies: discovery reads a link's target name
    db = tmp_path / "w.duckdb"
    result = runner.invoke(app, ["ingest", str(run), "--db", str(db), "-q"])
    assert result.exit_code == 1
    runner.invoke(app, ["export", str(tmp_path / "reference"), "--db", str(db)])
    done = ingest_lake(spark, [run], tmp_path / "lake")
    failed = [r for r in done.results if r.status == "failed"]
    assert len(failed) == 1 and failed[0].path.name == "rank_0_again.json.gz"
    assert "rank 0 (from filename) is already taken in run 'traces' by" in failed[0].message
    assert done.decoded == 3  # both, then the second again once the first's rank was known
    _assert_same_lake(lake_checksums(tmp_path / "reference"), tmp_path / "lake")


def test_killed_spark_ingest_leaves_the_lake_and_a_rerun_completes_it(spark, shared_data,
                                                                        tmp_path):
    first = [shared_data / "kineto/generated"]
    more = first + [shared_data / "kineto/hta/trace_filter", shared_data / "nsys/nsys-ai/mock.sqlite"]
    lake = tmp_path / "lake"
    ingest_lake(spark, first, lake)
    before = lake_checksums(lake)
    manifest = (lake / "manifest.json").read_bytes()
    known = set(os.listdir(lake / FILES))
    command = [str(Path(sys.executable).with_name("tracewh")), "ingest", *map(str, more), "--engine", "spark",
               "--lake", str(lake), "--master", "local[1]", "-q"]
    process = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300
        while not set(os.listdir(lake / FILES)) - known:  # a new file decoded: kill it there
            assert process.poll() is None, process.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "no file decoded in 300 s"
            time.sleep(0.2)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert (lake / "manifest.json").read_bytes() == manifest
    assert lake_checksums(lake) == before
    done = ingest_lake(spark, more, lake)
    assert [r.status for r in done.results].count("skipped") == 2  # the first ingest's files
    assert done.decoded < 4  # the file decoded before the kill was not decoded again
    _assert_same_lake(_reference(tmp_path, more), lake)
