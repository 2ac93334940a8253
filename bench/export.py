"""Benchmark: `tracewh export` of a generated 8-rank warehouse with >= 8 million GPU ops.

Prints wall time, rows/s, MB/s (Parquet written, and warehouse read) and peak memory of the
export, beside a baseline in the same run: DuckDB's own COPY of the biggest view (gpu_ops) to
one unpartitioned Parquet file. A second export of the unchanged warehouse shows the
incremental skip. Each measurement runs in its own process.

    python bench/export.py [--db bench/out/metrics_8rank_1000000/wh.duckdb]

The warehouse is the one bench/metrics.py builds (it is built here when missing).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DB = HERE / "out" / "metrics_8rank_1000000" / "wh.duckdb"

BASELINE = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
con.execute(f"COPY (SELECT * FROM gpu_ops) TO '{sys.argv[2]}' (FORMAT PARQUET, COMPRESSION zstd)")
"""

COUNT = """
import sys, tracewh
con = tracewh.connect(sys.argv[1], read_only=True)
print(con.execute("SELECT (SELECT count(*) FROM gpu_ops), (SELECT sum(rows) FROM sources)").fetchall()[0][0],
      con.execute("SELECT sum(rows) FROM sources").fetchall()[0][0])
"""


def measure(command: list[str]) -> tuple[float, float, str]:
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    out, err = child.stdout.read(), child.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(command)}\n{err}")
    return seconds, usage.ru_maxrss / 1024, out + err


def ensure_warehouse(db: Path) -> None:
    if db.exists():
        return
    spec = importlib.util.spec_from_file_location("bench_metrics", HERE / "metrics.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    print(f"{db} missing: building it with bench/metrics.py (takes a few minutes) ...", flush=True)
    subprocess.run([sys.executable, str(HERE / "metrics.py"), "--build-only"], check=False)
    if not db.exists():
        sys.exit(f"no warehouse at {db}: run python bench/metrics.py first")


def folder_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=DEFAULT_DB)
    args = parser.parse_args()
    ensure_warehouse(args.db)
    _, _, counts = measure([sys.executable, "-c", COUNT, str(args.db)])
    gpu_ops, event_rows = map(int, counts.split())
    warehouse_mb = args.db.stat().st_size / 1e6
    with tempfile.TemporaryDirectory() as tmp:
        lake = Path(tmp) / "lake"
        export_s, export_mb, _ = measure([sys.executable, "-m", "tracewh.cli", "export", str(lake),
                                          "--db", str(args.db)])
        lake_mb = folder_mb(lake)
        again_s, _, _ = measure([sys.executable, "-m", "tracewh.cli", "export", str(lake),
                                 "--db", str(args.db)])
        baseline_file = Path(tmp) / "gpu_ops.parquet"
        base_s, base_mb, _ = measure([sys.executable, "-c", BASELINE, str(args.db), str(baseline_file)])
        base_out_mb = baseline_file.stat().st_size / 1e6
        shutil.rmtree(lake, ignore_errors=True)

    print(f"\nwarehouse: {args.db} ({warehouse_mb:,.0f} MB), {gpu_ops:,} GPU ops, {event_rows:,} event rows")
    print(f"{'':40}{'seconds':>9}{'rows/s':>14}{'out MB':>9}{'out MB/s':>10}{'peak MB':>9}")
    line = "{:40}{:9.2f}{:14,.0f}{:9.0f}{:10.1f}{:9.0f}"
    print(line.format("tracewh export (every view, partitioned)", export_s, gpu_ops / export_s,
                      lake_mb, lake_mb / export_s, export_mb))
    print(line.format("DuckDB COPY gpu_ops -> one file (base)", base_s, gpu_ops / base_s,
                      base_out_mb, base_out_mb / base_s, base_mb))
    print(f"\nexport reads the warehouse at {warehouse_mb / export_s:,.0f} MB/s; "
          f"{export_s / base_s:.2f}x the single-file COPY of gpu_ops alone; "
          f"re-export of the unchanged warehouse: {again_s:.2f} s (every run skipped)")


if __name__ == "__main__":
    main()
