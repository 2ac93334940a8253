"""Benchmark: nsys SQLite ingest of a generated 8-rank export with >= 2 million kernels.

Prints, in one run, tracewh ingest's wall time, kernel rows/s, all rows/s, MB/s and peak memory
beside the floor it is measured against: a plain `SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL`
through the same SQLite reader (ADBC), and through Python's sqlite3 module for reference.
Each measurement runs in its own process, so peak RSS is that process's own.

    python bench/nsys_ingest.py [--ranks 8] [--kernels-per-rank 250000] [--out bench/out]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

READ_ADBC = """
import sys, adbc_driver_sqlite.dbapi as adbc
rows = 0
for path in sys.argv[1:]:
    con = adbc.connect(f"file:{path}?mode=ro")
    cur = con.cursor()
    cur.execute("SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL")
    rows += cur.fetch_arrow_table().num_rows
    cur.close(); con.close()
print(rows)
"""

COUNT = """
import sys, tracewh
con = tracewh.connect(sys.argv[1], read_only=True)
print(*con.execute("SELECT (SELECT count(*) FROM kernels), (SELECT sum(rows) FROM sources)").fetchall()[0])
"""

READ_SQLITE3 = """
import sys, sqlite3
rows = 0
for path in sys.argv[1:]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    for batch in iter(lambda cur=con.execute("SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL"): cur.fetchmany(65536), []):
        rows += len(batch)
    con.close()
print(rows)
"""


def measure(command: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MB of the process, and its stdout."""
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    out, err = child.stdout.read(), child.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(command)}\n{err}")
    return seconds, usage.ru_maxrss / 1024, out


GENERATE = """
import sys
from tracewh.generate.nsys import JobSpec, generate_job
spec = JobSpec(world_size=int(sys.argv[2]), iterations=5, kernels_per_rank_target=int(sys.argv[3]))
generate_job(sys.argv[1], spec)
"""


def generate(out: Path, ranks: int, kernels_per_rank: int) -> list[Path]:
    """The input set, made once (in a child process, so this one stays small: a child's peak
    RSS counts the parent's pages it was forked with)."""
    folder = out / f"nsys_{ranks}rank_{kernels_per_rank}"
    files = sorted(folder.glob("*.sqlite"))
    if len(files) != ranks:
        print(f"generating {ranks} ranks x ~{kernels_per_rank:,} kernels into {folder} ...", flush=True)
        seconds, _, _ = measure([sys.executable, "-c", GENERATE, str(folder), str(ranks),
                                 str(kernels_per_rank)])
        print(f"  generated in {seconds:.1f} s", flush=True)
        files = sorted(folder.glob("*.sqlite"))
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--kernels-per-rank", type=int, default=250_000)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    args = parser.parse_args()

    files = generate(args.out, args.ranks, args.kernels_per_rank)
    megabytes = sum(f.stat().st_size for f in files) / 1e6
    names = [str(f) for f in files]

    adbc_s, adbc_mb, kernels = measure([sys.executable, "-c", READ_ADBC, *names])
    sqlite_s, sqlite_mb, _ = measure([sys.executable, "-c", READ_SQLITE3, *names])
    kernels = int(kernels)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        ingest_s, ingest_mb, _ = measure([sys.executable, "-m", "tracewh.cli", "ingest", "--quiet",
                                          "--db", str(db), str(files[0].parent)])
        _, _, counts = measure([sys.executable, "-c", COUNT, str(db)])
        stored_kernels, rows = map(int, counts.split())
        db_mb = db.stat().st_size / 1e6
    assert stored_kernels == kernels, (stored_kernels, kernels)

    print(f"\ninput: {len(files)} files, {megabytes:,.1f} MB, {kernels:,} kernels, "
          f"{rows:,} event rows stored (warehouse {db_mb:,.1f} MB)")
    print(f"{'':34}{'seconds':>9}{'kernel rows/s':>15}{'MB/s':>9}{'peak MB':>9}")
    line = "{:34}{:9.2f}{:15,.0f}{:9.1f}{:9.0f}"
    print(line.format("SELECT * kernels, ADBC (floor)", adbc_s, kernels / adbc_s, megabytes / adbc_s, adbc_mb))
    print(line.format("SELECT * kernels, sqlite3", sqlite_s, kernels / sqlite_s, megabytes / sqlite_s, sqlite_mb))
    print(line.format("tracewh ingest (all tables)", ingest_s, kernels / ingest_s, megabytes / ingest_s, ingest_mb))
    print(f"\ntracewh ingest: {rows / ingest_s:,.0f} event rows/s of every table; "
          f"{ingest_s / adbc_s:.2f}x the ADBC kernel-table floor, "
          f"{ingest_s / sqlite_s:.2f}x the sqlite3 kernel-table read")


if __name__ == "__main__":
    main()
