"""Benchmark: does `tracewh export` of one run depend on how many other runs the warehouse holds?

Issue 42 item 2: 40 runs x 8 ranks (1.6 M rows) took 489 s to export, one of those runs 10.6 s
from that warehouse and 2.0 s from a warehouse of its own (each view was recomputed over the
whole warehouse per run and rank). Issue 40 item 14: a 1,024-rank run wrote 2,459 of ~11,000
rank folders in 600 s. Cases, each export a process of its own, wall seconds:

- generated: 40 runs x 8 ranks (`tracewh generate kineto`, a seed each); the whole export, and
  `--run` of one run from the 40-run warehouse and from a warehouse of that run alone;
- real-shaped: the real 8-rank DLRM Kineto capture (../shared/data, param) tiled as N runs (each
  copy made distinct by trailing blanks, which JSON ignores); the same three measurements;
- 1,024 ranks in one run (generated): the whole export.

    python bench/export_scale.py [--runs 40] [--real-runs 10] [--out bench/out/export_scale]

Warehouses are built once under --out and reused.

Measured 2026-11-28 on the shared 2-core machine under heavy load (wall is 5-10x CPU; quote CPU):
run g00 from the 40-run warehouse 6.0 CPU s (67 s wall) against 16.4 (135 s) before, 0.37x;
from a warehouse of its own 3.3 CPU s against 5.5, 0.59x; so from 40 runs / alone: 1.8x now,
3.0x before (what is left: gpu_op_launches 0.14 -> 0.98 CPU s, its run filter is not pushed
through its join, and the small per-run views runs, run_config, series, parallel_groups).
Whole 40-run export 396 s wall; real DLRM x 10: 62 s whole, one run 47.8 s from it, 46.7 s alone.
One run of 1,024 ranks (99,328 rows): 53.7 s wall, one file per view.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DLRM = Path(os.environ.get("TRACEWH_SHARED", HERE.parent.parent / "shared")) / "data" / "kineto" \
    / "param" / "dlrm_kineto"


def tracewh(*args: str) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tracewh.cli", *args], capture_output=True,
                          text=True)
    if done.returncode != 0:
        sys.exit(f"failed: tracewh {' '.join(args)}\n{done.stderr}")
    return time.perf_counter() - started, done.stderr


def build(db: Path, make_traces) -> Path:
    """A warehouse of the traces `make_traces(folder)` writes, one subfolder a run; reused."""
    if not db.exists():
        traces = db.with_suffix(".traces")
        shutil.rmtree(traces, ignore_errors=True)
        make_traces(traces)
        tracewh("ingest", "--quiet", "--db", str(db), str(traces))
        shutil.rmtree(traces)
    return db


def generated(runs: int, ranks: int, iterations: int, layers: int):
    def make(folder: Path) -> None:
        for run in range(runs):
            tracewh("generate", "kineto", str(folder / f"g{run:02d}"), "--ranks", str(ranks),
                    "--iterations", str(iterations), "--layers", str(layers),
                    "--seed", str(run))
    return make


def tiled_dlrm(runs: int):
    def make(folder: Path) -> None:
        for run in range(runs):
            copy = folder / f"dlrm{run:02d}"
            copy.mkdir(parents=True)
            for trace in sorted(DLRM.glob("*.json")):
                (copy / trace.name).write_bytes(trace.read_bytes() + b" " * (run + 1))
    return make


def export_seconds(db: Path, lake: Path, *args: str) -> float:
    shutil.rmtree(lake, ignore_errors=True)
    seconds, _ = tracewh("export", str(lake), "--db", str(db), *args)
    shutil.rmtree(lake, ignore_errors=True)
    return seconds


def rows(db: Path) -> int:
    import tracewh as tw

    con = tw.connect(db, read_only=True)
    try:
        return con.execute("SELECT sum(rows) FROM sources").fetchall()[0][0]
    finally:
        con.close()


def one_run_against_many(name: str, many: Path, alone: Path, run: str, lake: Path) -> None:
    whole = export_seconds(many, lake)
    from_many = export_seconds(many, lake, "--run", run)
    from_alone = export_seconds(alone, lake, "--run", run)
    print(f"{name}: whole export {whole:6.1f} s ({rows(many):,} rows, "
          f"{many.stat().st_size / 1e6:.0f} MB); run {run}: {from_many:5.1f} s from it, "
          f"{from_alone:5.1f} s from a warehouse of that run alone "
          f"(ratio {from_many / from_alone:.2f})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--real-runs", type=int, default=10)
    parser.add_argument("--ranks", type=int, default=1024, help="ranks of the one big run")
    parser.add_argument("--out", type=Path, default=HERE / "out" / "export_scale")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    lake = args.out / "lake"

    many = build(args.out / f"gen{args.runs}.duckdb", generated(args.runs, 8, 4, 16))
    alone = build(args.out / "gen1.duckdb", generated(1, 8, 4, 16))  # the first run, seed 0
    one_run_against_many(f"generated {args.runs} runs x 8 ranks", many, alone, "g00", lake)

    if DLRM.exists():
        real = build(args.out / f"dlrm{args.real_runs}.duckdb", tiled_dlrm(args.real_runs))
        real_alone = build(args.out / "dlrm1.duckdb", tiled_dlrm(1))
        one_run_against_many(f"real DLRM x {args.real_runs} runs x 8 ranks", real, real_alone,
                             "dlrm00", lake)
    else:
        print(f"real-shaped case skipped: {DLRM} absent (set TRACEWH_SHARED)")

    wide = build(args.out / f"ranks{args.ranks}.duckdb", generated(1, args.ranks, 1, 1))
    seconds = export_seconds(wide, lake)
    print(f"one run of {args.ranks:,} ranks: export {seconds:.1f} s ({rows(wide):,} rows)")


if __name__ == "__main__":
    main()
