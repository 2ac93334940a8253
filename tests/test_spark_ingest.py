"""`tracewh ingest --engine spark`: the lake Spark's executors write from the files equals, view by
view (rows and a checksum of every row, tracewh.lake.lake_checksums), the lake `tracewh ingest`
+ `tracewh export` make of the same files; a killed Spark ingest leaves the lake as it was, and
the same command again completes it.

The default takes a few real traces of each kind (Kineto of two eras, an nsys export with two
processes); TRACEWH_SPARK_ALL=1 takes every real trace of ../shared/data."""

from __future__ import annotations

import gzip
import os
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


def _reference(tmp: Path, paths: list[Path], exit_code: int = 0) -> dict:
    """The checksums of the lake `tracewh ingest` + `tracewh export` make of `paths`."""
    db = tmp / "reference.duckdb"
    result = runner.invoke(app, ["ingest", *map(str, paths), "--db", str(db), "-q"])
    assert result.exit_code == exit_code, result.output
    result = runner.invoke(app, ["export", str(tmp / "reference"), "--db", str(db)])
    assert result.exit_code == 0, result.output
    return lake_checksums(tmp / "reference")


def _assert_same_lake(want: dict, lake: Path) -> None:
    got = lake_checksums(lake)
    assert sorted(got) == sorted(want)
    differ = {view: (want[view], got[view]) for view in want if want[view] != got[view]}
    assert not differ, f"views that differ (rows, checksum) want/got: {differ}"


def _clashing_run(shared_data: Path, tmp: Path) -> Path:
    """A run of two Kineto files claiming rank 0 by their file names: a 2021 trace, then a 2023
    one (a newline added to each trace's text, so that neither is a copy of a file ingested
    beside them)."""
    run = tmp / "clash"
    run.mkdir()
    for source, name in (("kineto-legacy/resnet50_autograd_api_num_workers_0/"
                          "worker0.pt.trace.json.gz", "rank0.json.gz"),
                         ("hta/rank_unavailable/rank_not_found.json.gz", "rank0_again.json.gz")):
        text = gzip.decompress((shared_data / "kineto" / source).read_bytes())
        (run / name).write_bytes(gzip.compress(text + b"\n"))
    return run


def test_spark_ingest_equals_ingest_and_export(spark, shared_data, tmp_path):
    clash = _clashing_run(shared_data, tmp_path)
    paths = ([shared_data] if ALL else [shared_data / p for p in FEW]) + [clash]
    want = _reference(tmp_path, paths, exit_code=1)
    assert sum(rows for rows, _ in want.values()) > (500_000 if ALL else 20_000)
    lake = tmp_path / "lake"
    done = ingest_lake(spark, paths, lake)
    # the later file of the clash fails alone, with ingest's line, once the driver knows the
    # rank the earlier one took (it was decoded first without it, then again)
    failed = [r for r in done.results if r.status == "failed"]
    assert [r.path.name for r in failed] == ["rank0_again.json.gz"]
    assert "rank 0 (from filename) is already taken in run 'clash' by" in failed[0].message
    assert done.decoded >= len(done.results) + 1
    _assert_same_lake(want, lake)
    # the same files again: only the file that failed is decoded (and fails), the lake untouched
    manifest = (lake / "manifest.json").read_bytes()
    again = ingest_lake(spark, paths, lake)
    assert again.decoded == 1 and again.export is None
    assert [r.status for r in again.results].count("skipped") == len(done.results) - 1
    assert (lake / "manifest.json").read_bytes() == manifest


def test_killed_spark_ingest_leaves_the_lake_and_a_rerun_completes_it(spark, shared_data,
                                                                        tmp_path):
    first = [shared_data / "kineto/generated"]
    more = first + [shared_data / "kineto/hta/trace_filter",
                    shared_data / "nsys/nsys-ai/mock.sqlite"]  # 3 files more
    lake = tmp_path / "lake"
    ingest_lake(spark, first, lake)
    before = lake_checksums(lake)
    manifest = (lake / "manifest.json").read_bytes()

    def decoded() -> set[str]:  # the files whose fragments are whole (hidden: being written)
        return {name for name in os.listdir(lake / FILES) if not name.startswith(".")}

    known = decoded()
    command = [str(Path(sys.executable).with_name("tracewh")), "ingest", *map(str, more),
               "--engine", "spark", "--lake", str(lake), "--master", "local[1]", "-q"]
    process = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300
        while not decoded() - known:  # one file decoded on the executor: killed there
            assert process.poll() is None, process.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "no file decoded in 300 s"
            time.sleep(0.1)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert (lake / "manifest.json").read_bytes() == manifest
    assert lake_checksums(lake) == before
    whole = len(decoded() - known)
    assert 1 <= whole < 3
    done = ingest_lake(spark, more, lake)
    assert [r.status for r in done.results].count("skipped") == 2  # the first ingest's files
    assert done.decoded == 3 - whole  # what the killed ingest decoded is not decoded again
    _assert_same_lake(_reference(tmp_path, more), lake)
