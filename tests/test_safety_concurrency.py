"""Two processes on one warehouse: DuckDB lets one process write a file and no other process open
it meanwhile (readers included). tracewh waits for it (`--wait SECONDS`, default 60) with a
message, or fails with one "warehouse busy" line; it never corrupts the file, and a query sees
the warehouse before or after an ingest, never in between.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tracewh.check import content_checksums
from tracewh.generate.nsys import JobSpec, generate_job

TRACEWH = [sys.executable, "-m", "tracewh.cli"]
# Holds the warehouse open for writing until its stdin closes (or for at most 60 s).
HOLDER = """
import sys, tracewh
con = tracewh.connect(sys.argv[1])
print("held", flush=True)
sys.stdin.read()
con.close()
"""


def tracewh(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*TRACEWH, *args], capture_output=True, text=True, timeout=timeout)


def start_tracewh(*args: str) -> subprocess.Popen:
    return subprocess.Popen([*TRACEWH, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def until_waiting(process: subprocess.Popen) -> str:
    """The stderr `process` wrote up to and including its "waiting for the warehouse" line (all of
    it, if it ended without one): a loaded machine can take longer to start a CLI than any fixed
    sleep, so the tests release the holder only once the waiter says it waits."""
    seen = []
    for line in process.stderr:
        seen.append(line)
        if "waiting for the warehouse" in line:
            break
    return "".join(seen)


class Holder:
    """Another tracewh process holding the warehouse for writing, until release()."""

    def __init__(self, db: Path):
        self.process = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout.readline().strip() == "held"

    def release(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def jobs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("jobs")
    generate_job(root / "job_a", JobSpec(world_size=4, iterations=3, layers=3, seed=5))
    generate_job(root / "job_b", JobSpec(world_size=4, ranks_per_file=2, iterations=3, layers=3,
                                         seed=6))
    return root


@pytest.fixture(scope="module")
def reference(jobs, tmp_path_factory) -> dict:
    """Both jobs ingested one after the other, undisturbed."""
    db = tmp_path_factory.mktemp("reference") / "wh.duckdb"
    assert tracewh("ingest", str(jobs / "job_a"), "--db", str(db)).returncode == 0
    assert tracewh("ingest", str(jobs / "job_b"), "--db", str(db)).returncode == 0
    return content_checksums(db)


def busy_line(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "warehouse busy" in line]


@pytest.mark.parametrize("existing", [False, True], ids=["new-warehouse", "existing-warehouse"])
def test_two_ingests_at_once_both_finish(jobs, reference, tmp_path, existing):
    db = tmp_path / "wh.duckdb"
    if existing:
        assert tracewh("ingest", str(jobs / "job_a" / "rank0.sqlite"), "--db", str(db),
                       "--run", "job_a").returncode == 0
    first = start_tracewh("ingest", str(jobs / "job_a"), "--db", str(db))
    second = start_tracewh("ingest", str(jobs / "job_b"), "--db", str(db))
    outputs = [p.communicate(timeout=120) for p in (first, second)]
    assert [first.returncode, second.returncode] == [0, 0], outputs
    waited = [err for _, err in outputs if "waiting for the warehouse" in err]
    assert len(waited) == 1, outputs  # one of them held the file, the other waited for it
    assert "(held by another tracewh" in waited[0]
    assert tracewh("check", "--db", str(db)).returncode == 0
    assert content_checksums(db) == reference
    assert not list(tmp_path.glob(".*.creating*"))  # the atomic creation left nothing behind


def test_second_writer_with_no_wait_is_busy_and_changes_nothing(jobs, tmp_path):
    db = tmp_path / "wh.duckdb"
    assert tracewh("ingest", str(jobs / "job_a"), "--db", str(db)).returncode == 0
    before = content_checksums(db)
    holder = Holder(db)
    try:
        started = time.monotonic()
        result = tracewh("ingest", str(jobs / "job_b"), "--db", str(db), "--wait", "0")
        assert time.monotonic() - started < 30
        removed = tracewh("remove", "--run", "job_a", "--db", str(db), "--wait", "0")
    finally:
        holder.release()
    for attempt in (result, removed):
        assert attempt.returncode == 1
        lines = [line for line in attempt.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("Error: ") and busy_line(lines[0]), lines
        assert str(db) in lines[0] and "--wait" in lines[0]
    assert content_checksums(db) == before
    assert tracewh("check", "--db", str(db)).returncode == 0


def test_writer_waits_for_the_holder_then_finishes(jobs, reference, tmp_path):
    db = tmp_path / "wh.duckdb"
    assert tracewh("ingest", str(jobs / "job_a"), "--db", str(db)).returncode == 0
    holder = Holder(db)
    waiting = start_tracewh("ingest", str(jobs / "job_b"), "--db", str(db), "--wait", "60")
    said = until_waiting(waiting)
    assert waiting.poll() is None, said  # still waiting
    holder.release()
    _, rest = waiting.communicate(timeout=120)
    err = said + rest
    assert waiting.returncode == 0, err
    assert f"waiting for the warehouse {db} (held by another tracewh" in err
    assert content_checksums(db) == reference


def test_wait_gives_up_after_its_timeout(jobs, tmp_path):
    db = tmp_path / "wh.duckdb"
    assert tracewh("ingest", str(jobs / "job_a"), "--db", str(db)).returncode == 0
    holder = Holder(db)
    try:
        started = time.monotonic()
        result = tracewh("ingest", str(jobs / "job_b"), "--db", str(db), "--wait", "1.5")
        took = time.monotonic() - started
    finally:
        holder.release()
    assert result.returncode == 1 and 1.5 <= took < 30
    assert "waiting for the warehouse" in result.stderr and busy_line(result.stderr)


@pytest.mark.parametrize("command", [
    ["query", "gpu_kernel_summary"],
    ["sql", "SELECT count(*) FROM kernels"],
    ["runs"],
    ["check"],
], ids=["query", "sql", "runs", "check"])
def test_readers_wait_or_say_busy_while_a_writer_holds_it(jobs, tmp_path, command):
    """Decided: a query waits for the writer (--wait, default 60 s), then answers from the state
    the writer left; with --wait 0 it says "warehouse busy" at once."""
    db = tmp_path / "wh.duckdb"
    assert tracewh("ingest", str(jobs / "job_a"), "--db", str(db)).returncode == 0
    holder = Holder(db)
    try:
        busy = tracewh(*command, "--db", str(db), "--wait", "0")
        waiting = start_tracewh(*command, "--db", str(db), "-f", "csv") if command[0] in (
            "query", "sql", "runs") else start_tracewh(*command, "--db", str(db))
        said = until_waiting(waiting)
        assert waiting.poll() is None, said
    finally:
        holder.release()
    assert busy.returncode == 1 and busy_line(busy.stderr), busy.stderr
    out, rest = waiting.communicate(timeout=60)
    err = said + rest
    assert waiting.returncode == 0, err
    assert "waiting for the warehouse" in err


def test_queries_during_an_ingest_see_before_or_after_never_between(jobs, tmp_path):
    db = tmp_path / "wh.duckdb"
    assert tracewh("ingest", str(jobs / "job_a"), "--db", str(db)).returncode == 0
    count = "SELECT (SELECT count(*) FROM sources) || '/' || (SELECT count(*) FROM kernels)"
    before = tracewh("sql", count, "--db", str(db), "-f", "csv").stdout.splitlines()[1]
    many = tmp_path / "many"  # job_b three times over, as three runs: a longer ingest
    for copy in range(3):
        shutil.copytree(jobs / "job_b", many / f"b{copy}")
        for path in (many / f"b{copy}").iterdir():  # distinct content, same events
            with path.open("ab") as handle:
                handle.write(b"\0" * (copy + 1) * 512)
    ingest = start_tracewh("ingest", str(many), "--db", str(db), "--jobs", "1")
    seen, busy = [], 0
    while ingest.poll() is None or not seen:  # alternately: give up at once, and wait
        answer = tracewh("sql", count, "--db", str(db), "-f", "csv",
                         "--wait", "0" if len(seen) + busy < 6 else "60")
        if answer.returncode == 0:
            seen.append(answer.stdout.splitlines()[1])
        else:
            assert busy_line(answer.stderr), answer.stderr
            busy += 1
    _, err = ingest.communicate(timeout=120)
    assert ingest.returncode == 0, err
    after = tracewh("sql", count, "--db", str(db), "-f", "csv").stdout.splitlines()[1]
    assert before != after and set(seen) <= {before, after}, (before, after, seen)
    assert tracewh("check", "--db", str(db)).returncode == 0
