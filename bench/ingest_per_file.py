"""Benchmark: what `tracewh ingest` costs per file beyond decoding it, on many small nsys files.

Generates N small nsys exports (one job, one file per rank), then, each in its own process:
  ingest   `tracewh ingest DIR --jobs 1` into a new warehouse (the whole command)
  decode   for every file what ingest calls decoding: hashing it and nsys.prepare (its
           metadata read and its tables staged: into Arrow tables for a small export, as ingest
           reads it to write it in a batch; into temp tables for a big one), on a warehouse cursor
and prints wall and CPU seconds of each and the CPU per file beyond decoding. CPU time, since
on a shared machine the wall time follows the load. Target (issue 23): under 25 ms per file.

    python bench/ingest_per_file.py [--files 256]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DECODE = """
import sys
from pathlib import Path
import tracewh
from tracewh.ingest import sha256_of
from tracewh.ingest.nsys import prepare
from tracewh.warehouse import cursor
con = tracewh.connect(sys.argv[1])
for path in sorted(Path(sys.argv[2]).glob("*.sqlite")):
    sha256_of(path)
    staging = cursor(con)
    prepare(staging, path)
    staging.close()
"""


def timed(args: list[str]) -> tuple[float, float]:
    started = time.perf_counter()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(args[:4])} ... failed")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=256)
    options = parser.parse_args()
    from tracewh.generate.nsys import JobSpec, generate_job

    with tempfile.TemporaryDirectory() as tmp:
        traces = Path(tmp) / "job"
        generate_job(traces, JobSpec(world_size=options.files, iterations=1, layers=1))
        megabytes = sum(p.stat().st_size for p in traces.iterdir()) / 1e6
        ingest = timed([sys.executable, "-m", "tracewh.cli", "ingest", "-q", "--jobs", "1",
                        str(traces), "--db", str(Path(tmp) / "ingest.duckdb")])
        decode = timed([sys.executable, "-c", DECODE, str(Path(tmp) / "decode.duckdb"),
                        str(traces)])
    n = options.files
    print(f"{n} nsys files, {megabytes:.1f} MB; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")
    print(f"  ingest (whole command)  {ingest[0]:7.1f} s wall {ingest[1]:7.1f} s CPU")
    print(f"  decoding alone          {decode[0]:7.1f} s wall {decode[1]:7.1f} s CPU")
    print(f"  beyond decoding: {1000 * (ingest[1] - decode[1]) / n:.0f} ms CPU per file "
          f"(target: under 25)")


if __name__ == "__main__":
    main()
