"""A full or read-only disk on the paths that still masked it (issue 42, item 3): `tracewh
upgrade` of an older warehouse on a full disk, `ingest --log` into a full disk, and a chrome
trace written into a read-only folder. Each is the one storage line naming the target, on a
real tmpfs this test mounts (root only); the same command succeeds once space is freed."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pytest

import tracewh
from tracewh.resources import sql_dir

TRACEWH = [sys.executable, "-m", "tracewh.cli"]
KINETO = sql_dir().parent / "sample_db" / "traces" / "fsdp_4ranks_kineto"
FULL = ("no space left on device - free space there, or write somewhere else, and run it again")


def tracewh_process(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*TRACEWH, *args], capture_output=True, text=True, timeout=600)


def one_error_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("Error")]
    assert len(lines) == 1, done.stderr
    return lines[0]


@contextmanager
def tmpfs(folder: Path, options: str):
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def fill(folder: Path, leave_kb: int) -> Path:
    """A file taking all the space of `folder`'s file system but `leave_kb`."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0" * 4096)
        except OSError:
            pass
        out.truncate(max(0, out.tell() - leave_kb * 1024))
    return filler


def make_old(db: Path, how: str) -> None:
    """Take a warehouse back to what an older tracewh left: a migration not applied yet (its
    tables absent), or views another version installed."""
    with duckdb.connect(str(db)) as raw:
        if how == "migration":
            raw.execute("DROP TABLE store.nic_metrics")
            raw.execute("DROP TABLE store.gpu_metrics")
            raw.execute("DELETE FROM store.schema_migrations WHERE version = 19")
        else:
            raw.execute("UPDATE store.meta SET value = 'older' WHERE key = 'views_checksum'")


@pytest.mark.parametrize("how", ["migration", "views"])
def test_upgrade_on_a_full_disk_is_the_storage_line(tmp_path, how):
    with tmpfs(tmp_path / "disk", "size=10m") as disk:
        db = disk / "wh.duckdb"
        assert tracewh_process("ingest", "--quiet", "--db", str(db), str(KINETO)).returncode == 0
        make_old(db, how)
        filler = fill(disk, 0)
        line = one_error_line(tracewh_process("upgrade", "--db", str(db)))
        assert line == f"Error: {db}: cannot upgrade the warehouse: {FULL}"
        filler.unlink()
        done = tracewh_process("upgrade", "--db", str(db))
        assert done.returncode == 0, done.stderr
        con = tracewh.connect(db, read_only=True)
        try:
            assert con.execute("SELECT count(*) FROM store.schema_migrations WHERE version = 19"
                               ).fetchall() == [(1,)]
            assert con.execute("SELECT count(*) FROM sources").fetchall() == [(4,)]
        finally:
            con.close()


def write_log(path: Path, steps: int) -> None:
    """DeepSpeed timer lines, one a step (65 bytes each)."""
    with path.open("w") as out:
        for step in range(1, steps + 1):
            hh, rest = divmod(step, 3600)
            out.write(f"[2024-03-28 {hh:02d}:{rest // 60:02d}:{rest % 60:02d},862] [INFO] "
                      f"[logging.py:96:log_dist] [Rank 0] time (ms) | fwd: {1000 + step % 97}.5 | "
                      f"bwd: {2000 + step % 89}.1 | step: {3000 + step % 101}.9\n")


def test_ingest_log_on_a_full_disk_is_the_storage_line_once(tmp_path):
    """The disk fills while the second log is written, the first one stored: said once (the
    run notes after it read a warehouse DuckDB had given up on: a second line)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    write_log(logs / "a.log", 100)
    write_log(logs / "b.log", 40_000)
    with tmpfs(tmp_path / "disk", "size=10m") as disk:
        db = disk / "wh.duckdb"
        assert tracewh_process("ingest", "--quiet", "--db", str(db), str(KINETO)).returncode == 0
        filler = fill(disk, 600)
        line = one_error_line(tracewh_process("ingest", "--db", str(db), "--log", str(logs)))
        assert line.startswith(f"Error: {db}: no space left on device while writing "
                               f"{logs / 'b.log'} - "), line
        filler.unlink()
        done = tracewh_process("ingest", "--quiet", "--db", str(db), "--log", str(logs))
        assert done.returncode == 0, done.stderr
        con = tracewh.connect(db, read_only=True)
        try:
            assert con.execute("SELECT run_id, count(*) FROM log_timers WHERE timer = 'fwd' "
                               "GROUP BY ALL ORDER BY 1").fetchall() == [("a", 100), ("b", 40_000)]
        finally:
            con.close()


def test_chrome_trace_into_a_read_only_folder_names_the_target(tmp_path):
    db = tmp_path / "wh.duckdb"
    assert tracewh_process("ingest", "--quiet", "--db", str(db), str(KINETO)).returncode == 0
    with tmpfs(tmp_path / "ro", "size=1m,ro") as folder:
        target = folder / "job.trace.json"
        line = one_error_line(tracewh_process("export", str(target), "--format", "chrome-trace",
                                              "--db", str(db)))
        assert line == (f"Error: {target}: cannot write the trace: read-only file system - "
                        "write somewhere writable")
        assert os.listdir(folder) == []
