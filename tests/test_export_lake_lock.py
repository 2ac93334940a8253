"""Issue 41: one export writes a lake at a time, and the manifest vouches only for what is on disk.

Two `tracewh export --force` into one lake at once, through the real CLI, with varied delays:
the lake's rows (Parquet footers) equal the manifest's and the warehouse's every time, and the
export that came second either waited for the lake or said it was busy, naming the first's pid.
TRACEWH_LAKE_TRIALS sets the number of trials (3 by default; the issue's 10 take ~3 minutes).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

import tracewh
from tracewh.export import lake_views
from tracewh.resources import sql_dir

SAMPLE_DB = sql_dir().parent / "sample_db" / "sample.duckdb"
TRIALS = int(os.environ.get("TRACEWH_LAKE_TRIALS", "3"))
DELAYS = [0.0, 0.4, 1.0, 0.15, 1.5, 0.7, 0.05, 1.2, 0.3, 0.9]  # seconds between the two starts


def export(lake, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tracewh.cli", "export", str(lake), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "300"})


@pytest.fixture(scope="module")
def warehouse_rows():
    """Rows per (run, view) in the sample warehouse, each view counted by DuckDB."""
    con = tracewh.connect(SAMPLE_DB, read_only=True)
    rows = {}
    for view in lake_views(con):
        for run, count in con.execute(f'SELECT run_id, count(*) FROM "{view}" GROUP BY 1').fetchall():
            rows[(run, view)] = count
    con.close()
    return rows


def lake_rows(lake) -> dict:
    """Rows per (run, view) in the lake's files, read from their footers, not from the manifest."""
    rows = {}
    for path in lake.glob("*/run_id=*/**/*.parquet"):
        run = path.relative_to(lake).parts[1].removeprefix("run_id=")
        if run != "__empty__":
            key = (run, path.relative_to(lake).parts[0])
            rows[key] = rows.get(key, 0) + pq.read_metadata(path).num_rows
    return rows


def manifest_rows(lake) -> dict:
    manifest = json.loads((lake / "manifest.json").read_text())
    return {(run, view): n for run, info in manifest["runs"].items()
            for view, n in info["rows"].items() if n}


@pytest.mark.parametrize("trial", range(TRIALS))
def test_two_exports_at_once_leave_a_lake_as_its_manifest_says(tmp_path, warehouse_rows, trial):
    lake = tmp_path / "lake"
    wait = ["--wait", "0"] if trial % 2 else ["--wait", "300"]  # odd trials: the second is told
    first = export(lake, "--force", "--db", str(SAMPLE_DB))
    time.sleep(DELAYS[trial % len(DELAYS)])
    second = export(lake, "--force", "--db", str(SAMPLE_DB), *wait)
    results = {p.pid: (p.wait(timeout=600), p.stderr.read()) for p in (first, second)}
    (a, (code_a, err_a)), (b, (code_b, err_b)) = results.items()
    waited = [pid for pid, (code, err) in results.items()
              if code == 0 and "waiting for the lake" in err]
    busy = [pid for pid, (code, err) in results.items()
            if code == 1 and "lake busy - held by another tracewh, pid" in err]
    assert code_a == 0 or code_b == 0, (err_a, err_b)
    # one ran alone; the other waited (both exit 0) or said busy, naming the first's pid
    assert len(waited) + len(busy) == 1, (err_a, err_b)
    other = b if (waited + busy)[0] == a else a
    assert f"pid {other}" in results[(waited + busy)[0]][1]
    if busy:
        assert [line for line in results[busy[0]][1].splitlines() if line.strip()] == \
            [f"Error: {lake}: lake busy - held by another tracewh, pid {other}; retry when it "
             "ends, or give --wait SECONDS to wait for it"]
    assert lake_rows(lake) == manifest_rows(lake) == warehouse_rows
    check = subprocess.run([sys.executable, "-m", "tracewh.cli", "export", "--check", str(lake)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert f"({sum(warehouse_rows.values()):,})" in check.stderr


def test_a_killed_export_leaves_its_lock_to_the_next_with_a_note(tmp_path, warehouse_rows):
    lake = tmp_path / "lake"
    killed = export(lake, "--db", str(SAMPLE_DB))
    lock = lake / ".tracewh.lock"
    deadline = time.monotonic() + 60
    while not (lock.exists() and lock.read_text().strip() == str(killed.pid)):
        assert time.monotonic() < deadline and killed.poll() is None
        time.sleep(0.02)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    again = export(lake, "--db", str(SAMPLE_DB), "--wait", "0")
    code, err = again.wait(timeout=600), again.stderr.read()
    assert code == 0, err
    notes = [line for line in err.splitlines() if "took over" in line]
    assert notes == [f"{lake}: took over the lake lock of pid {killed.pid}, which ended without "
                     "releasing it"]
    assert lake_rows(lake) == manifest_rows(lake) == warehouse_rows
    assert not lock.exists()  # released cleanly: nothing for the next to take over


def test_check_names_a_deleted_and_a_truncated_part_file_in_a_line_each(tmp_path, warehouse_rows):
    lake = tmp_path / "lake"
    done = export(lake, "--db", str(SAMPLE_DB))
    assert done.wait(timeout=600) == 0, done.stderr.read()
    deleted = lake / "kernels" / "run_id=ddp_4ranks" / "part_0.parquet"
    truncated = lake / "cpu_ops" / "run_id=fsdp_4ranks_kineto" / "part_0.parquet"
    deleted.unlink()
    truncated.write_bytes(truncated.read_bytes()[:-100])
    check = subprocess.run([sys.executable, "-m", "tracewh.cli", "export", "--check", str(lake)],
                           capture_output=True, text=True, env={**os.environ, "COLUMNS": "300"})
    assert check.returncode == 1
    problems = [line for line in check.stderr.splitlines() if line.startswith("Problem:")]
    kernels = warehouse_rows[("ddp_4ranks", "kernels")]
    cpu_ops = warehouse_rows[("fsdp_4ranks_kineto", "cpu_ops")]
    assert len(problems) == 2, check.stderr
    assert problems[0] == (f"Problem: run=ddp_4ranks view=kernels: the manifest says {kernels:,} "
                           "rows, the lake holds 0")
    assert problems[1].startswith(f"Problem: run=fsdp_4ranks_kineto view=cpu_ops: the manifest "
                                  f"says {cpu_ops:,} rows, the lake holds 0; cpu_ops/"
                                  "run_id=fsdp_4ranks_kineto/part_0.parquet unreadable (")
    assert check.stderr.splitlines()[-1] == f"{lake}: 2 problem(s)"
