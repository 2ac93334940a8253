"""The scratch files of a gzipped Kineto ingest (the trace inflated, its events cut out) do not
outlive a kill -9 (issue 42, item 4): the next ingest removes those of dead processes, and none
is left anywhere, TMPDIR or the warehouse's folder."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import tracewh

KERNELS = 300_000


def gzip_trace(path: Path) -> None:
    """A Kineto trace of KERNELS kernels on one stream (about 50 MB inflated)."""
    events = ",\n".join(
        f'{{"ph":"X","cat":"kernel","name":"k{i % 7}","pid":0,"tid":7,"ts":{1000 + 3 * i}.0,'
        f'"dur":2.0,"args":{{"stream":7,"device":0,"correlation":{i + 1}}}}}'
        for i in range(KERNELS))
    path.write_bytes(gzip.compress(
        ('{"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 1}, '
         f'"traceEvents": [\n{events}\n]}}\n').encode(), 1))


def scratch(*folders: Path) -> list[Path]:
    return [p for folder in folders for p in folder.rglob("tracewh-*") if p.is_file()]


def test_a_killed_gzip_ingest_leaves_no_scratch_file_after_the_next_one(tmp_path):
    job, tmpdir, db = tmp_path / "job", tmp_path / "tmpdir", tmp_path / "wh" / "wh.duckdb"
    job.mkdir()
    tmpdir.mkdir()
    gzip_trace(job / "rank0.json.gz")
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    command = [sys.executable, "-m", "tracewh.cli", "ingest", "--quiet", "--db", str(db), str(job)]
    killed = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not list(tmpdir.glob("tracewh-events-*")) and killed.poll() is None:
        assert time.monotonic() < deadline, "no events file was cut out"
        time.sleep(0.01)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert killed.returncode == -signal.SIGKILL
    left = scratch(tmpdir)
    assert any(p.name.startswith("tracewh-events-") for p in left), left  # what the kill left

    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert scratch(tmpdir, db.parent) == []
    con = tracewh.connect(db, read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM kernels").fetchall() == [(KERNELS,)]
    finally:
        con.close()
