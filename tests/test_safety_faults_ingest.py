"""Issue 25, the ingest side: faults users meet (one bad byte, a trace still being written, a full
disk, a giant or hostile file, a FIFO) end in one line for that file, the other files still load,
and nothing of the faulty file is stored. Generated traces, each case edited by hand."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

import tracewh
from tracewh.check import check_warehouse
from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import ingest_paths, kineto, kineto_json, sha256_of

from test_safety_bad_input import TRACEWH, _sqlite_edit, error_lines, ingest


def rows(db: Path, sql: str) -> list[tuple]:
    con = tracewh.connect(db, read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def clean(db: Path) -> bool:
    con = tracewh.connect(db, read_only=True)
    try:
        return check_warehouse(con) == []
    finally:
        con.close()


@pytest.fixture(scope="module")
def kjob(tmp_path_factory):
    """Two ranks of a generated Kineto job, and what was written."""
    out = tmp_path_factory.mktemp("kjob")
    truth = generate_kineto_job(out, KinetoJobSpec(world_size=2, iterations=2, layers=1, seed=7))
    return truth


def copy_ranks(truth, folder: Path) -> list[Path]:
    """The job's files as a_rank0.json, b_rank1.json in `folder` (rank also in the name)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for rank, letter in ((0, "a"), (1, "b")):
        path = folder / f"{letter}_rank{rank}.json"
        shutil.copy(truth.rank_file[rank], path)
        paths.append(path)
    return paths


