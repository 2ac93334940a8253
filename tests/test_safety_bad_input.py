"""Bad input, through the real CLI, on generated traces (no shared data needed): each bad file is
one clear line naming it, the exit is non-zero, the good files beside it still load, and every
stored table is otherwise exactly as it was.

Real-trace versions of some cases live in test_ingest_rules.py / test_ingest_kineto_rules.py;
the last test here mixes real files when ../shared/data is present.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.check import content_checksums
from tracewh.cli import app
from tracewh.generate.nsys import JobSpec, generate_job

from test_ingest_rules import corrupt_copy, table_checksums

runner = CliRunner()
TRACEWH = [sys.executable, "-m", "tracewh.cli"]


def ingest(db: Path, *args: str):
    return runner.invoke(app, ["ingest", "--db", str(db), "--quiet", *args])


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("Error:")]


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> Path:
    """Six small generated nsys exports: rank0..rank3 of one job, node0..node1 of another."""
    root = tmp_path_factory.mktemp("gen")
    generate_job(root / "job_a", JobSpec(world_size=4, iterations=2, layers=1, seed=3))
    generate_job(root / "job_b", JobSpec(world_size=4, ranks_per_file=2, iterations=2, layers=1,
                                         seed=4))
    return root


@pytest.fixture(scope="module")
def base(tmp_path_factory, job) -> Path:
    db = tmp_path_factory.mktemp("base") / "wh.duckdb"
    result = ingest(db, str(job / "job_a" / "rank0.sqlite"), str(job / "job_a" / "rank1.sqlite"))
    assert result.exit_code == 0, result.stderr
    return db


@pytest.fixture
def warehouse(base, tmp_path) -> Path:
    """A warehouse already holding job_a's rank0 and rank1 (a fresh copy for each test)."""
    db = tmp_path / "wh.duckdb"
    shutil.copy(base, db)
    return db


@pytest.fixture(scope="module")
def beside(base, job, tmp_path_factory) -> tuple[Path, Path, dict]:
    """Two good files, and the base warehouse's content once they are ingested (run 'mixed')."""
    folder = tmp_path_factory.mktemp("mixed")
    first, last = folder / "a_rank2.sqlite", folder / "c_rank3.sqlite"
    shutil.copy(job / "job_a" / "rank2.sqlite", first)
    shutil.copy(job / "job_a" / "rank3.sqlite", last)
    reference = folder / "reference.duckdb"
    shutil.copy(base, reference)
    assert ingest(reference, "--run", "mixed", str(first), str(last)).exit_code == 0
    return first, last, content_checksums(reference)


def nsys_export(job: Path) -> bytes:
    return (job / "job_a" / "rank2.sqlite").read_bytes()


def _sqlite_edit(path: Path, *statements: str) -> None:
    con = sqlite3.connect(path)
    for statement in statements:
        con.execute(statement)
    con.commit()
    con.close()


