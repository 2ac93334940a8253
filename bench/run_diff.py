"""Benchmark: run_diff between two 8-rank runs of >= 8 million GPU ops each.

Builds the input once (bench/metrics.py's builder): ``generate_pair`` writes the generated nsys
job twice, the second run with the known kernel changes of ``tracewh.generate.pair``
(``JobSpec(world_size=8, iterations=20, kernels_per_rank_target=1_000_000)`` each), and
``tracewh ingest`` loads both into one warehouse (runs ``base`` and ``test``). Then run_diff
runs on a read-only connection, best of --repeat, at each level, and breakdown_diff once.

    python bench/run_diff.py [--out /work/bench-wh-diff] [--ranks 8] [--kernels-per-rank 1000000]
                             [--iterations 20] [--repeat 3] [--target 2.0]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import tracewh
from tracewh.metrics import find_metric

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from metrics import run, timed, warehouse  # noqa: E402  (bench/metrics.py: the builder)

GENERATE_PAIR = """
import sys
from tracewh.generate.nsys import JobSpec
from tracewh.generate.pair import generate_pair
generate_pair(sys.argv[1], JobSpec(world_size=int(sys.argv[2]), iterations=int(sys.argv[3]),
                                   kernels_per_rank_target=int(sys.argv[4])))
"""

CALLS = [("run_diff", {"base": "base", "test": "test", "level": level})
         for level in ("kernel", "all")]
CALLS += [("run_diff", {"base": "base", "test": "test", "level": "kernel", "short_names": "true"}),
          ("run_diff", {"base": "base", "test": "test", "base_iteration": "3-12",
                        "test_iteration": "5"})]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "out" / "run_diff")
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--kernels-per-rank", type=int, default=1_000_000)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--target", type=float, default=2.0)
    args = parser.parse_args()

    folder = args.out
    exports = folder / "traces"
    if not (folder / "generated").exists():
        print(f"generating 2 runs of {args.ranks} ranks x ~{args.kernels_per_rank:,} kernels "
              f"into {exports} ...", flush=True)
        seconds = run([sys.executable, "-c", GENERATE_PAIR, str(exports), str(args.ranks),
                       str(args.iterations), str(args.kernels_per_rank)])
        (folder / "generated").write_text(f"{seconds:.1f} s\n")
        print(f"  generated in {seconds:.1f} s", flush=True)
    db = warehouse(folder, exports, int(2 * args.ranks * args.kernels_per_rank * 0.95))

    with tracewh.connect(db, read_only=True) as con:
        per_run = con.execute("SELECT run_id, count(*) FROM gpu_ops GROUP BY ALL ORDER BY 1").fetchall()
        print(f"\nwarehouse: {db} ({db.stat().st_size / 1e6:,.0f} MB); GPU ops per run: "
              + ", ".join(f"{run_id} {ops:,}" for run_id, ops in per_run)
              + f"; {os.cpu_count()} CPUs; best of {args.repeat}\n")
        print(f"{'call':72}{'seconds':>9}{'rows':>7}{'cpu s':>8}")
        load_before = os.getloadavg()[0]
        for name, params in CALLS:
            best, cpu, rows = timed(con, find_metric(name), params, args.repeat)
            label = name + " " + " ".join(f"{k}={v}" for k, v in params.items())
            flag = "  > target" if best > args.target else ""
            print(f"{label:72}{best:9.2f}{rows:7d}{cpu:8.2f}{flag}", flush=True)
    print(f"(1-minute load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after: "
          "other processes slow the wall times)")


if __name__ == "__main__":
    main()