def edit(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert data.count(old) >= 1, old
    path.write_bytes(data.replace(old, new, 1))


def kernel_count(truth, rank: int) -> int:
    return len(truth.kernels[rank])


# -- item 1: an exception while decoding one file fails that file alone ------------------------

def test_invalid_utf8_in_a_name_is_repaired_and_every_file_loads(kjob, tmp_path):
    # one bad byte in a kernel name of the first file, no other fault (no quote to repair)
    first, second = copy_ranks(kjob, tmp_path / "t")
    name = kjob.kernels[0][0].name.encode()
    edit(first, b'"name": "' + name + b'"', b'"name": "' + name[:5] + b"\xff" + name[5:] + b'"')
    db = tmp_path / "wh.duckdb"
    result = ingest(db, str(tmp_path / "t"))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0, result.stderr
    assert rows(db, "SELECT rank, count(*) FROM kernels GROUP BY rank ORDER BY rank") == [
        (0, kernel_count(kjob, 0)), (1, kernel_count(kjob, 1))]
    repaired = name[:5].decode() + "\ufffd" + name[5:].decode()
    assert rows(db, "SELECT count(*) FROM kernels WHERE rank = 0 AND name = ?".replace(
        "?", "'" + repaired.replace("'", "''") + "'")) == [(1,)]
    assert rows(db, "SELECT warnings FROM sources WHERE path LIKE '%a_rank0.json'") == [
        ("repaired: invalid UTF-8 replaced",)]


def test_invalid_utf8_in_the_trace_header_is_repaired(kjob, tmp_path):
    first, _ = copy_ranks(kjob, tmp_path / "t")
    edit(first, b'"backend": "nccl"', b'"backend": "\xffnccl"')
    db = tmp_path / "wh.duckdb"
    result = ingest(db, str(first))
    assert result.exit_code == 0, result.stderr
    assert rows(db, "SELECT backend FROM ranks") == [("\ufffdnccl",)]
    assert rows(db, "SELECT warnings FROM sources") == [
        ("repaired: invalid UTF-8 in distributedInfo replaced",)]


def test_args_nested_too_deep_fail_that_file_alone(kjob, tmp_path):
    first, second = copy_ranks(kjob, tmp_path / "t")
    deep = b'{"x": ' * 100_000 + b"1" + b"}" * 100_000
    edit(first, b'"args": {', b'"args": {"deep": ' + deep + b', "c": "a\x01b", ')
    db = tmp_path / "wh.duckdb"
    result = ingest(db, str(tmp_path / "t"))
    assert result.exit_code == 1
    assert not isinstance(result.exception, RecursionError), result.exception
    lines = error_lines(result.stderr)
    assert len(lines) == 1 and str(first) in lines[0] and "nested too deeply" in lines[0], lines
    assert rows(db, "SELECT rank, count(*) FROM kernels GROUP BY rank") == [
        (1, kernel_count(kjob, 1))]
    assert rows(db, "SELECT count(*) FROM sources") == [(1,)]


# -- item 2: a file that changes while it is read ----------------------------------------------

def test_a_file_written_while_read_is_refused_then_loads_once_still(kjob, tmp_path, monkeypatch):
    first, _ = copy_ranks(kjob, tmp_path / "t")
    second_version = first.read_bytes().replace(b'"rank": 0', b'"rank": 0 ', 1)  # one byte more
    original_prepare = kineto.prepare

    def prepare_while_a_job_writes(con, path, run_id):
        path.write_bytes(second_version)  # the job appends after tracewh hashed the file
        return original_prepare(con, path, run_id)

    monkeypatch.setattr(kineto, "prepare", prepare_while_a_job_writes)
    db = tmp_path / "wh.duckdb"
    con = tracewh.connect(db)
    try:
        (result,) = ingest_paths(con, [first])
        assert result.status == "failed"
        assert result.message.startswith(f"{first}: changed while being read"), result.message
        assert con.execute("SELECT count(*) FROM store.sources").fetchall() == [(0,)]
        monkeypatch.setattr(kineto, "prepare", original_prepare)
        (again,) = ingest_paths(con, [first])
        assert again.status == "ingested", again.message
        assert con.execute("SELECT sha256 FROM store.sources").fetchall() == [
            (sha256_of(first),)]
    finally:
        con.close()


def test_a_rewrite_within_the_same_clock_tick_is_caught_by_the_second_hash(kjob, tmp_path,
                                                                           monkeypatch):
    # same size, mtime put back: only the hash of a file written lately tells
    first, _ = copy_ranks(kjob, tmp_path / "t")
    data = first.read_bytes()
    same_size = data.replace(b'"rank": 0', b'"rank": 1', 1)
    original_prepare = kineto.prepare

    def prepare_while_a_job_rewrites(con, path, run_id):
        stat = path.stat()
        path.write_bytes(same_size)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        return original_prepare(con, path, run_id)

    monkeypatch.setattr(kineto, "prepare", prepare_while_a_job_rewrites)
    # as if the rewrite fell in the clock tick of the write before: ctime unchanged too
    monkeypatch.setattr("tracewh.ingest._identity", lambda path: (
        0, 0, path.stat().st_size, path.stat().st_mtime_ns, 0))
    con = tracewh.connect(tmp_path / "wh.duckdb")
    try:
        (result,) = ingest_paths(con, [first])
        assert result.status == "failed" and "changed while being read" in result.message
    finally:
        con.close()


# -- item 3: a full disk is the warehouse's fault, said once -----------------------------------

@pytest.fixture
def small_disk(tmp_path):
    """A 2 MB tmpfs this test mounts (root only), unmounted after."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


def test_full_disk_is_one_line_naming_the_warehouse_and_a_retry_completes(small_disk, tmp_path):
    traces = tmp_path / "traces"
    truth = generate_kineto_job(traces, KinetoJobSpec(world_size=8, iterations=3, layers=4,
                                                      seed=2))
    db = small_disk / "wh.duckdb"
    result = subprocess.run([*TRACEWH, "ingest", "--db", str(db), "--quiet", str(traces)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = error_lines(result.stderr)
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"Error: {db}: no space left on device while writing ")
    assert "free space and run the same ingest again" in lines[0]
    stored = rows(db, "SELECT count(*) FROM sources")[0][0]
    assert 0 < stored < 8
    match = re.search(r"(\d+) file\(s\) after it not tried", lines[0])
    assert stored + 1 + (int(match.group(1)) if match else 0) == 8, lines[0]
    assert clean(db)

    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
    retry = subprocess.run([*TRACEWH, "ingest", "--db", str(db), "--quiet", str(traces)],
                           capture_output=True, text=True, timeout=600)
    assert retry.returncode == 0, retry.stderr
    assert rows(db, "SELECT count(*) FROM sources") == [(8,)]
    assert rows(db, "SELECT count(*) FROM kernels") == [
        (sum(len(k) for k in truth.kernels.values()),)]
    assert clean(db)


# -- item 5: a gzip bomb is refused before it fills memory or disk -----------------------------

def test_gzip_bomb_is_refused(kjob, tmp_path, monkeypatch):
    # the rule at a test's scale
    monkeypatch.setattr(kineto_json, "_INFLATION_FLOOR", 1 << 20)
    bomb = tmp_path / "t" / "bomb_rank0.json.gz"
    bomb.parent.mkdir()
    bomb.write_bytes(gzip.compress(b'{"traceEvents": [' + b" " * (8 << 20), 9))
    assert bomb.stat().st_size * 200 < 8 << 20
    good = tmp_path / "t" / "good_rank1.json"
    shutil.copy(kjob.rank_file[1], good)
    con = tracewh.connect(tmp_path / "wh.duckdb")
    try:
        results = {r.path.name: r for r in ingest_paths(con, [tmp_path / "t"])}
        assert results["good_rank1.json"].status == "ingested"
        assert results["bomb_rank0.json.gz"].status == "failed"
        assert "more than 200x its size: a gzip bomb" in results["bomb_rank0.json.gz"].message
    finally:
        con.close()


def test_too_little_memory_is_said_so_not_blamed_on_the_file(kjob, tmp_path):
    db = tmp_path / "wh.duckdb"
    result = ingest(db, "--memory-limit", "8MB", str(kjob.rank_file[0]))
    assert result.exit_code == 1
    assert error_lines(result.stderr) == [
        f"Error: {kjob.rank_file[0]}: needs more memory than the memory limit (7.6 MiB) allows - "
        "give a larger --memory-limit, or fewer --jobs"], result.stderr
    assert not db.exists()  # a failed ingest into a new path leaves no warehouse behind


def test_faulty_json_too_big_to_decode_whole_is_refused(kjob, tmp_path, monkeypatch):
    # compact JSON (not Kineto's layout) with a raw control character: DuckDB's reader refuses
    # it, the streamed decoder cannot cut it, and decoding it whole is bounded
    doc = json.loads(kjob.rank_file[0].read_text())
    text = json.dumps(doc, separators=(",", ":")).encode()
    path = tmp_path / "compact_rank0.json"
    path.write_bytes(text.replace(b'"name":"', b'"name":"\x01', 1))
    monkeypatch.setattr(kineto_json, "_WHOLE_BYTES", len(text) // 2)
    con = tracewh.connect(tmp_path / "wh.duckdb")
    try:
        (result,) = ingest_paths(con, [path])
        assert result.status == "failed"
        assert "JSON that neither DuckDB's reader nor the streamed decoder can read" in result.message
        monkeypatch.setattr(kineto_json, "_WHOLE_BYTES", len(text) * 2)
        (again,) = ingest_paths(con, [path])
        assert again.status == "ingested", again.message
    finally:
        con.close()


# -- item 7: only regular files are read -------------------------------------------------------

def test_fifo_and_device_links_are_refused_not_read(kjob, tmp_path):
    folder = tmp_path / "t"
    copy_ranks(kjob, folder)
    os.mkfifo(folder / "c_rank2.json")
    (folder / "d_rank3.json").symlink_to("/dev/zero")
    fifo = tmp_path / "given.json"
    os.mkfifo(fifo)
    db = tmp_path / "wh.duckdb"
    result = subprocess.run([*TRACEWH, "ingest", "--db", str(db), "--quiet", str(fifo),
                             "/dev/urandom", str(folder)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert sorted(error_lines(result.stderr)) == sorted([
        f"Error: {fifo}: not a regular file (a named pipe) - give the trace file itself",
        "Error: /dev/urandom: not a regular file (a character device) - give the trace file itself",
        f"Error: {folder / 'c_rank2.json'}: not a regular file (a named pipe) - give the trace "
        "file itself",
        f"Error: {folder / 'd_rank3.json'}: not a regular file (a character device) - give the "
        "trace file itself"]), result.stderr
    assert rows(db, "SELECT rank, count(*) FROM kernels GROUP BY rank ORDER BY rank") == [
        (0, kernel_count(kjob, 0)), (1, kernel_count(kjob, 1))]


# -- item 10: nsys text that is not UTF-8, a kernel table that is a view -----------------------

@pytest.fixture(scope="module")
def njob(tmp_path_factory):
    out = tmp_path_factory.mktemp("njob")
    return generate_job(out, JobSpec(world_size=2, iterations=2, layers=1, seed=3))


def _kernels_of(db: Path) -> list[tuple]:
    return rows(db, "SELECT start_ns, end_ns, short_name FROM kernels ORDER BY ALL")


def test_nsys_invalid_utf8_in_string_ids_is_repaired(njob, tmp_path):
    reference = tmp_path / "ref.duckdb"
    assert ingest(reference, str(njob.files[0])).exit_code == 0
    bad = tmp_path / "rank0.sqlite"
    shutil.copy(njob.files[0], bad)
    with sqlite3.connect(bad) as con:
        sid, value = con.execute("SELECT s.id, s.value FROM StringIds s JOIN "
                                 "CUPTI_ACTIVITY_KIND_KERNEL k ON k.shortName = s.id").fetchone()
    raw = value.encode()
    broken = raw[:3] + b"\xff" + raw[3:]
    _sqlite_edit(bad, f"UPDATE StringIds SET value = CAST(X'{broken.hex()}' AS TEXT) WHERE id = {sid}")
    db = tmp_path / "wh.duckdb"
    result = ingest(db, str(bad))
    assert result.exit_code == 0, result.stderr
    repaired = raw[:3].decode() + "\ufffd" + raw[3:].decode()
    expected = sorted((s, e, repaired if n == value else n) for s, e, n in _kernels_of(reference))
    assert _kernels_of(db) == expected
    assert rows(db, "SELECT warnings FROM sources") == [
        ("repaired: invalid UTF-8 replaced in 1 StringIds value(s)",)]


def test_nsys_negative_durations_and_rows_exported_twice_are_counted(njob, tmp_path):
    """Issue 40, item 6: Kineto's rules on nsys. Two kernels that end before they start are
    stored with duration 0, a kernel and a memcpy row exported twice are stored twice; the
    export's warnings count both."""
    bad = tmp_path / "rank0.sqlite"
    shutil.copy(njob.files[0], bad)
    with sqlite3.connect(bad) as con:
        backwards = [r for (r,) in con.execute(
            "SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 2")]
        kernels = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    _sqlite_edit(bad,
                 "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET \"end\" = start - 1000 "
                 f"WHERE rowid IN ({backwards[0]}, {backwards[1]})",
                 "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL "
                 "ORDER BY start DESC LIMIT 1",
                 "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY SELECT * FROM CUPTI_ACTIVITY_KIND_MEMCPY "
                 "ORDER BY start DESC LIMIT 1")
    db = tmp_path / "wh.duckdb"
    assert warnings_after_ingest(db, bad) == (
        "2 event(s) with a negative duration: stored with duration 0; 2 event(s) written "
        "again, identical in process, device, stream, times and correlation id: stored as "
        "often as written")
    assert rows(db, "SELECT count(*), count(*) FILTER (WHERE dur_ns = 0), min(dur_ns) "
                    "FROM kernels") == [(kernels + 1, 2, 0)]


def test_nsys_kernel_table_that_is_a_view_is_read(njob, tmp_path):
    reference = tmp_path / "ref.duckdb"
    assert ingest(reference, str(njob.files[1])).exit_code == 0
    viewed = tmp_path / "rank1.sqlite"
    shutil.copy(njob.files[1], viewed)
    _sqlite_edit(viewed, "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO kernels_stored",
                 "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT * FROM kernels_stored")
    db = tmp_path / "wh.duckdb"
    assert ingest(db, str(viewed)).exit_code == 0
    kernels = _kernels_of(db)
    assert len(kernels) == len(njob.kernels[1]) > 0
    assert kernels == _kernels_of(reference)


def warnings_after_ingest(db: Path, trace: Path) -> str:
    """Ingest `trace` into `db` (it loads) and return the source's warnings."""
    result = ingest(db, str(trace))
    assert result.exit_code == 0, result.stderr
    return rows(db, "SELECT warnings FROM sources")[0][0]


# -- item 10: Kineto faults are counted in the source's warnings -------------------------------

def test_negative_durations_and_duplicated_events_are_counted(kjob, tmp_path):
    first, _ = copy_ranks(kjob, tmp_path / "t")
    data = first.read_bytes()
    # two kernels with a negative duration, one event block written twice
    kernels = [k for k in kjob.kernels[0][:2]]
    for k in kernels:
        needle = f'"name": "{k.name}"'.encode()
        at = data.index(needle)
        dur = re.compile(rb'"dur": ([0-9.]+)').search(data, at)
        data = data[:dur.start(1)] + b"-" + data[dur.start(1):]
    block_start = data.index(b"\n  {", data.index(b'"cat": "cuda_runtime"') - 400)
    block_end = data.index(b"\n  }", block_start) + 4
    block = data[block_start:block_end]
    data = data[:block_end] + b"," + block + data[block_end:]
    first.write_bytes(data)
    db = tmp_path / "wh.duckdb"
    assert warnings_after_ingest(db, first) == (
        "2 event(s) with a negative duration: stored with duration 0; 1 event(s) written again, "
        "identical in every field: stored as often as written")
    assert rows(db, "SELECT count(*) FROM kernels WHERE dur_ns = 0") == [(2,)]


@pytest.mark.parametrize("fault", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_duration_or_time_that_is_no_number_is_one_rule(kjob, tmp_path, fault):
    """Issue 40, item 7: NaN, Infinity, -Infinity and a number beyond a double, as a `dur` or a
    `ts`, are said the same way whatever the token: the duration is stored as 0, the event
    whose time is no number is not stored; both counted in the source's warnings."""
    first, _ = copy_ranks(kjob, tmp_path / "t")
    data = first.read_bytes()
    first_kernel, second_kernel = kjob.kernels[0][:2]
    for kernel, field in ((first_kernel, b"dur"), (second_kernel, b"ts")):
        at = data.index(f'"name": "{kernel.name}"'.encode())
        value = re.compile(rb'"' + field + rb'": (-?[0-9.]+)').search(data, at)
        data = data[:value.start(1)] + fault.encode() + data[value.end(1):]
    first.write_bytes(data)
    db = tmp_path / "wh.duckdb"
    assert warnings_after_ingest(db, first) == (
        "1 event(s) with a duration that is not a finite number (NaN, Infinity): stored with "
        "duration 0; 1 event(s) with a time that is not a finite number (NaN, Infinity): not "
        "stored")
    kernels = rows(db, "SELECT name, dur_ns FROM kernels ORDER BY start_ns")
    assert len(kernels) == len(kjob.kernels[0]) - 1
    assert (first_kernel.name, 0) in kernels


def test_negative_distributed_rank_is_not_stored(kjob, tmp_path):
    path = tmp_path / "t" / "alone.json"
    path.parent.mkdir()
    shutil.copy(kjob.rank_file[0], path)
    edit(path, b'"rank": 0', b'"rank": -3')
    db = tmp_path / "wh.duckdb"
    result = ingest(db, str(path))
    assert result.exit_code == 0, result.stderr
    assert rows(db, "SELECT rank, rank_source FROM ranks") == [(0, "default")]
    (warnings,) = rows(db, "SELECT warnings FROM sources")[0]
    assert "distributedInfo.rank -3 is not a rank: ignored" in warnings


def test_real_traces_raise_no_fault_warning(shared_data, tmp_path):
    """The counts stay quiet on real traces: none of them repeats an event or runs backwards."""
    db = tmp_path / "wh.duckdb"
    ingest(db, str(shared_data / "kineto" / "param"), str(shared_data / "kineto" / "hta"))
    found = rows(db, "SELECT count(*), count(*) FILTER (warnings LIKE '%negative duration%' OR "
                     "warnings LIKE '%written again%') FROM sources")[0]
    assert found[0] >= 20 and found[1] == 0, found


def test_full_disk_at_the_final_checkpoint_is_said_once_and_loses_nothing(shared_data, tmp_path):
    """Issue 40, item 1: every file commits to the write-ahead log, then the final CHECKPOINT
    finds the disk full. Said once, naming the warehouse and what is safe; every command reads
    the warehouse meanwhile, and the next ingest after space is freed finishes the checkpoint."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    traces = shared_data / "kineto" / "param" / "dlrm_kineto"  # 8 ranks, 7.4 MB
    mount = tmp_path / "disk"
    mount.mkdir()
    db = mount / "wh.duckdb"
    for megabytes in (7, 8, 9, 10):  # the WAL fits and the checkpoint does not
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(mount)],
                       check=True)
        try:
            result = subprocess.run([*TRACEWH, "ingest", "--db", str(db), str(traces)],
                                    capture_output=True, text=True, timeout=600)
            if "cannot checkpoint" in result.stderr:
                break
        except BaseException:
            subprocess.run(["umount", str(mount)], check=True)
            raise
        subprocess.run(["umount", str(mount)], check=True)
    else:
        pytest.fail("no tmpfs size between 7 and 10 MB reproduced a failed final checkpoint")
    try:
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert error_lines(result.stderr) == [
            f"Error: {db}: cannot checkpoint: no space left on device - nothing is lost: every "
            "file ingested is committed in its write-ahead log (wh.duckdb.wal), which is replayed "
            "when it is next opened, so every command reads it; free space there, and the next "
            "ingest into it finishes the checkpoint"], result.stderr
        assert "ingested 8 file(s)" in result.stderr
        assert rows(db, "SELECT count(*) FROM sources") == [(8,)]  # disk still full
        subprocess.run(["mount", "-o", "remount,size=64m", str(mount)], check=True)
        retry = subprocess.run([*TRACEWH, "ingest", "--db", str(db), "--quiet", str(traces)],
                               capture_output=True, text=True, timeout=600)
        assert retry.returncode == 0, retry.stderr
        assert not (mount / "wh.duckdb.wal").exists()
        assert rows(db, "SELECT count(*) FROM sources") == [(8,)]
        assert clean(db)
    finally:
        subprocess.run(["umount", str(mount)], check=True)
