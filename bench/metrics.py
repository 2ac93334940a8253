"""Benchmark: every metric of sql/metrics, as a user runs it, on two 8-rank warehouses.

- nsys: the realistic one, a real autograd-NVTX capture tiled into 8 ranks (bench/nsys_tiled.py:
  >= 4 M kernels, >= 20 M NVTX ranges, several deep on each thread);
- gen: the generated one, >= 8 million GPU ops (``JobSpec(world_size=8, iterations=20,
  kernels_per_rank_target=1_000_000)``, about a minute per 2 million kernels).

Each input is built once and cached under --out (git-ignored bench/out/ by default), and
``tracewh ingest`` loads it into a warehouse there, rebuilt when this tracewh cannot open it (a
newer migration, a changed view). --nsys-db / --gen-db reuse a warehouse made elsewhere instead
(never rebuilt: opened read-only). Then every metric runs as a whole process, start-up included:
``python -m tracewh.cli query NAME --db WH --format parquet -o TMP`` with its default
parameters, best of --repeat runs. The table gives wall seconds, rows (from the Parquet file),
the child's peak RSS and CPU seconds (user + system), and the load average before and after;
then gpu_trace in a one-second window, its usual call.

    python bench/metrics.py [--warehouses nsys,gen] [--out bench/out] [--repeat 3]
                            [--target 2.0] [--only temporal_breakdown,idle_gaps]
                            [--nsys-db FILE] [--gen-db FILE] [--nsys-exports DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

import tracewh
from tracewh.errors import TracewhError
from tracewh.metrics import list_metrics
from tracewh.warehouse import open_read_only

HERE = Path(__file__).resolve().parent

GENERATE = """
import sys
from tracewh.generate.nsys import JobSpec, generate_job
spec = JobSpec(world_size=int(sys.argv[2]), iterations=int(sys.argv[3]),
               kernels_per_rank_target=int(sys.argv[4]))
