"""Benchmark: the memory metrics on a warehouse holding 10 million allocator events.

The events are written straight into store.memory_events by SQL (what is measured is the
metrics, not the decoder; sql/ingest/memory_totals.sql works out totals and pairs as ingest
does): --ranks ranks, one GPU each, alternating an allocation and the free
of the allocation made 100 events earlier (about 100 live at any time), every 1 µs, no totals
in the source (the view derives them: the heavier path), --iterations steps per rank (each a
ProfilerStep range cut in forward, backward and optimizer thirds, for memory_by_phase), and a
CPU op around every 10 events on the same thread (each event linked to its op and phase, as
ingest links them). Built once in bench/out/ (git-ignored).
Then each memory metric runs (memory_timeline in 1000 bins), best of --repeat runs, in wall and
CPU seconds (the machine may be shared: CPU seconds and ratios of one run compare).

    python bench/memory_metrics.py [--events 10000000] [--ranks 8] [--iterations 20]
                                   [--repeat 3] [--target 2.0]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import tracewh
from tracewh.metrics import find_metric, run_metric
from tracewh.resources import sql_dir
from tracewh.sqlscript import run_script

HERE = Path(__file__).resolve().parent
# each with its usual call: a timeline of 10 M points is for export, not a plot
METRICS = {"memory_peaks": {}, "memory_at_peak": {}, "memory_timeline": {"bins": "1000"},
           "memory_by_phase": {"measure": "%"}}  # the bench has no device size: no 'free [B]'
BASE_NS = 1_700_000_000_000_000_000

# one rank's events as a decoder stages them; sql/ingest/memory_totals.sql does the rest
RAW = """
CREATE OR REPLACE TEMP TABLE _memory_raw AS
SELECT i AS order_no, 1 AS pid, 1 AS tid, $base + i * 1000 AS start_ns, 'GPU' AS device_type,
       0 AS device_id,
       CASE WHEN i % 2 = 0 THEN i // 2 ELSE i // 2 - 100 END AS address,
       CASE WHEN i % 2 = 0 THEN 1024 * ((i // 2) % 97 + 1)
            ELSE -1024 * ((i // 2 - 100) % 97 + 1) END AS bytes,
       NULL::BIGINT AS total_allocated, NULL::BIGINT AS total_reserved,
       CAST((i * $iterations) // $per_rank AS INTEGER) AS iteration
FROM range($per_rank) s(i)
WHERE i % 2 = 0 OR i // 2 >= 100
"""
# the ops and phase ranges below as a decoder shows them to memory_totals.sql, which links
# each event to the op and range holding it
SPANS = """
CREATE OR REPLACE TEMP VIEW _memory_ops AS
SELECT j AS range_id, 1 AS tid, $base + j * 10000 - 500 AS start_ns, $base + j * 10000 + 9500 AS end_ns
FROM range($per_rank // 10) s(j);
CREATE OR REPLACE TEMP VIEW _memory_ranges AS
SELECT range_id, tid, start_ns, end_ns FROM store.nvtx_ranges WHERE file_id = $rank;
"""
STORE = """
INSERT INTO store.memory_events BY NAME
SELECT 'bench' AS run_id, $rank AS rank, $rank AS file_id,
       $rank * 4294967296 + cpu_op_no AS cpu_op_id, * EXCLUDE (cpu_op_no) FROM _staged_memory_events
"""
OPS = """
INSERT INTO store.cpu_ops (run_id, rank, file_id, op_id, pid, tid, start_ns, end_ns, name, iteration)
SELECT 'bench', r, r, r * 4294967296 + j, 1, 1, $base + j * 10000 - 500, $base + j * 10000 + 9500,
       'aten::op' || (j % 50), (j * 10 * $iterations) // $per_rank
FROM range($ranks) t(r), range($per_rank // 10) s(j)
"""

# per rank and step: the ProfilerStep range and its forward, backward and optimizer thirds
PHASES = """
INSERT INTO store.nvtx_ranges BY NAME
SELECT 'bench' AS run_id, r AS rank, r AS file_id, k * 4 + p AS range_id, 1 AS pid, 1 AS tid,
       $base + k * $span + CASE p WHEN 0 THEN 0 ELSE (p - 1) * $span // 3 END AS start_ns,
       $base + CASE p WHEN 0 THEN (k + 1) * $span ELSE k * $span + p * $span // 3 END AS end_ns,
       CASE p WHEN 0 THEN 'ProfilerStep#' || k WHEN 1 THEN 'forward' WHEN 2 THEN 'backward'
              ELSE 'optimizer' END AS name,
       'push_pop' AS kind
FROM range($ranks) t(r), range($iterations) s(k), range(4) q(p)
"""


def warehouse(path: Path, events: int, ranks: int, iterations: int) -> Path:
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    con = tracewh.connect(path)
    per_rank = events // ranks
    con.execute(PHASES, {"base": BASE_NS, "ranks": ranks, "iterations": iterations,
                         "span": per_rank * 1000 // iterations})
    for rank in range(ranks):
        con.execute(RAW, {"base": BASE_NS, "per_rank": per_rank, "iterations": iterations})
        con.execute(SPANS.replace("$base", str(BASE_NS)).replace("$per_rank", str(per_rank))
                    .replace("$rank", str(rank)))
        run_script(con, sql_dir() / "ingest" / "memory_totals.sql")
        con.execute(STORE, {"rank": rank})
    con.execute(OPS, {"base": BASE_NS, "ranks": ranks, "per_rank": per_rank,
                      "iterations": iterations})
    con.close()
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--target", type=float, default=2.0)
    args = parser.parse_args()
    path = warehouse(HERE / "out" / f"memory-{args.events}-{args.ranks}-{args.iterations}-links.duckdb",
                     args.events, args.ranks, args.iterations)
    con = tracewh.connect(path, read_only=True)
    stored = con.execute("SELECT count(*) FROM memory_events").fetchone()[0]
    print(f"{path}: {stored:,} memory events")
    slow = []
    for name, params in METRICS.items():
        best = cpu = float("inf")
        for _ in range(args.repeat):
            started, cpu_started = time.perf_counter(), time.process_time()
            rows = run_metric(con, find_metric(name), params).num_rows
            best = min(best, time.perf_counter() - started)
            cpu = min(cpu, time.process_time() - cpu_started)
        print(f"{name:<20} {best:7.2f} s {cpu:7.2f} s CPU {rows:>8,} rows")
        if best > args.target:
            slow.append(name)
    if slow:
        raise SystemExit(f"over {args.target} s: {', '.join(slow)}")


if __name__ == "__main__":
    main()
