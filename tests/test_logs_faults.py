"""Training logs that are not what they seem (issue 40): timer values that are no number of
milliseconds, invalid UTF-8, and special files under a log's name. Through the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import tracewh

TRACEWH = [sys.executable, "-m", "tracewh.cli"]
START_UP_S = 3  # the CLI process itself, on a loaded machine


def tracewh_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*TRACEWH, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "COLUMNS": "200"})


def test_values_that_are_no_finite_number_are_not_stored_and_said(tmp_path):
    log = tmp_path / "job.log"
    log.write_bytes(b"time (ms) | fwd: 10.5 | bwd: nan\n"
                    b"time (ms) | fwd: 11.5 | bwd: 20\n"
                    b"time (ms) | fwd: inf | bwd: 1e309\n"
                    b"time (ms) | fwd: 12.5 | bwd: -inf\n"
                    b"time (ms) | opt\xff: 3\n")
    db = tmp_path / "wh.duckdb"
    done = tracewh_cli("ingest", "--log", str(log), "--db", str(db))
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert said == [
        f"warning: {log}: 3 line(s) with a value that is no finite number (nan, inf, 1e309): "
        "those values not stored (line 1, 3, 4)",
        f"warning: {log}: invalid UTF-8 replaced (1 byte sequence(s))"], done.stderr
    con = tracewh.connect(db, read_only=True)
    rows = con.execute("SELECT timer, step, ms FROM log_timers ORDER BY timer, step").fetchall()
    con.close()
    # a line whose value is not kept is still a step of its timer
    assert rows == [("bwd", 2, 20.0), ("fwd", 1, 10.5), ("fwd", 2, 11.5), ("fwd", 4, 12.5),
                    ("opt\ufffd", 1, 3.0)]


def test_a_pipe_named_like_a_log_is_refused_not_read(tmp_path):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "a.log").write_text("time (ms) | fwd: 10.5\n")
    os.mkfifo(sweep / "b.log")  # opened for reading, it would block for ever
    db = tmp_path / "wh.duckdb"
    done = tracewh_cli("ingest", "--log", str(sweep), "--db", str(db))
    assert done.returncode != 0
    assert f"{sweep / 'b.log'}: not a regular file (a named pipe)" in done.stderr, done.stderr
    con = tracewh.connect(db, read_only=True)
    assert con.execute("SELECT run_id FROM runs").fetchall() == [("a",)]
    con.close()
    for flag in ("--log", "--series"):  # given by name, the reason is the same, not "no such file"
        done = tracewh_cli("ingest", flag, str(sweep / "b.log"), "--run", "x", "--db", str(db))
        assert done.returncode != 0
        assert "not a regular file (a named pipe)" in done.stderr, done.stderr


def test_patterns_that_backtrack_for_minutes_answer_in_seconds(tmp_path):
    """'(a+)+$' against 34 'a' and a '!', and twelve lazy template fields against a name of 120
    dashes, each ran past 120 s under Python's backtracking engine."""
    evil = tmp_path / "evil.log"
    evil.write_text("step 2.5 " + "a" * 34 + "!\n" + "step 1.5 aaa\n")
    started = time.monotonic()
    done = tracewh_cli("ingest", "--log", str(evil), "--log-pattern", r"step (?P<fwd>[0-9.]+) (a+)+$",
                       "--db", str(tmp_path / "a.duckdb"))
    assert time.monotonic() - started < 5 + START_UP_S, done.stderr
    assert done.returncode == 0, done.stderr
    con = tracewh.connect(tmp_path / "a.duckdb", read_only=True)
    assert con.execute("SELECT line_no, timer, ms FROM log_timers").fetchall() == [(2, "fwd", 1.5)]
    con.close()

    dashes = tmp_path / ("-" * 120 + ".log")
    dashes.write_text("time (ms) | fwd: 1\n")
    template = "-".join("{%s}" % chr(97 + i) for i in range(12)) + "x"
    started = time.monotonic()
    done = tracewh_cli("ingest", "--log", str(dashes), "--name-template", template,
                       "--db", str(tmp_path / "b.duckdb"))
    assert time.monotonic() - started < 5 + START_UP_S, done.stderr
    assert done.returncode == 0 and "name does not match --name-template" in done.stderr


def test_a_pattern_re2_cannot_read_is_one_line():
    done = tracewh_cli("ingest", "--log", "x.log", "--log-pattern", r"(?P<ms>\d+)(?= ms)")
    assert done.returncode != 0
    assert done.stderr.strip() == (
        "Error: --log-pattern: not a regular expression RE2 reads: invalid perl operator: (?= - "
        "look-around and back-references are not read: lines are matched in linear time")