generate_job(sys.argv[1], spec)
"""


def run(command: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{done.stderr}")
    return time.perf_counter() - started


def traces(folder: Path, ranks: int, iterations: int, kernels_per_rank: int) -> Path:
    """The generated exports, made once (in a child process, so this one stays small)."""
    out = folder / "traces"
    if len(list(out.glob("*.sqlite"))) != ranks or not (folder / "generated").exists():
        shutil.rmtree(out, ignore_errors=True)
        print(f"generating {ranks} ranks x ~{kernels_per_rank:,} kernels into {out} ...", flush=True)
        seconds = run([sys.executable, "-c", GENERATE, str(out), str(ranks), str(iterations),
                       str(kernels_per_rank)])
        (folder / "generated").write_text(f"{seconds:.1f} s\n")
        print(f"  generated in {seconds:.1f} s", flush=True)
    return out


def gpu_ops(db: Path) -> int | None:
    """GPU ops in the warehouse, or None when this tracewh cannot open it."""
    if not db.exists():
        return None
    try:
        with tracewh.connect(db, read_only=True) as con:
            return con.execute("SELECT count(*) FROM gpu_ops").fetchall()[0][0]
    except TracewhError as exc:
        print(f"rebuilding the warehouse: {exc}", flush=True)
        return None


def warehouse(folder: Path, exports: Path | list[Path], expected_kernels: int) -> Path:
    db = folder / "wh.duckdb"
    ops = gpu_ops(db)
    if ops is None or ops < expected_kernels:
        for stale in (db, db.with_name(db.name + ".wal")):
            stale.unlink(missing_ok=True)
        print(f"ingesting {exports} into {db} ...", flush=True)
        paths = [str(p) for p in exports] if isinstance(exports, list) else [str(exports)]
        seconds = run([sys.executable, "-m", "tracewh.cli", "ingest", "--quiet", "--db", str(db),
                       *paths])
        print(f"  ingested in {seconds:.1f} s", flush=True)
    return db


def nsys_warehouse(args) -> Path:
    """The realistic nsys warehouse: --nsys-db as given, else built in --out (tiled exports from
    --nsys-exports or made by bench/nsys_tiled.py)."""
    if args.nsys_db:
        return args.nsys_db
    sys.path.insert(0, str(HERE))
    import nsys_tiled

    folder = args.out / "nsys_tiled_8rank_265"
    folder.mkdir(parents=True, exist_ok=True)
    exports = (sorted(args.nsys_exports.glob("rank*.sqlite")) if args.nsys_exports
               else nsys_tiled.build(folder / "traces"))
    return warehouse(folder, exports, 4_000_000)


def gen_warehouse(args) -> Path:
    if args.gen_db:
        return args.gen_db
    folder = args.out / f"metrics_{args.ranks}rank_{args.kernels_per_rank}"
    folder.mkdir(parents=True, exist_ok=True)
    exports = traces(folder, args.ranks, args.iterations, args.kernels_per_rank)
    return warehouse(folder, exports, int(args.ranks * args.kernels_per_rank * 0.95))


# extra runs with parameters, printed after the default-parameter table
WITH_PARAMS = {"gpu_trace": [{"window": "10s/11s"}]}  # one second of each source's timeline


def query_process(db: Path, name: str, params: dict, out: Path,
                  timeout: float) -> tuple[float, float, float] | None:
    """Wall seconds, CPU seconds and peak RSS (MB) of one `tracewh query` process; None when it
    was stopped after `timeout` seconds."""
    command = [sys.executable, "-m", "tracewh.cli", "query", name, "--db", str(db),
               "--format", "parquet", "-o", str(out)]
    for key, value in params.items():
        command += ["--param", f"{key}={value}"]
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - started > timeout:
            child.kill()
            os.wait4(child.pid, 0)
            child.stderr.close()
            return None
        time.sleep(0.02)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    error = child.stderr.read().decode().strip()
    child.stderr.close()
    if child.returncode != 0:
        raise RuntimeError(error.splitlines()[-1] if error else f"exit {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def timed(db: Path, name: str, params: dict, repeat: int,
          timeout: float) -> tuple[float, float, float, int] | None:
    """Best wall and CPU seconds and peak RSS of `repeat` runs, and the rows of the last; None
    when a run did not finish within `timeout` seconds."""
    best, cpu, rss = float("inf"), float("inf"), 0.0
    with tempfile.TemporaryDirectory(prefix="tracewh-bench-") as scratch:
        out = Path(scratch) / "result.parquet"
        for _ in range(repeat):
            measured = query_process(db, name, params, out, timeout)
            if measured is None:
                return None
            wall, seconds, peak = measured
            best, cpu, rss = min(best, wall), min(cpu, seconds), max(rss, peak)
        rows = pq.ParquetFile(out).metadata.num_rows
    return best, cpu, rss, rows


def bench(label: str, db: Path, metrics, args) -> None:
    with open_read_only(db) as con:  # a warehouse given by --*-db is never upgraded in place
        ops, ranks = con.execute("SELECT count(*), count(DISTINCT rank) FROM gpu_ops").fetchall()[0]
        (ranges,) = con.execute("SELECT count(*) FROM nvtx_ranges").fetchall()[0]
    print(f"\n{label}: {db} ({db.stat().st_size / 1e6:,.0f} MB), {ops:,} GPU ops and {ranges:,} "
          f"NVTX ranges on {ranks} ranks; {os.cpu_count()} CPUs; whole `tracewh query` "
          f"processes (start-up included), best of {args.repeat}, default parameters\n")
    print(f"{'metric':32}{'seconds':>9}{'rows':>11}{'peak MB':>9}{'cpu s':>8}")
    slow = []
    load_before = os.getloadavg()
    runs = [(m.name, {}) for m in metrics]
    runs += [(m.name, p) for m in metrics for p in WITH_PARAMS.get(m.name, [])]
    for name, params in runs:
        label = " ".join([name] + [f"{k}={v}" for k, v in params.items()])
        try:
            measured = timed(db, name, params, args.repeat, args.timeout)
        except RuntimeError as exc:
            slow += [] if params else [name]
            print(f"{label:32}  failed: {str(exc)[:160]}", flush=True)
            continue
        if measured is None:
            slow += [] if params else [name]
            print(f"{label:32}  stopped after {args.timeout:g} s", flush=True)
            continue
        best, cpu, rss, rows = measured
        flag = "  > target" if best > args.target else ""
        if flag and not params:
            slow.append(name)
        print(f"{label:32}{best:9.2f}{rows:11,d}{rss:9.0f}{cpu:8.2f}{flag}", flush=True)
    load_after = os.getloadavg()
    print(f"\n{len(metrics) - len(slow)} of {len(metrics)} metrics under {args.target:g} s"
          + (f"; slower: {', '.join(slow)}" if slow else ""))
    print("load average (1, 5, 15 min): " + " / ".join(f"{x:.1f}" for x in load_before)
          + " before, " + " / ".join(f"{x:.1f}" for x in load_after) + " after "
          "(other processes slow the wall times)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warehouses", default="nsys,gen", help="nsys, gen or both")
    parser.add_argument("--ranks", type=int, default=8, help="gen: ranks")
    parser.add_argument("--kernels-per-rank", type=int, default=1_000_000, help="gen: kernels")
    parser.add_argument("--iterations", type=int, default=20, help="gen: iterations")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--target", type=float, default=2.0, help="seconds; slower metrics are flagged")
    parser.add_argument("--timeout", type=float, default=300, help="seconds; a run is stopped then")
    parser.add_argument("--only", default="", help="comma-separated metric names")
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--nsys-db", type=Path, help="an ingested realistic nsys warehouse to use")
    parser.add_argument("--nsys-exports", type=Path, help="bench/nsys_tiled.py's exports to ingest")
    parser.add_argument("--gen-db", type=Path, help="an ingested generated warehouse to use")
    args = parser.parse_args()

    only = {name.strip() for name in args.only.split(",") if name.strip()}
    metrics = [m for m in list_metrics() if not only or m.name in only]
    builders = {"nsys": nsys_warehouse, "gen": gen_warehouse}
    chosen = [w.strip() for w in args.warehouses.split(",") if w.strip()]
    for label in chosen:
        if label not in builders:
            sys.exit(f"--warehouses {label!r}: use nsys, gen or both")
    for label in chosen:
        bench(label, builders[label](args), metrics, args)


if __name__ == "__main__":
    main()
