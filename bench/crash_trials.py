"""kill -9 a running `tracewh ingest` at random points; prove the warehouse survives every time.

Each trial copies a base warehouse (or, one trial in four, starts with none), starts
`tracewh ingest` on a small generated job in a subprocess, kills it with SIGKILL after a random
delay spread over a clean ingest's duration (measured first), and then requires that

1. the warehouse opens as it was left and `tracewh check` passes (every table reads back, no
   partial source, no rows without a source, runs/ranks/devices consistent, migrations
   recorded, views answer), or, when the kill came before the file existed, that there is no
   warehouse file at all (not even a half-made one);
2. ingesting the same files again exits 0, `tracewh check` passes again, and every stored table
   equals an uninterrupted ingest's, row for row (file ids, timestamps of the ingest itself
   aside).

Usage:
    python bench/crash_trials.py --trials 20 --out /tmp/crash [--seed 1] [--parallel 2] [--json]

Prints one line per trial and `kill -9: N/N trials consistent`; exits 1 if any trial was not.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import duckdb

from tracewh.check import content_checksums
from tracewh.generate.nsys import JobSpec, generate_job

TRACEWH = [sys.executable, "-m", "tracewh.cli"]


@dataclass
class Trial:
    number: int
    fresh: bool             # started without a warehouse file
    delay_s: float          # when the SIGKILL was sent
    finished_first: bool    # the ingest ended before the kill
    sources_after_kill: int | None  # None: no warehouse file after the kill
    check_after_kill: str   # "ok" or the check's output
    reingest: str           # "ok" or the ingest's output
    check_after_reingest: str
    equal_to_reference: bool

    @property
    def consistent(self) -> bool:
        return (self.check_after_kill == "ok" and self.reingest == "ok"
                and self.check_after_reingest == "ok" and self.equal_to_reference)


def make_inputs(root: Path) -> Path:
    """Two small jobs: one report per rank, and reports holding two ranks each."""
    traces = root / "traces"
    if not traces.exists():
        generate_job(traces / "job_a", JobSpec(world_size=4, iterations=3, layers=3, seed=1))
        generate_job(traces / "job_b", JobSpec(world_size=4, ranks_per_file=2, iterations=3,
                                               layers=3, seed=2))
    return traces


def run_tracewh(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*TRACEWH, *args], capture_output=True, text=True, timeout=timeout)


def _data(checksums: dict) -> dict:
    """Everything but store.meta, which records the version of the view SQL (recreated from
    the code on open, not data an ingest writes)."""
    return {table: sums for table, sums in checksums.items() if table != "meta"}


def _short(result: subprocess.CompletedProcess) -> str:
    if result.returncode == 0:
        return "ok"
    return f"exit {result.returncode}: " + " | ".join(result.stderr.strip().splitlines()[-3:])


def one_trial(number: int, fresh: bool, delay: float, traces: Path, base: Path, work: Path,
              reference: dict) -> Trial:
    folder = work / f"trial{number:03d}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    db = folder / "wh.duckdb"
    if not fresh:
        shutil.copy(base, db)
    process = subprocess.Popen([*TRACEWH, "ingest", str(traces), "--db", str(db), "--quiet",
                                "--jobs", "1"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    time.sleep(delay)
    finished_first = process.poll() is not None
    if not finished_first:
        os.kill(process.pid, signal.SIGKILL)
    process.wait()

    sources = None
    if db.exists():  # it opens as it is (no upgrade) and passes the check
        check = run_tracewh("check", "--db", str(db), "--wait", "10")
        check_after_kill = _short(check)
        if check.returncode == 0:
            con = duckdb.connect(str(db), read_only=True)
            sources = con.execute("SELECT count(*) FROM store.sources").fetchall()[0][0]
            con.close()
    else:  # killed before the warehouse existed: nothing may be half-made at its path either
        stray = [p.name for p in folder.iterdir() if ".creating" not in p.name]
        check_after_kill = "ok" if not stray else f"stray files {stray}"
    again = run_tracewh("ingest", str(traces), "--db", str(db), "--quiet", "--wait", "10")
    check = run_tracewh("check", "--db", str(db), "--wait", "10")
    equal = check.returncode == 0 and _data(content_checksums(db)) == _data(reference)
    trial = Trial(number, fresh, round(delay, 3), finished_first, sources, check_after_kill,
                  _short(again), _short(check), equal)
    if trial.consistent:
        shutil.rmtree(folder, ignore_errors=True)  # keep only the evidence of failures
    return trial


def _timed_ingests(traces: Path, base: Path, reference_db: Path, parallel: int):
    """How long a clean ingest takes with `parallel` of them running at once (as the trials
    will), and the first one's result, ingested into `reference_db`."""
    targets = [reference_db] + [reference_db.with_name(f"timing{n}.duckdb")
                                for n in range(1, parallel)]
    for target in targets[1:]:
        shutil.copy(base, target)

    def timed(target: Path):
        started = time.perf_counter()
        done = run_tracewh("ingest", str(traces), "--db", str(target), "--quiet", "--jobs", "1")
        return time.perf_counter() - started, done

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        timings = list(pool.map(timed, targets))
    for target in targets[1:]:
        target.unlink(missing_ok=True)
    return max(t for t, _ in timings), timings[0][1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--out", type=Path, default=Path("bench/out/crash_trials"))
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--parallel", type=int, default=2, help="trials run at once")
    parser.add_argument("--json", action="store_true", help="print the trials as JSON too")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    traces = make_inputs(args.out)
    first = sorted(traces.rglob("*.sqlite"))[0]

    base = args.out / "base.duckdb"  # a warehouse holding one of the files already
    for leftover in (base, base.with_name(base.name + ".wal")):
        leftover.unlink(missing_ok=True)
    result = run_tracewh("ingest", str(first), "--db", str(base), "--quiet")
    if result.returncode != 0:
        print(f"cannot build the base warehouse: {result.stderr}", file=sys.stderr)
        return 2

    reference_db = args.out / "reference.duckdb"
    for leftover in (reference_db, reference_db.with_name(reference_db.name + ".wal")):
        leftover.unlink(missing_ok=True)
    shutil.copy(base, reference_db)
    duration, result = _timed_ingests(traces, base, reference_db, max(1, args.parallel))
    if result.returncode != 0:
        print(f"the uninterrupted ingest failed: {result.stderr}", file=sys.stderr)
        return 2
    reference = content_checksums(reference_db)
    print(f"seed {args.seed}; a clean ingest takes {duration:.2f} s; "
          f"killing at uniform random times in [0, {duration * 1.05:.2f}] s")

    plans = [(n, n % 4 == 3, rng.uniform(0.0, duration * 1.05)) for n in range(args.trials)]
    with ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
        trials = list(pool.map(
            lambda plan: one_trial(*plan, traces, base, args.out, reference), plans))
    for trial in trials:
        state = ("no warehouse yet" if trial.sources_after_kill is None and trial.fresh
                 and trial.check_after_kill == "ok"
                 else f"{trial.sources_after_kill} source(s) committed")
        verdict = "consistent" if trial.consistent else "INCONSISTENT"
        print(f"trial {trial.number:2d}: {'fresh' if trial.fresh else 'base '} kill at "
              f"{trial.delay_s:5.2f} s{' (already done)' if trial.finished_first else ''}: "
              f"{state}; check {trial.check_after_kill}; re-ingest {trial.reingest}; "
              f"check {trial.check_after_reingest}; equal to reference "
              f"{trial.equal_to_reference}: {verdict}")
    good = sum(t.consistent for t in trials)
    mid = sum(1 for t in trials if not t.finished_first)
    spread = Counter("none" if t.sources_after_kill is None else t.sources_after_kill
                     for t in trials)
    print(f"sources committed when killed (base holds 1): "
          + ", ".join(f"{k}: {v}" for k, v in sorted(spread.items(), key=str)))
    print(f"kill -9: {good}/{len(trials)} trials consistent ({mid} killed mid-run)")
    if args.json:
        print(json.dumps({"seed": args.seed, "duration_s": duration, "consistent": good,
                          "trials": [asdict(t) | {"consistent": t.consistent} for t in trials]}))
    return 0 if good == len(trials) else 1


if __name__ == "__main__":
    sys.exit(main())
