"""Runaway queries: does Ctrl-C stop them, do memory bombs stop at the limit, with one line?

Ctrl-C trials start `tracewh sql` on a query that never ends (a recursive CTE, or a result of a
trillion rows), wait until it has opened the warehouse (its lock shows in /proc/locks), wait a
random 0-3 s more, send SIGINT, and sort what came back: "one line" (exit 130, one line
saying interrupted), "traceback", "hung" (still running 30 s later), or other. Memory trials run
each bomb at --memory-limit and report the exit, the line, the seconds and the peak RSS.

Usage:
    python bench/query_stops.py --db sample_db/sample.duckdb --trials 20 [--memory-limit 300MB]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

TRACEWH = [sys.executable, "-m", "tracewh.cli"]
FOREVER = {
    "recursive CTE": "WITH RECURSIVE t(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM t) "
                     "SELECT count(*) FROM t",
    "range(1e12) to csv": "SELECT * FROM range(1000000000000)",
}
BOMBS = {
    "result of 1e12 rows": "SELECT * FROM range(1000000000000)",
    "list of 1e9 values": "SELECT list(i) FROM range(1000000000) t(i)",
    "distinct of 2e8 strings": "SELECT count(DISTINCT i::VARCHAR || repeat('x', 40)) "
                               "FROM range(200000000) t(i)",
}


def holds_a_lock(pid: int) -> bool:
    return any(len(f := line.split()) > 4 and f[4] == str(pid)
               for line in Path("/proc/locks").read_text().splitlines())


def ctrl_c_trial(db: str, sql: str, delay: float) -> str:
    process = subprocess.Popen([*TRACEWH, "sql", sql, "--db", db, "-f", "csv"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not holds_a_lock(process.pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    try:
        _, stderr = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return "hung"
    lines = [line for line in stderr.splitlines() if line.strip()]
    if "Traceback" in stderr:
        return "traceback"
    if process.returncode == 130 and len(lines) == 1 and "interrupted" in lines[0]:
        return "one line"
    return f"exit {process.returncode}: {' | '.join(lines)[:120]}"


def bomb(db: str, sql: str, memory_limit: str, timeout: float) -> str:
    started = time.monotonic()
    process = subprocess.Popen([*TRACEWH, "sql", sql, "--db", db, "-f", "csv",
                                "--memory-limit", memory_limit, "--timeout", str(timeout)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    lines = [line for line in stderr.splitlines() if line.strip()]
    return (f"exit {os.waitstatus_to_exitcode(status)}, {len(lines)} line(s), "
            f"{time.monotonic() - started:.1f} s, peak {usage.ru_maxrss / 1024:.0f} MB: "
            f"{lines[0][:110] if lines else ''}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--memory-limit", default="300MB")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    chance = random.Random(args.seed)
    for name, sql in FOREVER.items():
        outcomes = Counter(ctrl_c_trial(args.db, sql, chance.uniform(0, 3))
                           for _ in range(args.trials))
        print(f"Ctrl-C on {name}: {outcomes['one line']}/{args.trials} one line; "
              + ", ".join(f"{n} {k}" for k, n in outcomes.items() if k != "one line"))
    for name, sql in BOMBS.items():
        print(f"{name} at --memory-limit {args.memory_limit}: "
              f"{bomb(args.db, sql, args.memory_limit, args.timeout)}")


if __name__ == "__main__":
    main()
