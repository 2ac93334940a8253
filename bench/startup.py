"""Benchmark: how long `tracewh --help`, `tracewh metrics list` and `tracewh runs` take to
answer, each a fresh process (what a person waits for), interleaved so a busy machine slows
them alike. Prints the median wall time and the median CPU time (user + system) per command:
on a shared machine the wall time follows the load, the CPU time does not.

    python bench/startup.py [--repeat 7]

The warehouse for `runs` is the shipped sample (sample_db/traces), ingested into a temp folder.
Python's compiled bytecode is kept in a temp folder (PYTHONPYCACHEPREFIX), as an installed
tracewh has it, even where PYTHONDONTWRITEBYTECODE is set: compiling tracewh's own modules from
source at every start costs ~0.03 s more. Target (issue 23): under 0.3 s each.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one `python -m tracewh.cli ARGS` process."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "tracewh.cli", *args], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"tracewh {' '.join(args)} failed")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "sample.duckdb")
        subprocess.run([sys.executable, "-m", "tracewh.cli", "ingest", "-q",
                        str(ROOT / "sample_db" / "traces"), "--db", db], check=True)
        commands = {"--help": ["--help"], "metrics list": ["metrics", "list"],
                    "runs": ["runs", "--db", db], "python -c pass (floor)": None}
        seen: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        env = {key: value for key, value in os.environ.items()
               if key != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pyc")
        for args in commands.values():  # once, unmeasured: the bytecode is written
            if args is not None:
                timed(args, env)
        for _ in range(options.repeat):
            for name, args in commands.items():
                if args is None:
                    started = time.perf_counter()
                    process = subprocess.Popen([sys.executable, "-c", "pass"], env=env)
                    _, _, usage = os.wait4(process.pid, 0)
                    seen[name].append((time.perf_counter() - started,
                                       usage.ru_utime + usage.ru_stime))
                else:
                    seen[name].append(timed(args, env))
    print(f"{'command':<26}{'wall (median)':>15}{'CPU (median)':>15}   {options.repeat} runs each,"
          f" load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for name, runs in seen.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"tracewh {name:<18}{wall:>13.3f} s{cpu:>13.3f} s" if not name.startswith("python")
              else f"{name:<26}{wall:>13.3f} s{cpu:>13.3f} s")


if __name__ == "__main__":
    main()
