"""Benchmark: op_efficiency and mfu on a Kineto warehouse with >= 8 million shaped, kernel-launching ops.

The input: a generated Kineto job with shapes (``KinetoJobSpec(world_size=8,
target_bytes_per_rank=60 MB)``, record_shapes=True: ~223 k kernels, each launched by a shaped op),
made and ingested once under --out (git-ignored bench/out/ by default), then scaled to --gpu-ops by
copying every stored row of the job as new runs (run ``<id>-copyN``, new file ids) in SQL: ingesting
36 x 480 MB of JSON would take an hour and measure ingest, not the metrics. A warehouse stored by an
older tracewh is upgraded by ``tracewh.connect`` (migrations, views); the time is printed.

Then, each in its own process (peak memory = that process's ru_maxrss), best of --repeat:

* baseline, once: the performance models evaluated at query time on every op from its args, as
  the perf_ops view did before migration 0016 (``count(*), sum(flops), sum(bytes)``);
* the perf_ops view (shapes stored at ingest since 0016, models on each distinct shape), the same
  sums, which must equal the baseline's;
* op_efficiency and mfu with their default parameters.

Each row prints wall and CPU seconds, peak MB and its CPU time as a ratio to the baseline's.

    python bench/perf_ops.py [--out bench/out] [--gpu-ops 8000000] [--repeat 3]
                             [--traces DIR]   # an existing generated job instead of generating one
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

GENERATE = """
import sys
from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job
generate_kineto_job(sys.argv[1], KinetoJobSpec(world_size=8, target_bytes_per_rank=60_000_000))
"""

# every store table with rows of a run is copied; run_id, file_id and the source's identity change
SCALE = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
copies = int(sys.argv[2])
tables = con.execute(
    "SELECT table_name, list(column_name ORDER BY column_index) FROM duckdb_columns() "
    "WHERE schema_name = 'store' GROUP BY table_name "
    "HAVING list_contains(list(column_name), 'run_id')").fetchall()
# ids made of file_id * 2^32 + a number (cpu_ops.op_id, parent_id, memory_events.cpu_op_id) move
# with their file
moved_id = "{0} + c * 1000000 * 4294967296"
changed = {"run_id": "run_id || '-copy' || c", "file_id": "file_id + c * 1000000",
           "sha256": "sha256 || c", "path": "path || '#' || c", "op_id": moved_id.format("op_id"),
           "parent_id": moved_id.format("parent_id"), "cpu_op_id": moved_id.format("cpu_op_id")}
for table, columns in tables:
    select = ", ".join(changed.get(col, col) for col in columns)
    con.execute(f"INSERT INTO store.{table} SELECT {select} FROM store.{table}, range(1, {copies}) r(c) "
                "ORDER BY c")  # each copy's rows together, as ingest stores a source's
con.execute("CHECKPOINT")
"""

# the models at query time on every op, from its args: the perf_ops view's body before migration
# 0016, reading the stored tables (the cpu_ops view would add its tree over every op)
QUERY_TIME_MODELS = """
WITH launchers AS (
    SELECT DISTINCT file_id, rank, external_id FROM store.kernels WHERE external_id IS NOT NULL
),
shaped AS MATERIALIZED (
    SELECT o.name, perf_shapes(o.args) AS s
    FROM store.cpu_ops o
    SEMI JOIN launchers l
        ON l.file_id = o.file_id AND l.rank = o.rank AND l.external_id = o.external_id
    WHERE o.args LIKE '%"Input Dims"%'
),
modelled AS MATERIALIZED (
    SELECT *, perf_model(name, s.dims, s.types, s.concrete) AS m FROM shaped
)
SELECT count(*), sum(m.flops), sum(m.bytes) FROM modelled WHERE m IS NOT NULL
"""
STORED_MODELS = "SELECT count(*), sum(flops), sum(bytes) FROM perf_ops"

