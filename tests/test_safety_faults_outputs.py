"""Faults users meet outside ingest (issue 25): a full, read-only or missing place to write, a
busy or older warehouse, hostile or runaway queries, odd names. Each ends in one line naming the
path, what was being done and the fix, a non-zero exit and no traceback; nothing half-written
is left where a reader would take it for complete, and the same command succeeds once the fault
is gone.

Full and read-only file systems are small tmpfs mounts the tests make (root only).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

import tracewh
from tracewh import export as export_module
from tracewh.cli import app
from tracewh.export import MANIFEST, export_lake
from tracewh.guard import QueryRefused, check_query
from tracewh.resources import sql_dir

from peak_memory import run_cli_measured
from test_safety_concurrency import Holder

runner = CliRunner()
SAMPLE = sql_dir().parent / "sample_db" / "traces"
TRACEWH = [sys.executable, "-m", "tracewh.cli"]


def tracewh_process(*args: str, timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*TRACEWH, *args], capture_output=True, text=True, timeout=timeout,
                          **kwargs)


def one_line_error(stderr: str, *words: str) -> str:
    """The single error line of a failed command, which names `words`."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def failed_in_one_line(result, *words: str) -> str:
    assert result.exit_code == 1, (result.exit_code, result.stdout, result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return one_line_error(result.stderr, *words)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("faults") / "wh.duckdb"
    assert runner.invoke(app, ["ingest", "--quiet", "--db", str(db), str(SAMPLE)]).exit_code == 0
    return db


@pytest.fixture
def tmpfs(tmp_path):
    """mount(size, read_only=False) -> a folder on a tmpfs of that size; resize(size) later."""
    if os.geteuid() != 0:
        pytest.skip("full and read-only file systems are tmpfs mounts: needs root")
    mounted = []

    def mount(size: str, read_only: bool = False) -> Path:
        folder = tmp_path / f"mnt{len(mounted)}"
        folder.mkdir()
        options = f"size={size}" + (",ro" if read_only else "")
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        mounted.append(folder)
        return folder

    yield mount
    for folder in mounted:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def remount(folder: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(folder)], check=True)


def fill(folder: Path) -> None:
    """Take every free byte of the file system holding `folder`."""
    with open(folder / "filler", "wb") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


def check_clean(db: Path) -> None:
    result = runner.invoke(app, ["check", "--db", str(db)])
    assert result.exit_code == 0, result.stderr


# --- one error path -----------------------------------------------------------------------------

@pytest.mark.parametrize("code, words", [
    (errno.ENOSPC, "no space left on device - free space"),
    (errno.EROFS, "read-only file system - write somewhere writable"),
    (errno.EACCES, "permission denied - write where you may"),
    (errno.EIO, "input/output error - the disk or network file system failed"),
])
def test_a_storage_fault_is_one_line_with_path_operation_and_fix(code, words):
    from tracewh.errors import storage_fault

    fault = storage_fault(OSError(code, os.strerror(code), "/data/out.csv"), "write the result")
    assert str(fault).startswith(f"/data/out.csv: cannot write the result: {words}")
    # DuckDB gives the operating system's message in its text, without an errno
    text = f'IO Error: Could not write file "/data/lake/x.parquet": {os.strerror(code)}'
    fault = storage_fault(duckdb.IOException(text), "export the lake")
    assert str(fault).startswith(f"/data/lake/x.parquet: cannot export the lake: {words}")
    assert storage_fault(ValueError("Binder Error: no column x"), "export") is None


# (command, what it writes into the folder given as {out}, what a reader would take as done)
WRITERS = {
    "lake": (["export", "{out}/lake"], "lake/" + MANIFEST),
    "chrome-trace": (["export", "{out}/t.json", "--format", "chrome-trace", "--run",
                      "ddp_4ranks"], "t.json"),
    "report": (["report", "--out", "{out}/report", "--formats", "png"], "report/index.html"),
    "query-csv": (["query", "gpu_trace", "--format", "csv", "-o", "{out}/trace.csv"],
                  "trace.csv"),
    "sql-parquet": (["sql", "SELECT * FROM kernels", "--format", "parquet", "-o",
                     "{out}/k.parquet"], "k.parquet"),
}


