"""Benchmark: does `tracewh export` of one run depend on how many other runs the warehouse holds,
and how long do a many-run warehouse and a many-rank run take?

Issue 42 item 2: 40 runs x 8 ranks (1.6 M rows) took 489 s to export, one of those runs 10.6 s
from that warehouse and 2.0 s from a warehouse of its own (each view was recomputed over the
whole warehouse per run and rank). Issue 40 item 14: a 1,024-rank run wrote 2,459 of ~11,000
rank folders in 600 s. One line per case, each export a process of its own: wall and CPU
seconds (user + sys), its peak memory, the load average over it (the machine is shared; quote
CPU when the load is above its 2 cores):

- generated: RUNS runs x 8 ranks (`tracewh generate kineto`, a seed each): the whole export,
  and `--run` of the first run from that warehouse and from a warehouse of that run alone;
- real-shaped: the real 8-rank DLRM Kineto capture (../shared/data, param) tiled as REAL_RUNS
  runs (each copy made distinct by trailing blanks, which JSON ignores); the same three;
- one run of RANKS ranks, generated, and one of REAL_RANKS ranks tiled from the DLRM capture
  (copy k of rank r says rank 8k + r of a world of REAL_RANKS): the whole export.

    python bench/export_scale.py                       # 10 runs, 256 and 64 ranks: a few minutes
    python bench/export_scale.py --runs 40 --ranks 1024   # issue 42's sizes

Warehouses are built once under --out (named by their size) and reused.

Measured 2026-11-29 with `--runs 40 --ranks 1024` on the shared 2-core machine at load 15-17
(wall is 5-8x CPU there; quote CPU): 40 runs x 8 ranks (1,064,960 rows) whole export 23.6 CPU s
(160.8 s wall, 514 MB); run g00 from it 8.6 CPU s, from its own warehouse 6.8: 1.27x (1.8x
before gpu_op_launches_of, 3.0x before the single pass). Real DLRM x 10: whole 10.4 CPU s
(90.1 s wall); dlrm00 from it 7.8 CPU s, alone 7.8: 0.99x. One run of 1,024 ranks (99,328 rows):
26.7 CPU s (153.1 s wall, 316 MB; main 24.6, one run each: a row group per rank and view, 13,323
pyarrow write_table calls, are half of it). Real DLRM tiled to 64 ranks (158,760 rows): 8.1 CPU s
(42.6 s wall).

After the <view>_of(runs) forms of perf_iteration_flops, parallel_groups, run_config and runs
(op_kernels planning the models once), from the warehouses of that session, interleaved by
pairs: run g00 from 40 runs vs alone 6.4 vs 5.9 CPU s, 1.07x (main 11.7 vs 8.9, 1.21x), peak
288 vs 228 MB (main 437 vs 263); a second try at load 15-20, 1.19x (0.97-1.24). DLRM x 10:
6.5 vs 6.3 CPU s, 1.05x (main 9.9 vs 9.7). Whole 40 x 8 export 23.2 CPU s (main 29.2; wall
226 s at load 20); one run of 1,024 ranks 29.1 CPU s (main 31.1; wall 76 s at load 12). The
lakes (whole and --run g00) hold what main's do, file for file. What still grows with the warehouse: series compares every run's
configuration, and the launch link's calls (launch_cpu_ops_of) are joined before their file
range cuts them.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DLRM = Path(os.environ.get("TRACEWH_SHARED", HERE.parent.parent / "shared")) / "data" / "kineto" \
    / "param" / "dlrm_kineto"
DLRM_RANKS = 8
_RANK = re.compile(rb'("distributedInfo"\s*:\s*\{[^}]*"rank"\s*:\s*)(\d+)'
                   rb'(\s*,\s*"world_size"\s*:\s*)(\d+)')


class Measured:
    """One tracewh command run as a process: wall and CPU seconds, peak MB, load over it."""

    def __init__(self, *args: str):
        load = os.getloadavg()[0]
        started = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "tracewh.cli", *args],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        err = child.stderr.read()
        _, status, usage = os.wait4(child.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"failed: tracewh {' '.join(args)}\n{err}")
        self.wall = time.perf_counter() - started
        self.cpu = usage.ru_utime + usage.ru_stime
        self.peak_mb = usage.ru_maxrss / 1024
        self.load = (load + os.getloadavg()[0]) / 2

    def __str__(self) -> str:
        return (f"{self.wall:6.1f} s wall {self.cpu:6.1f} s CPU {self.peak_mb:5.0f} MB peak "
                f"load {self.load:4.1f}")


def build(db: Path, make_traces) -> Path:
    """A warehouse of the traces `make_traces(folder)` writes, one subfolder a run; reused."""
    if not db.exists():
        traces = db.with_suffix(".traces")
        shutil.rmtree(traces, ignore_errors=True)
        make_traces(traces)
        print(f"building {db.name} ...", flush=True)
        Measured("ingest", "--quiet", "--db", str(db), str(traces))
        shutil.rmtree(traces)
    return db


def generated(runs: int, ranks: int, iterations: int, layers: int):
    def make(folder: Path) -> None:
        for run in range(runs):
            Measured("generate", "kineto", str(folder / f"g{run:02d}"), "--ranks", str(ranks),
                     "--iterations", str(iterations), "--layers", str(layers), "--seed", str(run))
    return make


def tiled_dlrm(runs: int, ranks: int = DLRM_RANKS):
    """`runs` copies of the DLRM capture, each of `ranks` ranks (a multiple of 8: copy k of the
    8 files is ranks 8k..8k+7)."""
    traces = sorted(DLRM.glob("*.json"))

    def make(folder: Path) -> None:
        for run in range(runs):
            copy = folder / f"dlrm{run:02d}"
            copy.mkdir(parents=True)
            for k in range(ranks // DLRM_RANKS):
                for trace in traces:
                    text = _RANK.sub(lambda m: m[1] + str(int(m[2]) + DLRM_RANKS * k).encode()
                                     + m[3] + str(ranks).encode(), trace.read_bytes(), count=1)
                    (copy / f"k{k:04d}_{trace.name}").write_bytes(text + b" " * (run + 1))
    return make


def export(db: Path, lake: Path, *args: str) -> Measured:
    shutil.rmtree(lake, ignore_errors=True)
    measured = Measured("export", str(lake), "--db", str(db), *args)
    shutil.rmtree(lake, ignore_errors=True)
    return measured


def rows(db: Path) -> int:
    import tracewh as tw

    con = tw.connect(db, read_only=True)
    try:
        return con.execute("SELECT sum(rows) FROM sources").fetchall()[0][0]
    finally:
        con.close()


def one_run_against_many(name: str, runs: int, many: Path, alone: Path, run: str,
                         lake: Path) -> None:
    whole = export(many, lake)
    print(f"{name}: whole export {whole}  ({rows(many):,} rows, "
          f"{many.stat().st_size / 1e6:.0f} MB)", flush=True)
    from_many = export(many, lake, "--run", run)
    from_alone = export(alone, lake, "--run", run)
    print(f"  run {run} from it:           {from_many}\n"
          f"  run {run} from its own:      {from_alone}\n"
          f"  from {runs} runs / alone: {from_many.cpu / from_alone.cpu:.2f} CPU, "
          f"{from_many.wall / from_alone.wall:.2f} wall", flush=True)


def wide(name: str, db: Path, lake: Path) -> None:
    print(f"{name}: export {export(db, lake)}  ({rows(db):,} rows)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs of the generated warehouse")
    parser.add_argument("--real-runs", type=int, default=10, help="runs of the tiled DLRM one")
    parser.add_argument("--ranks", type=int, default=256, help="ranks of the generated wide run")
    parser.add_argument("--real-ranks", type=int, default=64,
                        help="ranks of the wide run tiled from DLRM (a multiple of 8)")
    parser.add_argument("--out", type=Path, default=HERE / "out" / "export_scale")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    lake = args.out / "lake"

    many = build(args.out / f"gen{args.runs}.duckdb", generated(args.runs, 8, 4, 16))
    alone = build(args.out / "gen1.duckdb", generated(1, 8, 4, 16))  # the first run, seed 0
    one_run_against_many(f"generated {args.runs} runs x 8 ranks", args.runs, many, alone, "g00",
                         lake)

    if DLRM.exists():
        real = build(args.out / f"dlrm{args.real_runs}.duckdb", tiled_dlrm(args.real_runs))
        real_alone = build(args.out / "dlrm1.duckdb", tiled_dlrm(1))
        one_run_against_many(f"real DLRM {args.real_runs} runs x 8 ranks", args.real_runs, real,
                             real_alone, "dlrm00", lake)
    else:
        print(f"real-shaped cases skipped: {DLRM} absent (set TRACEWH_SHARED)")

    wide(f"generated 1 run x {args.ranks:,} ranks",
         build(args.out / f"ranks{args.ranks}.duckdb", generated(1, args.ranks, 1, 1)), lake)
    if DLRM.exists():
        wide(f"real DLRM 1 run x {args.real_ranks:,} ranks",
             build(args.out / f"dlrm_ranks{args.real_ranks}.duckdb",
                   tiled_dlrm(1, args.real_ranks)), lake)


if __name__ == "__main__":
    main()