def make_bad(case: str, folder: Path, job: Path) -> Path:
    """Write the bad file of `case` into `folder` and return its path."""
    good = nsys_export(job)
    trace = json.dumps({"schemaVersion": 1, "traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.0, "dur": 2.0}]})
    folder.mkdir(parents=True, exist_ok=True)
    if case == "truncated-json":
        path = folder / "truncated.json"
        path.write_text(trace[: len(trace) // 2])
    elif case == "truncated-gzip":
        path = folder / "truncated.json.gz"
        packed = gzip.compress(trace.encode() * 50)
        path.write_bytes(packed[: len(packed) // 2])
    elif case == "gzip-of-garbage":
        path = folder / "garbage.json.gz"
        path.write_bytes(gzip.compress(b"\x00\x01garbage" * 100))
    elif case == "json-not-a-trace":
        path = folder / "notatrace.json"
        path.write_text(json.dumps({"name": "not a trace", "values": [1, 2, 3]}))
    elif case == "empty-json":
        path = folder / "empty.json"
        path.write_bytes(b"")
    elif case == "empty-sqlite":
        path = folder / "empty.sqlite"
        path.write_bytes(b"")
    elif case == "garbage-sqlite":
        path = folder / "garbage.sqlite"
        path.write_bytes(os.urandom(20_000))
    elif case == "sqlite-not-nsys":
        path = folder / "people.sqlite"
        _sqlite_edit(path, "CREATE TABLE people (name TEXT)", "INSERT INTO people VALUES ('x')")
    elif case == "corrupt-page":
        source = folder / "source.tmp"
        source.write_bytes(good)
        path = corrupt_copy(source, folder / "corrupt.sqlite")
        source.unlink()
    elif case == "truncated-sqlite":
        path = folder / "truncated.sqlite"
        path.write_bytes(good[: len(good) // 3])
    elif case == "renamed-start-column":
        path = folder / "renamed.sqlite"
        path.write_bytes(good)
        _sqlite_edit(path, "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME COLUMN start TO startNs")
    else:
        raise ValueError(case)
    return path


# What each bad file must be called (a phrase of its one line).
BAD_CASES = {
    "truncated-json": "truncated JSON",
    "truncated-gzip": "corrupt or truncated gzip",
    "gzip-of-garbage": "not valid JSON",
    "json-not-a-trace": "not a Chrome trace",
    "empty-json": "empty file",
    "empty-sqlite": "not an Nsight Systems export",
    "garbage-sqlite": "not a readable SQLite database",
    "sqlite-not-nsys": "not an Nsight Systems export",
    "corrupt-page": "not a readable SQLite database",
    "truncated-sqlite": "not a readable SQLite database",
    # Decided: kernels without start times cannot be stored; the file is refused, not half-loaded.
    "renamed-start-column": "start",
}
# Cases whose line does not yet say what to do (see the report on issue 5 for the ingest fix).
NO_HINT_YET = {"renamed-start-column"}


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_file_alone_changes_nothing(warehouse, tmp_path, job, case):
    """`Error: FILE: what is wrong - what to do`, exit 1, every table byte for byte as before."""
    before = table_checksums(warehouse)
    bad = make_bad(case, tmp_path / "bad", job)
    result = ingest(warehouse, str(bad))
    assert result.exit_code == 1
    lines = error_lines(result.stderr)
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"Error: {bad}: ") and BAD_CASES[case] in lines[0], lines
    if case not in NO_HINT_YET:
        assert " - " in lines[0] and lines[0].rsplit(" - ", 1)[1].strip(), lines
    assert "Traceback" not in result.stderr + result.stdout
    assert table_checksums(warehouse) == before


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_file_beside_good_ones(warehouse, tmp_path, job, beside, case):
    """The bad file comes between two good ones: both good ones load, nothing else changes.
    (Every bad kind in one directory: test_directory_mixing_every_bad_kind_with_good_files.)"""
    first, last, reference = beside
    bad = make_bad(case, tmp_path / "b", job)
    result = ingest(warehouse, "--run", "mixed", str(first), str(bad), str(last))
    assert result.exit_code == 1
    lines = error_lines(result.stderr)
    assert len(lines) == 1 and str(bad) in lines[0] and BAD_CASES[case] in lines[0], lines
    assert content_checksums(warehouse) == reference


@pytest.mark.parametrize("case", sorted(NO_HINT_YET))
def test_load_error_line_says_what_to_do(warehouse, tmp_path, job, case):
    bad = make_bad(case, tmp_path / "bad", job)
    line = error_lines(ingest(warehouse, str(bad)).stderr)[0]
    assert " - " in line and line.rsplit(" - ", 1)[1].strip(), line


def test_missing_table_ingests_what_the_file_has(warehouse, tmp_path, job):
    """An export without its memcpy table (nsys creates tables lazily): the rest loads."""
    path = tmp_path / "rank2.sqlite"
    path.write_bytes(nsys_export(job))
    _sqlite_edit(path, "DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY")
    result = ingest(warehouse, "--run", "job_a", str(path))
    assert result.exit_code == 0, result.stderr
    con = tracewh.connect(warehouse, read_only=True)
    try:
        counts = con.execute(
            "SELECT (SELECT count(*) FROM kernels k JOIN sources s USING (file_id) WHERE s.path = ?),"
            " (SELECT count(*) FROM memcpy m JOIN sources s USING (file_id) WHERE s.path = ?)",
            [str(path), str(path)]).fetchall()[0]
    finally:
        con.close()
    assert counts[0] > 0 and counts[1] == 0
    assert runner.invoke(app, ["check", "--db", str(warehouse)]).exit_code == 0


def test_renamed_optional_column_ingests_with_nulls(warehouse, tmp_path, job):
    path = tmp_path / "rank2.sqlite"
    path.write_bytes(nsys_export(job))
    _sqlite_edit(path, "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME COLUMN gridX TO gridXX")
    result = ingest(warehouse, "--run", "job_a", str(path))
    assert result.exit_code == 0, result.stderr
    con = tracewh.connect(warehouse, read_only=True)
    try:
        assert con.execute("SELECT count(*), count(grid_x) FROM kernels WHERE rank = 2"
                           ).fetchall()[0][1] == 0
    finally:
        con.close()


def test_path_that_does_not_exist(warehouse, tmp_path, job):
    before = content_checksums(warehouse)
    missing = tmp_path / "no" / "such.sqlite"
    result = ingest(warehouse, str(missing), str(job / "job_a" / "rank2.sqlite"))
    assert result.exit_code == 1
    lines = error_lines(result.stderr)
    assert len(lines) == 1 and f"{missing}: no such file" in lines[0], result.stderr
    con = tracewh.connect(warehouse, read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM sources").fetchall() == [(3,)]
    finally:
        con.close()
    assert content_checksums(warehouse) != before  # the good file did load


# --- files the process may not read ---------------------------------------------------------

def _without_root_powers() -> list[str]:
    """A command prefix under which the process cannot read a mode-000 file: nothing for a
    normal user; for root (CI), setpriv dropping the capabilities that bypass permissions."""
    if os.geteuid() != 0:
        return []
    prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
              "--inh-caps=-dac_override,-dac_read_search"]
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: root reads every file")
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"running as root and cannot drop CAP_DAC_OVERRIDE: {probe.stderr!r}")
    return prefix


def run_unprivileged(db: Path, *paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*_without_root_powers(), *TRACEWH, "ingest", "--db", str(db),
                           "--quiet", *map(str, paths)], capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def unreadable(tmp_path, job):
    """A folder with two readable exports and one mode-000 export (restored afterwards)."""
    folder = tmp_path / "perm"
    folder.mkdir()
    shutil.copy(job / "job_a" / "rank2.sqlite", folder / "rank2.sqlite")
    shutil.copy(job / "job_a" / "rank3.sqlite", folder / "rank3.sqlite")
    locked = folder / "secret_rank1.sqlite"
    shutil.copy(job / "job_b" / "node0.sqlite", locked)
    locked.chmod(0)
    yield folder, locked
    locked.chmod(0o644)


@pytest.mark.parametrize("given", ["directory", "file"])
def test_unreadable_file(warehouse, tmp_path, unreadable, given):
    folder, locked = unreadable
    before = table_checksums(warehouse)
    result = run_unprivileged(warehouse, folder if given == "directory" else locked)
    assert result.returncode == 1, result.stderr
    lines = error_lines(result.stderr)
    assert len(lines) == 1 and str(locked) in lines[0] and "cannot read" in lines[0], result.stderr
    assert "Traceback" not in result.stderr
    con = tracewh.connect(warehouse, read_only=True)
    try:
        paths = {p for (p,) in con.execute("SELECT path FROM sources").fetchall()}
    finally:
        con.close()
    if given == "directory":
        assert {str(folder / "rank2.sqlite"), str(folder / "rank3.sqlite")} <= paths
    else:
        assert table_checksums(warehouse) == before


def test_file_in_a_directory_the_process_cannot_enter(warehouse, tmp_path, job):
    folder = tmp_path / "closed"
    folder.mkdir()
    inside = folder / "rank2.sqlite"
    shutil.copy(job / "job_a" / "rank2.sqlite", inside)
    folder.chmod(0)
    try:
        before = table_checksums(warehouse)
        result = run_unprivileged(warehouse, inside, job / "job_a" / "rank3.sqlite")
    finally:
        folder.chmod(0o755)
    assert "Traceback" not in result.stderr, result.stderr
    lines = error_lines(result.stderr)
    assert result.returncode == 1 and len(lines) == 1 and str(inside) in lines[0]
    assert table_checksums(warehouse) != before  # rank3 still loaded


def test_unreadable_subdirectory_is_reported_not_skipped(warehouse, tmp_path, job):
    root = tmp_path / "runs"
    (root / "closed").mkdir(parents=True)
    shutil.copy(job / "job_a" / "rank2.sqlite", root / "closed" / "rank2.sqlite")
    shutil.copy(job / "job_a" / "rank3.sqlite", root / "rank3.sqlite")
    (root / "closed").chmod(0)
    try:
        result = run_unprivileged(warehouse, root)
    finally:
        (root / "closed").chmod(0o755)
    lines = error_lines(result.stderr)
    assert result.returncode == 1 and len(lines) == 1 and "closed" in lines[0], result.stderr


def test_path_errors_say_what_to_do(warehouse, tmp_path, unreadable):
    _, locked = unreadable
    lines = error_lines(ingest(warehouse, str(tmp_path / "no_such.sqlite")).stderr)
    lines += error_lines(run_unprivileged(warehouse, locked).stderr)
    assert len(lines) == 2
    for line in lines:
        assert " - " in line and line.rsplit(" - ", 1)[1].strip(), line


# --- everything at once ---------------------------------------------------------------------

def test_directory_mixing_every_bad_kind_with_good_files(warehouse, tmp_path, job):
    folder = tmp_path / "everything"
    bad = {case: make_bad(case, folder / case, job) for case in BAD_CASES}
    (folder / "notes.txt").write_text("not a trace: skipped when found in a directory")
    for name in ("rank2.sqlite", "rank3.sqlite"):
        shutil.copy(job / "job_a" / name, folder / name)
    shutil.copytree(job / "job_b", folder / "job_b")
    reference = tmp_path / "reference.duckdb"
    shutil.copy(warehouse, reference)
    assert ingest(reference, "--run", "everything", str(folder / "rank2.sqlite"),
                  str(folder / "rank3.sqlite")).exit_code == 0
    assert ingest(reference, "--run", "job_b", str(folder / "job_b")).exit_code == 0

    # runs: 'everything' (top level) and 'job_b'; not --quiet, which leaves the notes out
    result = runner.invoke(app, ["ingest", "--db", str(warehouse), str(folder)])
    assert result.exit_code == 1
    lines = error_lines(result.stderr)
    # JSON that is not a trace, found in a folder, is passed over with a note (a config.json
    # beside the traces); named alone it is an error (test_bad_file_is_refused_...)
    failing = {case: text for case, text in BAD_CASES.items() if case != "json-not-a-trace"}
    assert len(lines) == len(failing), result.stderr
    for case, path in bad.items():
        assert sum(str(path) in line and BAD_CASES[case] in line for line in lines) == (
            case in failing), case
    assert re.search(r"note: .*passed over .*1 \.json that is not a trace \(notatrace\.json\)",
                     result.stderr), result.stderr
    assert "ingested 4 file(s)" in result.stderr and f"{len(failing)} failed" in result.stderr
    assert content_checksums(warehouse) == content_checksums(reference)
    assert runner.invoke(app, ["check", "--db", str(warehouse)]).exit_code == 0


def test_real_traces_mixed_with_their_broken_copies(tmp_path, shared_data):
    """Real nsys and Kineto files beside truncated copies of themselves."""
    folder = tmp_path / "real"
    folder.mkdir()
    nsys_file = shared_data / "nsys" / "nsys-ai" / "h100_2gpu_1s.sqlite"
    kineto_file = (shared_data / "kineto" / "param" / "dlrm_kineto"
                   / "worker0_step_12.1694128201545.pt.trace.json")
    shutil.copy(nsys_file, folder / "good.sqlite")
    shutil.copy(kineto_file, folder / "good.pt.trace.json")
    (folder / "cut.sqlite").write_bytes(nsys_file.read_bytes()[: nsys_file.stat().st_size // 2])
    (folder / "cut.pt.trace.json").write_bytes(kineto_file.read_bytes()[:100_000])
    db = tmp_path / "wh.duckdb"
    result = ingest(db, "--rank-map", "good.sqlite=1", str(folder))
    assert result.exit_code == 1
    lines = error_lines(result.stderr)
    assert len(lines) == 2 and all("cut." in line for line in lines), result.stderr
    con = tracewh.connect(db, read_only=True)
    try:
        assert sorted(Path(p).name for (p,) in con.execute("SELECT path FROM sources").fetchall()
                      ) == ["good.pt.trace.json", "good.sqlite"]
    finally:
        con.close()
    assert runner.invoke(app, ["check", "--db", str(db)]).exit_code == 0