@pytest.mark.parametrize("name", list(WRITERS))
def test_a_full_disk_ends_in_one_line_leaves_nothing_that_looks_done_and_a_retry_works(
        name, warehouse, tmpfs):
    args, done = WRITERS[name]
    out = tmpfs("16k")
    command = [a.replace("{out}", str(out)) for a in args] + ["--db", str(warehouse)]
    before = sha256(warehouse)
    result = runner.invoke(app, command)
    failed_in_one_line(result, str(out), "no space left on device", "free space")
    assert not (out / done).exists()
    assert not [p for p in out.rglob("*") if p.is_file() and p.stat().st_size == 0]
    assert not list(out.rglob(".tracewh-*")) and not list(out.rglob(".staging"))
    assert sha256(warehouse) == before
    check_clean(warehouse)
    remount(out, "size=64m")
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.stderr
    assert (out / done).is_file() and (out / done).stat().st_size > 0
    assert not list(out.rglob(".tracewh-*")) and not list(out.rglob(".staging"))


@pytest.mark.parametrize("name", list(WRITERS))
def test_a_read_only_place_ends_in_one_line(name, warehouse, tmpfs):
    args, _ = WRITERS[name]
    out = tmpfs("1m", read_only=True)
    command = [a.replace("{out}", str(out)) for a in args] + ["--db", str(warehouse)]
    failed_in_one_line(runner.invoke(app, command), str(out), "read-only file system")


def test_a_new_warehouse_on_a_full_or_read_only_file_system(tmpfs):
    full, read_only = tmpfs("64k"), tmpfs("1m", read_only=True)
    for folder, words in ((full, "no space left on device"), (read_only, "read-only file system")):
        db = folder / "new" / "wh.duckdb"
        result = runner.invoke(app, ["ingest", "--quiet", "--db", str(db), str(SAMPLE)])
        failed_in_one_line(result, str(db), "cannot create the warehouse", words)
        assert not db.exists() and not [p for p in folder.rglob("*") if p.is_file()]
    remount(full, "size=64m")
    db = full / "new" / "wh.duckdb"
    assert runner.invoke(app, ["ingest", "--quiet", "--db", str(db), str(SAMPLE)]).exit_code == 0
    check_clean(db)


def test_remove_on_a_full_disk_changes_nothing_and_works_once_there_is_room(warehouse, tmpfs):
    folder = tmpfs("32m")
    db = folder / "wh.duckdb"
    shutil.copy(warehouse, db)
    fill(folder)
    result = runner.invoke(app, ["remove", "--run", "ddp_4ranks", "--db", str(db)])
    failed_in_one_line(result, str(db), "no space left on device")
    (folder / "filler").unlink()
    check_clean(db)
    runs = runner.invoke(app, ["runs", "--db", str(db), "--format", "csv"]).stdout
    assert "ddp_4ranks" in runs
    assert runner.invoke(app, ["remove", "--run", "ddp_4ranks", "--db", str(db)]).exit_code == 0
    check_clean(db)


