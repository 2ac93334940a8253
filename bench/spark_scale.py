"""Benchmark (skeleton, issue 39 item 5): do the metrics spread over Spark's executors? Each
metric on Spark `local[1]` and `local[2]` over the same lake, the speedup, and DuckDB over the
same lake (`tracewh query --lake`) beside them, with the load average, since this machine is
shared.

    python bench/spark_scale.py LAKE [--metric temporal_breakdown ...] [--masters local[1],local[2]]

LAKE is written by `tracewh export LAKE --db WAREHOUSE` (e.g. of the 8 x 100 MB Kineto bench or
the realistic nsys bench). Each master is a Spark session of its own, in this process, one
after the other; each metric runs once to warm up and is timed on the second run (wall seconds:
Spark's executors are threads of its JVM). Not measured yet (item 5 asks for them): ingest on
Spark (item 1 does not exist yet) and the 1,024 small-file ranks.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

# the interval-heavy metrics the issue asks to spread (at least 1.6x on local[2])
HEAVY = ("temporal_breakdown", "idle_gaps", "comm_comp_overlap", "gpu_utilization")


def _seconds(work) -> float:
    work()  # warm: Spark plans and compiles on the first run
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def spark_times(lake: Path, metrics: list[str], master: str) -> dict[str, float]:
    from tracewh.metrics import find_metric
    from tracewh.spark import register_lake, run_metric_spark, spark_session

    cores = master.removeprefix("local[").removesuffix("]")
    spark = spark_session(master=master, shuffle_partitions=2 * int(cores) if cores.isdigit() else 4)
    try:
        register_lake(spark, lake)
        return {name: _seconds(lambda: run_metric_spark(spark, find_metric(name), {}, lake))
                for name in metrics}
    finally:
        spark.stop()


def duckdb_times(lake: Path, metrics: list[str]) -> dict[str, float]:
    from tracewh.session import Session

    with Session.of_lake(lake) as session:
        return {name: _seconds(lambda: session.query(name)) for name in metrics}


def main() -> None:
    parser = argparse.ArgumentParser(description="Each metric on Spark local[1] and local[2] "
                                     "over one lake, and DuckDB over it beside them")
    parser.add_argument("lake", type=Path)
    parser.add_argument("--metric", action="append", help="repeatable; default: the heavy four")
    parser.add_argument("--masters", default="local[1],local[2]")
    args = parser.parse_args()
    metrics = args.metric or list(HEAVY)
    masters = args.masters.split(",")
    times = {master: spark_times(args.lake, metrics, master) for master in masters}
    duck = duckdb_times(args.lake, metrics)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'metric':24}" + "".join(f"{m:>12}" for m in masters)
          + f"{'speedup':>9}{'duckdb':>9}")
    for name in metrics:
        row = [times[m][name] for m in masters]
        print(f"{name:24}" + "".join(f"{t:12.1f}" for t in row)
              + f"{row[0] / row[-1]:9.2f}x{duck[name]:8.2f}")


if __name__ == "__main__":
    main()
