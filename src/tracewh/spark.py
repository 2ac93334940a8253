"""Run metrics on Spark over a Parquet lake written by `tracewh export`.

    spark = spark_session()            # local[2]; or pass your own SparkSession
    register_lake(spark, "lake/")      # one temporary view per exported view
    table = run_metric_spark(spark, find_metric("gpu_kernel_summary"), {"rank": "0"}, "lake/")

Each view of the lake becomes a temporary view with the columns of the DuckDB view, in its
order and with its types (the manifest's schemas): the hive partition columns (run_id, rank)
come back where the view has them, typed from the manifest rather than guessed from the path.
pyspark is an optional dependency: `pip install 'tracewh[spark]'` (and a Java 17+ runtime).
"""

from __future__ import annotations

import atexit
import logging
import shutil
import tempfile
import uuid
from pathlib import Path

import pyarrow as pa
from sqlglot import exp

from .errors import TracewhError
from .lake import read_manifest
from .metrics import Metric
from .transpile import lake_catalog, metric_ast, split_shared_ctes


class SparkUnavailable(TracewhError):
    """pyspark or a Java runtime is missing."""


def spark_missing() -> str | None:
    """Why a local Spark session cannot start here (None when it can)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed - pip install 'tracewh[spark]'"
    if not shutil.which("java") and not _java_home():
        return "no Java runtime (java on PATH or JAVA_HOME) for pyspark"
    return None


def _java_home() -> str | None:
    import os

    home = os.environ.get("JAVA_HOME")
    return home if home and (Path(home) / "bin" / "java").exists() else None


def spark_session(master: str = "local[2]", shuffle_partitions: int = 4,
                  app_name: str = "tracewh"):
    """A local SparkSession: no UI, loopback only, UTC, few shuffle partitions."""
    reason = spark_missing()
    if reason:
        raise SparkUnavailable(reason)
    from pyspark.sql import SparkSession

    # Spark makes its warehouse folder (spark-warehouse/) in the working directory unless told
    # otherwise; tracewh registers temporary views only, so a throwaway folder serves
    scratch = tempfile.mkdtemp(prefix="tracewh-spark-")
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    session = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.sql.warehouse.dir", scratch)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
               # Spark 4's plan validation rejects what this rule makes of host_breakdown's and
               # op_summary's plans (PLAN_VALIDATION_FAILED_RULE_IN_BATCH); without it they
               # plan and answer as DuckDB does
               .config("spark.sql.optimizer.excludedRules",
                       "org.apache.spark.sql.catalyst.optimizer.RemoveRedundantAliases")
               .getOrCreate())
    session.sparkContext.setLogLevel("OFF")
    # pyspark logs every failed query as a JSON stack trace; the caller gets one line instead
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    return session


def _spark_type(duckdb_type: str) -> str:
    return exp.DataType.build(duckdb_type, dialect="duckdb").sql("spark")


def register_lake(spark, lake: str | Path) -> list[str]:
    """Register every view of the lake as a Spark temporary view; returns their names."""
    lake = Path(lake).resolve()
    manifest = read_manifest(lake)
    names = []
    for view, columns in manifest["schemas"].items():
        frame = spark.read.parquet(str(lake / view))
        present = set(frame.columns)
        projections = [
            f"CAST(`{name}` AS {_spark_type(kind)}) AS `{name}`" if name in present
            else f"CAST(NULL AS {_spark_type(kind)}) AS `{name}`"
            for name, kind in columns]
        frame.selectExpr(*projections).createOrReplaceTempView(view)
        names.append(view)
    return names


def run_metric_spark(spark, metric: Metric, params: dict[str, object] | None,
                     lake: str | Path) -> pa.Table:
    """The metric's rows as Spark computes them over the lake (registered on first use)."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    catalog = lake_catalog(lake)
    prefix = f"__tracewh_{uuid.uuid4().hex[:8]}_"
    steps, final = split_shared_ctes(metric_ast(metric, "spark", params, catalog), prefix)
    if not all(spark.catalog.tableExists(view) for view in catalog.schemas):
        register_lake(spark, lake)
    try:
        for view, query in steps:  # CTEs read more than once: computed once, held in memory
            spark.sql(query.sql("spark")).localCheckpoint(eager=True) \
                .createOrReplaceTempView(view)
        return spark.sql(final.sql("spark")).toArrow()
    except (PySparkException, Py4JJavaError) as exc:
        raise TracewhError(f"{metric.name} v{metric.version} failed on Spark: "
                           f"{_first_line(exc)}") from None
    finally:
        for view, _ in steps:
            spark.catalog.dropTempView(view)


def _first_line(exc: Exception) -> str:
    """The message that says what went wrong: a Java error's root cause, else pyspark's."""
    cause = getattr(exc, "java_exception", None)
    while cause is not None and cause.getCause() is not None:
        cause = cause.getCause()
    text = str(cause.toString() if cause is not None else exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