@pytest.mark.parametrize("fmt", ["csv", "table"])
def test_standard_output_on_dev_full_is_one_line(warehouse, fmt):
    with open("/dev/full", "w") as full:
        done = subprocess.run([*TRACEWH, "sql", "SELECT * FROM kernels", "--format", fmt,
                               "--db", str(warehouse)], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    assert done.returncode == 1
    one_line_error(done.stderr, "standard output", "no space left on device")


def test_output_into_a_missing_folder_names_it(warehouse, tmp_path):
    target = tmp_path / "missing" / "out.csv"
    result = runner.invoke(app, ["sql", "SELECT 1 AS x", "-f", "csv", "-o", str(target),
                                 "--db", str(warehouse)])
    failed_in_one_line(result, str(target), "no such file or folder")
    assert not target.parent.exists()


def test_a_variant_column_is_written_as_text(warehouse):
    result = runner.invoke(app, ["sql", "SELECT 7::VARIANT AS v, {'a': [1, 2]}::VARIANT AS w",
                                 "-f", "csv", "--db", str(warehouse)])
    if result.exit_code and "VARIANT" in result.stderr and "not exist" in result.stderr:
        pytest.skip("this DuckDB has no VARIANT type")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == ["v,w", "7,\"{'a': [1, 2]}\""]


def test_a_damaged_warehouse_is_one_line(warehouse, tmp_path):
    cut = tmp_path / "cut.duckdb"
    cut.write_bytes(warehouse.read_bytes()[:5000])
    garbage = tmp_path / "garbage.duckdb"
    garbage.write_bytes(b"\x89not a database\x00" * 1000)
    damaged = tmp_path / "damaged.duckdb"  # opens, but the block of store.sources is bad
    with duckdb.connect(str(warehouse), read_only=True) as con:
        block = con.execute("SELECT max(block_id) FROM pragma_storage_info('store.sources')"
                            ).fetchall()[0][0]
    data = bytearray(warehouse.read_bytes())
    start = 3 * 4096 + block * 262144 + 100  # file headers, then blocks of 256 KiB
    data[start:start + 1000] = b"\xa5" * 1000
    damaged.write_bytes(bytes(data))
    for db in (cut, garbage, damaged):
        done = tracewh_process("runs", "--db", str(db))
        assert done.returncode == 1
        one_line_error(done.stderr, str(db))
    assert "Corrupt database file" in done.stderr and "tracewh check" in done.stderr


# --- the Parquet lake is whole or says it is not --------------------------------------------

def lake_counts(lake: Path, view: str) -> dict:
    frame = pl.read_parquet(lake / view)
    return dict(frame.group_by("run_id").len().iter_rows())


def warehouse_counts(db: Path, view: str) -> dict:
    with tracewh.connect(db, read_only=True) as con:
        return dict(con.execute(f"SELECT run_id, count(*) FROM {view} GROUP BY 1").fetchall())


def test_a_damaged_manifest_is_exported_again(warehouse, tmp_path):
    """An older tracewh rewrote manifest.json in place: cut short by a full disk, every later
    export crashed, even with space freed."""
    lake = tmp_path / "lake"
    assert runner.invoke(app, ["export", str(lake), "--db", str(warehouse)]).exit_code == 0
    text = (lake / MANIFEST).read_text()
    (lake / MANIFEST).write_text(text[: len(text) // 3])
    result = runner.invoke(app, ["export", str(lake), "--db", str(warehouse)])
    assert result.exit_code == 0, result.stderr
    assert "exported 2 run(s)" in result.stderr
    assert json.loads((lake / MANIFEST).read_text())["runs"].keys() == {"ddp_4ranks",
                                                                        "fsdp_4ranks_kineto"}
    assert lake_counts(lake, "kernels") == warehouse_counts(warehouse, "kernels")


def test_an_export_killed_midway_is_finished_by_the_next(warehouse, tmp_path, monkeypatch):
    """Killed during --force, an older tracewh left a run's files deleted while the manifest
    still vouched for them: the next export said "unchanged" with 15 views of the run empty."""
    lake = tmp_path / "lake"
    with tracewh.connect(warehouse, read_only=True) as con:
        export_lake(con, lake)
        copied = []
        real_write = export_module._write_view

        def killed_on_the_fifth_view(con, out, view, *args):
            copied.append(view)
            if len(copied) == 5:
                raise KeyboardInterrupt  # as a kill between two files
            return real_write(con, out, view, *args)

        monkeypatch.setattr(export_module, "_write_view", killed_on_the_fifth_view)
        with pytest.raises(KeyboardInterrupt):
            export_lake(con, lake, force=True)
        monkeypatch.setattr(export_module, "_write_view", real_write)
        manifest = json.loads((lake / MANIFEST).read_text())
        assert set(manifest["runs"]) == set()  # it vouches for no run it was rewriting
        again = export_lake(con, lake)
    assert again.exported == ["ddp_4ranks", "fsdp_4ranks_kineto"] and again.skipped == []
    for view in ("kernels", "nccl_ops", "runs", "cuda_api"):
        assert lake_counts(lake, view) == warehouse_counts(warehouse, view), view
    assert not (lake / ".staging").exists()


def test_a_run_name_too_long_for_a_folder_fails_alone(tmp_path):
    db = tmp_path / "wh.duckdb"
    long_name = "sweep/" + "x" * 300
    assert runner.invoke(app, ["ingest", "--quiet", "--db", str(db), "--run", long_name,
                               str(SAMPLE / "fsdp_4ranks_kineto")]).exit_code == 0
    assert runner.invoke(app, ["ingest", "--quiet", "--db", str(db),
                               str(SAMPLE / "ddp_4ranks")]).exit_code == 0
    lake = tmp_path / "lake"
    result = runner.invoke(app, ["export", str(lake), "--db", str(db)])
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert "above the 255 a file system allows" in result.stderr
    assert "exported 1 run(s)" in result.stderr
    assert lake_counts(lake, "kernels") == {"ddp_4ranks": 1872}
    traces = tmp_path / "traces"
    result = runner.invoke(app, ["export", str(traces), "--format", "chrome-trace", "--db",
                                 str(db)])
    assert result.exit_code == 0, result.stderr
    names = sorted(p.name for p in traces.iterdir())
    assert len(names) == 2 and all(len(n.encode()) <= 255 for n in names)
    assert any(n.startswith("sweep_xxx") for n in names)


# --- waiting, and older warehouses ------------------------------------------------------------

@pytest.mark.parametrize("command", [["export", "{tmp}/lake"], ["shell"]], ids=["export", "shell"])
def test_export_and_shell_wait_for_a_busy_warehouse(command, warehouse, tmp_path):
    db = tmp_path / "wh.duckdb"
    shutil.copy(warehouse, db)
    stub = tmp_path / "bin" / "duckdb"  # the shell, as a stand-in that only records its start
    stub.parent.mkdir()
    stub.write_text("#!/bin/sh\necho started\n")
    stub.chmod(0o755)
    env = {**os.environ, "PATH": f"{stub.parent}{os.pathsep}{os.environ['PATH']}"}
    args = [a.replace("{tmp}", str(tmp_path)) for a in command] + ["--db", str(db)]
    holder = Holder(db)
    try:
        busy = tracewh_process(*args, "--wait", "0", env=env)
        waiting = subprocess.Popen([*TRACEWH, *args, "--wait", "120"], env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(1.5)
    finally:
        holder.release()
    assert busy.returncode == 1
    one_line_error(busy.stderr, "warehouse busy", "--wait SECONDS")
    out, err = waiting.communicate(timeout=120)
    assert waiting.returncode == 0, err


def make_older(db: Path) -> None:
    """What a warehouse of an earlier tracewh looks like to this one: other views."""
    con = duckdb.connect(str(db))
    con.execute("UPDATE store.meta SET value = 'an older tracewh' WHERE key = 'views_checksum'")
    con.close()


READERS = [["query", "gpu_kernel_summary"], ["sql", "SELECT count(*) FROM kernels"], ["runs"],
           ["export", "{tmp}/lake"], ["report", "--out", "{tmp}/report"]]


def test_read_only_commands_leave_an_older_warehouse_as_it_is(warehouse, tmp_path):
    db = tmp_path / "old.duckdb"
    shutil.copy(warehouse, db)
    make_older(db)
    before = sha256(db)
    for command in READERS:
        args = [a.replace("{tmp}", str(tmp_path)) for a in command]
        result = runner.invoke(app, [*args, "--db", str(db)])
        failed_in_one_line(result, str(db), "another tracewh version",
                           f"tracewh upgrade --db {db}")
        assert sha256(db) == before, command
    result = runner.invoke(app, ["upgrade", "--db", str(db)])
    assert result.exit_code == 0, result.stderr
    result = runner.invoke(app, ["sql", "SELECT count(*) AS n FROM kernels", "-f", "csv",
                                 "--db", str(db)])
    assert result.exit_code == 0 and result.stdout == "n\n2184\n"


def test_an_older_warehouse_on_a_read_only_disk_says_how_to_upgrade(warehouse, tmpfs):
    folder = tmpfs("32m")
    db = folder / "old.duckdb"
    shutil.copy(warehouse, db)
    make_older(db)
    remount(folder, "ro")
    result = runner.invoke(app, ["runs", "--db", str(db)])
    failed_in_one_line(result, "tracewh upgrade", "upgrade a copy")
    result = runner.invoke(app, ["upgrade", "--db", str(db)])
    failed_in_one_line(result, str(db), "read-only file system")


# --- the SQL guard ----------------------------------------------------------------------------

RELATIONS = {"kernels", "main.kernels"}


@pytest.mark.parametrize("sql, name", [
    ("SELECT * FROM kernels, LATERAL query_table('kernels')", "query_table()"),
    ("SELECT * FROM kernels, LATERAL query('SELECT 1')", "query()"),
    ("SELECT * FROM kernels k, LATERAL read_text('/etc/passwd')", "read_text()"),
    ("SELECT * FROM kernels k JOIN LATERAL glob('/etc/*') g ON true", "glob()"),
    ("SELECT * FROM kernels, LATERAL duckdb_settings()", "duckdb_settings()"),
    ("SELECT (SELECT count(*) FROM read_text('/etc/passwd')) FROM kernels", "read_text()"),
    ("SELECT getenv('HOME')", "getenv()"),
])
def test_the_guard_refuses_lateral_and_file_functions(sql, name):
    with pytest.raises(QueryRefused, match=name.replace("(", r"\(").replace(")", r"\)")):
        check_query(sql, RELATIONS)


def test_the_guard_still_allows_harmless_lateral():
    check_query("SELECT * FROM kernels k, LATERAL (SELECT k.name) s", RELATIONS)
    check_query("SELECT * FROM kernels k, LATERAL unnest([1, 2]) u", RELATIONS)


@pytest.mark.parametrize("sql", [
    "SELECT " + "(" * 400 + "1" + ")" * 400,
    "SELECT * FROM " + "(SELECT * FROM " * 300 + "kernels" + ")" * 300,
], ids=["parentheses", "subqueries"])
def test_deep_nesting_is_refused_in_one_line(sql, warehouse):
    failed_in_one_line(runner.invoke(app, ["sql", sql, "--db", str(warehouse)]),
                       "nested too deeply")


# --- runaway queries --------------------------------------------------------------------------

FOREVER = "WITH RECURSIVE t(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM t) SELECT count(*) FROM t"


def test_a_query_stops_at_its_timeout(warehouse):
    result = runner.invoke(app, ["sql", FOREVER, "--timeout", "1", "--db", str(warehouse)])
    failed_in_one_line(result, "stopped after --timeout 1 s")


@pytest.mark.parametrize("sql, words", [
    ("SELECT * FROM range(1000000000000)", "the result passed the memory limit"),
    ("SELECT list(i) FROM range(1000000000) t(i)", "the query needs more memory than --memory-limit"),
], ids=["result", "aggregate"])
def test_a_memory_bomb_stops_at_the_query_memory_limit(sql, words, warehouse, tmp_path):
    done, peak = run_cli_measured(["sql", sql, "--memory-limit", "300MB", "-f", "csv",
                                   "--db", str(warehouse)])
    assert done.returncode == 1
    one_line_error(done.stderr, words)
    assert peak < 300 + 500, peak


def holds_a_lock(pid: int) -> bool:
    """Whether process `pid` has a file lock: DuckDB locks the warehouse when it opens it."""
    return any(line.split()[4] == str(pid) for line in Path("/proc/locks").read_text().splitlines()
               if len(line.split()) > 4)


def test_ctrl_c_stops_a_query_with_one_line(warehouse):
    if not Path("/proc/locks").exists():
        pytest.skip("needs /proc/locks to see when the query has opened the warehouse")
    for trial in range(5):
        process = subprocess.Popen([*TRACEWH, "sql", FOREVER, "--db", str(warehouse)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not holds_a_lock(process.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5 * trial)  # from just opened to deep in the query
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
        assert process.returncode == 130, stderr
        one_line_error(stderr, "interrupted (Ctrl-C)")


# --- what reaches the terminal ----------------------------------------------------------------

def test_escape_sequences_in_names_do_not_reach_the_terminal(warehouse, tmp_path):
    title = "chr(27) || ']0;owned' || chr(7) || chr(27) || '[31mred'"
    result = runner.invoke(app, ["sql", f"SELECT {title} AS name", "--db", str(warehouse)])
    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "\\x1b]0;owned\\x07\\x1b[31mred" in result.stdout
    db = tmp_path / "\x1b[31mred.duckdb"
    result = runner.invoke(app, ["runs", "--db", str(db)])
    assert "\x1b" not in result.stderr and "\\x1b[31mred.duckdb" in result.stderr