MEASURE = """
import json, resource, sys, time, tracewh
from tracewh.metrics import list_metrics, run_metric
db, what, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
con = tracewh.connect(db, read_only=True)
con.execute("SET enable_progress_bar = false")
metrics = {m.name: m for m in list_metrics()}
best = (float("inf"), float("inf"))
for _ in range(repeat):
    started, cpu = time.perf_counter(), time.process_time()
    if what in metrics:
        answer = run_metric(con, metrics[what], {}).num_rows
    else:
        answer = con.execute(what).fetchall()[0]
    best = min(best, (time.perf_counter() - started, time.process_time() - cpu))
print(json.dumps({"seconds": best[0], "cpu": best[1], "answer": str(answer),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run(command: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(command[:3])} ...\n{done.stderr}")
    return time.perf_counter() - started, done.stdout


def python(code: str, *args) -> tuple[float, str]:
    return run([sys.executable, "-c", code, *map(str, args)])


def job(folder: Path, given: Path | None) -> Path:
    if given is not None:
        return given
    out = folder / "traces"
    if not (folder / "generated").exists():
        shutil.rmtree(out, ignore_errors=True)
        print(f"generating an 8-rank Kineto job with shapes into {out} ...", flush=True)
        seconds, _ = python(GENERATE, out)
        (folder / "generated").write_text(f"{seconds:.1f} s\n")
    return out


def warehouse(folder: Path, traces: Path, gpu_ops: int) -> Path:
    """The job ingested once, then copied to >= gpu_ops kernels (kept between runs)."""
    db = folder / "wh.duckdb"
    if not db.exists():
        base = folder / "base.duckdb"
        base.unlink(missing_ok=True)
        seconds, _ = run([sys.executable, "-m", "tracewh.cli", "ingest", "--quiet", "--db",
                          str(base), str(traces)])
        print(f"ingested {traces} in {seconds:.1f} s", flush=True)
        _, out = python("import sys, duckdb; print(duckdb.connect(sys.argv[1], read_only=True)"
                        ".execute('SELECT count(*) FROM store.kernels').fetchall()[0][0])", base)
        copies = math.ceil(gpu_ops / int(out))
        seconds, _ = python(SCALE, base, copies)
        print(f"copied to {copies} runs in {seconds:.1f} s", flush=True)
        base.rename(db)
    seconds, _ = python("import sys, tracewh; tracewh.connect(sys.argv[1]).close()", db)
    print(f"opened for writing (migrations and views brought up to date) in {seconds:.1f} s")
    return db


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--gpu-ops", type=int, default=8_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--traces", type=Path, default=None)
    args = parser.parse_args()
    folder = args.out / "perf_ops_kineto"
    folder.mkdir(parents=True, exist_ok=True)
    db = warehouse(folder, job(folder, args.traces), args.gpu_ops)
    _, counts = python("import sys, tracewh; c = tracewh.connect(sys.argv[1], read_only=True); "
                       "print(*c.execute('SELECT (SELECT count(*) FROM store.kernels), "
                       "(SELECT count(*) FROM store.cpu_ops)').fetchall()[0])", db)
    kernels, ops = map(int, counts.split())
    print(f"\nwarehouse: {db} ({db.stat().st_size / 1e6:,.0f} MB), {kernels:,} kernels, "
          f"{ops:,} CPU ops; {os.cpu_count()} CPUs; best of {args.repeat}\n")
    print(f"{'':28}{'seconds':>9}{'cpu s':>8}{'peak MB':>9}{'x baseline':>12}  answer")
    baseline = None
    for label, what in [("models at query (baseline)", QUERY_TIME_MODELS),
                        ("perf_ops (shapes stored)", STORED_MODELS),
                        ("op_efficiency", "op_efficiency"), ("mfu", "mfu")]:
        _, out = python(MEASURE, db, what, 1 if baseline is None else args.repeat)
        m = json.loads(out.splitlines()[-1])
        baseline = baseline or m["cpu"]
        print(f"{label:28}{m['seconds']:9.2f}{m['cpu']:8.2f}{m['peak_mb']:9.0f}"
              f"{m['cpu'] / baseline:12.5f}  {m['answer']}", flush=True)
    print(f"(1-minute load average {os.getloadavg()[0]:.1f}: compare CPU seconds and ratios)")


if __name__ == "__main__":
    main()
