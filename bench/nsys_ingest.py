"""Benchmark: nsys SQLite ingest against an ADBC scan of the same tables, in one run.

Inputs (`--input`):
* `real` (default): the realistic bench set of bench/nsys_tiled.py, the real autograd-NVTX capture
  tiled in time into 8 rank exports (4.25 M kernels, 20 M NVTX ranges, 2.5 GB), made once and
  cached (`--tiled-out`, `--ranks`, `--tiles` as nsys_tiled.py takes them);
* `generated`: a generated 8-rank job with >= 2 million kernels and a handful of NVTX ranges per
  step (`--kernels-per-rank`), made once under `--out`.

Prints, each in its own child process (so peak RSS is that process's own): an ADBC scan of every
table tracewh reads from the exports (tracewh.ingest.nsys.TABLES; the few-row metadata tables
aside), `SELECT *` into Arrow through the same SQLite driver tracewh reads them with; the same scan
of only the columns tracewh reads; and `tracewh ingest --quiet` of the folder into a new
warehouse. For each: wall seconds, CPU seconds, rows/s (rows of those tables), MB/s of input, peak
RSS, and the ingest's time as a multiple of the scans'. The scans use one core, the ingest every
core: the ratio is the one a user sees, and CPU seconds say what each costs. The 1-minute load
average is printed at the end: the machine may be shared, so compare ratios of one run.

    python bench/nsys_ingest.py [--input real|generated] [--ranks 8] [--tiles 265]
                                [--tiled-out bench/out/nsys_tiled] [--kernels-per-rank 250000]
                                [--out bench/out] [--ingest-only]
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

# argv: "*" or "columns", then the files. Prints the rows read.
SCAN_ADBC = """
import sys, adbc_driver_sqlite.dbapi as adbc
from tracewh.ingest.nsys import TABLES
mode, rows = sys.argv[1], 0
for path in sys.argv[2:]:
    con = adbc.connect(f"file:{path}?mode=ro")
    cur = con.cursor()
    cur.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
    present = {name for (name,) in cur.fetchall()}
    for table, columns in TABLES.values():
        if table not in present:
            continue
        if mode == "*":
            select = "*"
        else:
            cur.execute(f"SELECT name FROM pragma_table_info('{table}')")
            have = {name for (name,) in cur.fetchall()} | {"rowid"}
            select = ", ".join(f'"{c}"' for c in columns if c in have)
        cur.execute(f'SELECT {select} FROM "{table}"')
        rows += cur.fetch_arrow_table().num_rows
    cur.close()
    con.close()
print(rows)
"""

COUNT = """
import sys, tracewh
con = tracewh.connect(sys.argv[1], read_only=True)
print(*con.execute("SELECT (SELECT count(*) FROM kernels), (SELECT count(*) FROM nvtx_ranges), "
                   "(SELECT sum(rows) FROM sources)").fetchall()[0])
"""

GENERATE = """
import sys
from tracewh.generate.nsys import JobSpec, generate_job
spec = JobSpec(world_size=int(sys.argv[2]), iterations=5, kernels_per_rank_target=int(sys.argv[3]))
generate_job(sys.argv[1], spec)
"""

TILE = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from nsys_tiled import build
build(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
"""


def run(command: list[str]) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds (user + sys), peak RSS in MB of the process, and its stdout
    (read from a temporary file, so that the pipe never blocks the child)."""
    with tempfile.TemporaryFile("w+") as out:
        started = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        err = child.stderr.read()
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"failed: {' '.join(command)}\n{err}")
        out.seek(0)
        return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read()


def generated(out: Path, ranks: int, kernels_per_rank: int) -> list[Path]:
    """The generated set, made once (in a child process, so this one stays small: a child's peak
    RSS counts the parent's pages it was forked with)."""
    folder = out / f"nsys_{ranks}rank_{kernels_per_rank}"
    files = sorted(folder.glob("*.sqlite"))
    if len(files) != ranks:
        print(f"generating {ranks} ranks x ~{kernels_per_rank:,} kernels into {folder} ...", flush=True)
        seconds, *_ = run([sys.executable, "-c", GENERATE, str(folder), str(ranks),
                           str(kernels_per_rank)])
        print(f"  generated in {seconds:.1f} s", flush=True)
        files = sorted(folder.glob("*.sqlite"))
    return files


def tiled(out: Path, ranks: int, tiles: int) -> list[Path]:
    """The realistic set of bench/nsys_tiled.py (made once, in a child process)."""
    folder = out / f"mfu_{ranks}rank_{tiles}tiles"
    run([sys.executable, "-c", TILE, str(HERE), str(out), str(ranks), str(tiles)])
    return [folder / f"rank{r}.sqlite" for r in range(ranks)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", choices=("real", "generated"), default="real")
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--tiles", type=int, default=265, help="real: tiles per rank")
    parser.add_argument("--tiled-out", type=Path, default=HERE / "out" / "nsys_tiled",
                        help="real: where nsys_tiled.py keeps its sets")
    parser.add_argument("--kernels-per-rank", type=int, default=250_000, help="generated")
    parser.add_argument("--out", type=Path, default=HERE / "out", help="generated: where it is kept")
    parser.add_argument("--ingest-only", action="store_true", help="skip the ADBC scans")
    args = parser.parse_args()

    if args.input == "real":
        files = tiled(args.tiled_out, args.ranks, args.tiles)
    else:
        files = generated(args.out, args.ranks, args.kernels_per_rank)
    megabytes = sum(f.stat().st_size for f in files) / 1e6
    names = [str(f) for f in files]

    scans = {}
    if not args.ingest_only:
        for mode, label in (("*", "ADBC SELECT * of those tables"),
                            ("columns", "ADBC SELECT of the columns read")):
            scans[label] = run([sys.executable, "-c", SCAN_ADBC, mode, *names])
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        ingest = run([sys.executable, "-m", "tracewh.cli", "ingest", "--quiet", "--db", str(db),
                      *names])
        _, _, _, counts = run([sys.executable, "-c", COUNT, str(db)])
        kernels, ranges, stored = map(int, counts.split())
        db_mb = db.stat().st_size / 1e6
    read = {int(out) for *_, out in scans.values()}
    assert len(read) <= 1, read
    rows = read.pop() if read else stored

    print(f"\ninput ({args.input}): {len(files)} files, {megabytes:,.1f} MB, {rows:,} rows in the "
          f"tables tracewh reads; stored {kernels:,} kernels, {ranges:,} NVTX ranges, "
          f"{stored:,} rows (warehouse {db_mb:,.1f} MB)")
    print(f"{'':34}{'seconds':>9}{'CPU s':>8}{'rows/s':>12}{'MB/s':>8}{'peak MB':>9}{'ingest/this':>13}")
    line = "{:34}{:9.2f}{:8.1f}{:12,.0f}{:8.1f}{:9.0f}{:>13}"
    ingest_s = ingest[0]
    for label, (seconds, cpu, peak, _) in [*scans.items(), ("tracewh ingest", ingest)]:
        ratio = f"{ingest_s / seconds:.2f}x" if label != "tracewh ingest" else ""
        print(line.format(label, seconds, cpu, rows / seconds, megabytes / seconds, peak, ratio))
    print(f"\nload average (1 min) at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
