"""The transpiler without Spark: every metric becomes Spark and Trino SQL with no DuckDB-only
construct left, and the same rewrites, generated back as DuckDB SQL with no macro, ASOF join,
star EXCLUDE or parameter left, give the metric's own rows on a generated warehouse."""

from __future__ import annotations

import math
import re
from pathlib import Path

import duckdb
import pytest
import sqlglot
from sqlglot import exp
from typer.testing import CliRunner

import tracewh
from tracewh.generate.kineto import MemoryEvent, write_memory_trace
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.cli import app
from tracewh.metrics import bind_values, find_metric, list_metrics, run_metric
from tracewh.export import lake_views
from tracewh.resources import sql_dir
from tracewh.transpile import (
    Catalog,
    TranspileError,
    default_catalog,
    load_macros,
    split_shared_ctes,
    to_target_ast,
    transpile_metric,
)

runner = CliRunner()

# DuckDB alone: pointer doubling needs WITH RECURSIVE ... USING KEY (transpile refuses, below)
DUCKDB_ONLY = ("critical_path", "what_if")
METRICS = [m.name for m in list_metrics() if m.name not in DUCKDB_ONLY]
NSYS_RUN, SMALL_RUN, KINETO_RUN = "ddp", "sweep/ddp 2r", "fsdp"  # a hive-escaped run id too
MOE_RUN = "moe_dropless"  # all_to_allv with split sizes

# Non-default parameters, each set run by the DuckDB round trip here and by tests/test_spark.py.
PARAM_SETS = {
    "alltoall_pairs": {"run": MOE_RUN, "per": "pair", "split_unit": "element", "iteration_from": "2"},
    "breakdown_diff": {"base": SMALL_RUN, "test": NSYS_RUN, "top": "3", "include_first_last": "true",
                       "kernel_wait_ns": "5000"},
    "clock_skew": {"run": NSYS_RUN},
    "collective_bandwidth": {"run": KINETO_RUN, "iteration_from": "1"},
    "collective_counts": {"run": NSYS_RUN, "rank": "1", "iteration_from": "1",
                          "iteration_to": "2"},
    "comm_comp_overlap": {"run": NSYS_RUN, "iteration_from": "1", "iteration_to": "2"},
    "cuda_api_summary": {"rank": "1", "window": "490ms/500ms", "top": "3"},
    "cuda_gpu_kern_gb_sum": {"rank": "1", "window": "490ms/", "top": "4"},
    "cuda_gpu_sum": {"run": NSYS_RUN, "window": "/495ms", "iteration_from": "1"},
    "gpu_kernel_summary": {"rank": "0", "top": "3", "iteration_from": "1", "window": "490ms/500ms"},
    "gpu_mem_summary": {"run": NSYS_RUN, "window": "1ms/"},
    "gpu_trace": {"run": NSYS_RUN, "rank": "2", "window": "490ms/495ms"},
    "gpu_utilization": {"run": NSYS_RUN, "bins": "7", "threshold": "80.5",
                        "iteration_from": "1"},
    "idle_gaps": {"run": NSYS_RUN, "iteration_from": "1", "iteration_to": "2",
                  "kernel_wait_ns": "5000"},
    "iteration_time": {"run": NSYS_RUN, "include_first_last": "true", "per_iteration": "true"},
    "log_phases": {"run": "gpt-tp2", "warmup": "0"},
    "kernel_concurrency": {"run": NSYS_RUN, "iteration_from": "1", "iteration_to": "2"},
    "link_efficiency": {"run": KINETO_RUN, "inter_node_link": "InfiniBand NDR", "intra_node_link": "450"},
    "link_utilization": {"run": SMALL_RUN, "rank": "1", "inter_node_link": "RoCE 400GbE"},
    "memory_by_phase": {"rank": "1", "phases": "forward|backward"},
    "nccl_sum": {"run": NSYS_RUN, "rank": "1", "window": "400ms/", "top": "2"},
    "nvtx_phases": {"run": NSYS_RUN, "rank": "3", "iteration_from": "1"},
    "nvtx_summary": {"rank": "0", "window": "0s/30ms", "top": "2"},
    "op_efficiency": {"run": KINETO_RUN, "kernel_time": "subtree", "per": "instance",
                      "peaks": "tracelens"},  # subtree: op_kernels' walk up the families
    "pipeline_bubble": {"run": NSYS_RUN, "stages": "2", "microbatches": "4"},
    "regressions": {"runs": f"{NSYS_RUN}, {SMALL_RUN}, {KINETO_RUN}", "threshold": "0.3",
                    "include_first_last": "true"},
    "run_diff": {"base": NSYS_RUN, "test": SMALL_RUN, "base_iteration": "1-2", "test_iteration": "2",
                 "level": "kernel, nvtx", "short_names": "true", "launched_only": "true"},
    "scaling": {"runs": f"{NSYS_RUN}, {SMALL_RUN}", "include_first_last": "true", "cause_min_ns": "20000"},
    "straggler": {"run": NSYS_RUN, "collective": "AllReduce"},
    "temporal_breakdown": {"run": NSYS_RUN, "per_iteration": "true", "iteration_from": "1"},
    "throughput": {"run": NSYS_RUN, "include_first_last": "true"},
    "traffic_distribution": {"run": KINETO_RUN, "iteration_to": "2"},
}


def param_sets(name: str) -> list[dict]:
    """The default parameters and, where the metric declares them, a non-default set."""
    declared = {p.name for p in find_metric(name).params}
    chosen = {k: v for k, v in PARAM_SETS.get(name, {}).items() if k in declared}
    return [{}, chosen] if chosen else [{}]


def build_warehouse(folder: Path) -> Path:
    """Generated multi-rank runs (nsys 4 ranks, nsys 2 ranks, Kineto 2 ranks, a Kineto MoE job
    with all_to_allv splits) and a memory series beside the 4-rank run, ingested through the CLI."""
    traces = folder / "traces"
    for args in (["nsys", str(traces / NSYS_RUN), "--ranks", "4", "--iterations", "4",
                  "--layers", "2", "--seed", "3"],
                 ["nsys", str(traces / SMALL_RUN), "--ranks", "2", "--iterations", "3",
                  "--layers", "2", "--seed", "4", "--counters"],  # GPU and NIC counters
                 ["kineto", str(traces / KINETO_RUN), "--ranks", "2", "--iterations", "3",
                  "--layers", "2", "--seed", "5"],
                 ["parallel", str(traces / MOE_RUN), "--job", "moe_dropless", "--steps", "2"]):
        result = runner.invoke(app, ["generate", *args])
        assert result.exit_code == 0, result.output
    db = folder / "wh.duckdb"
    result = runner.invoke(app, ["ingest", "--quiet", "--db", str(db), str(traces)])
    assert result.exit_code == 0, result.stderr
    con = tracewh.connect(db, read_only=True)
    devices = con.execute("SELECT rank, device_id, host FROM ranks WHERE run_id = ?",
                          [NSYS_RUN]).fetchall()
    first, last = con.execute("SELECT min(start_ns), max(end_ns) FROM gpu_ops WHERE run_id = ?",
                              [NSYS_RUN]).fetchall()[0]
    con.close()
    lines = ["time_ns,host,gpu,memory.free [MiB]"]
    for ts in range(first - 1_000_000, last, 400_000):
        lines += [f"{ts},{host or ''},{device},{1000 + (ts // 1000 + rank) % 997}"
                  for rank, device, host in devices]
    series = folder / "gpu.csv"
    series.write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["ingest", "--quiet", "--db", str(db), "--series", str(series),
                                 "--run", NSYS_RUN])
    assert result.exit_code == 0, result.stderr
    logs = folder / "logs"  # training logs of a tp sweep: log_timers, log_iterations, series
    logs.mkdir()
    for tp in (1, 2):
        (logs / f"gpt-tp{tp}.log").write_text("".join(
            f"[Rank 0] time (ms) | fwd: {100 / tp + step:.2f} | bwd: {200 / tp + 2 * step:.2f}\n"
            f" iteration {step}/ 10 | elapsed time per iteration (ms): {300 / tp + step} | "
            f"TFLOPs: {40 * tp + step} |\n" for step in range(1, 5)))
    result = runner.invoke(app, ["ingest", "--quiet", "--db", str(db), "--log", str(logs),
                                 "--name-template", "gpt-tp{tp}"])
    assert result.exit_code == 0, result.stderr
    # allocator events (profile_memory=True) of a 2-step job: memory_events and its metrics
    ms = 1_000_000
    (folder / "memory_job").mkdir()
    memory = write_memory_trace(folder / "memory_job" / "rank0.json", [
        MemoryEvent(2 * ms, 4096, 0x10, 0, 4096, 8192), MemoryEvent(3 * ms, 8192, 0x20, 0, 12288, 16384),
        MemoryEvent(4 * ms, -4096, 0x10, 0, 8192, 16384), MemoryEvent(12 * ms, 2048, 0x30, 0, 10240, 16384),
        MemoryEvent(14 * ms, -8192, 0x20, 0, 2048, 16384)],
        steps=[(1, 1 * ms, 10 * ms), (2, 10 * ms, 20 * ms)],
        ops=[("aten::empty", 1_500_000, 3_500_000), ("aten::add", 11 * ms, 15 * ms)])
    result = runner.invoke(app, ["ingest", "--quiet", "--db", str(db), str(memory),
                                 "--run", "memory_job"])
    assert result.exit_code == 0, result.stderr
    # nsys CUDA memory usage with forward/backward phases: memory_by_phase's allocator rows
    job = generate_job(folder / "nsys_memory", JobSpec(world_size=2, iterations=2, layers=1,
                                                       seed=6, memory_usage=True))
    result = runner.invoke(app, ["ingest", "--quiet", "--db", str(db), *map(str, job.files),
                                 "--run", "nsys_memory"])
    assert result.exit_code == 0, result.stderr
    return db


def same_value(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9,
                                                                   abs_tol=1e-6)
    return a == b


def assert_same_rows(metric: str, want: list[dict], got: list[dict], ordered: bool) -> None:
    """Equal rows (floats within tolerance); in the same order when the metric orders."""
    assert len(got) == len(want), f"{metric}: {len(got)} rows, DuckDB has {len(want)}"
    if want:
        assert list(got[0]) == list(want[0]), f"{metric}: columns differ"
    if not ordered:
        want, got = sorted(want, key=_row_key), sorted(got, key=_row_key)
    for number, (w, g) in enumerate(zip(want, got)):
        bad = [k for k in w if not same_value(w[k], g[k])]
        assert not bad, f"{metric} row {number}: " + ", ".join(
            f"{k}={g[k]!r}, DuckDB {w[k]!r}" for k in bad[:4])


def _row_key(row: dict) -> str:
    return repr([round(float(v), 6) if isinstance(v, float) else v for v in row.values()])


def is_ordered(metric: str) -> bool:
    query = sqlglot.parse_one(find_metric(metric).query, read="duckdb")
    return query.args.get("order") is not None


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    return build_warehouse(tmp_path_factory.mktemp("transpile"))


# --- every metric, every dialect ---------------------------------------------------------------

LEFT_OVER = ("getvariable", "query_table", " EXCLUDE", " ASOF ", "MATERIALIZED", "BY NAME",
             "regexp_split_to_array", "list_contains", "epoch_ns",
             "HUGEINT", "list_slice", "error")


@pytest.mark.parametrize("dialect", ["spark", "trino"])
@pytest.mark.parametrize("name", METRICS)
def test_metric_transpiles_to_sql_the_target_parses(name, dialect):
    sql = transpile_metric(find_metric(name), dialect)
    tree = sqlglot.parse_one(sql, read=dialect)
    assert isinstance(tree, exp.Select) and tree.named_selects[:2] == ["metric", "version"]
    code = tree.sql(dialect, comments=False)
    left = [word for word in LEFT_OVER if re.search(rf"\b{word.strip()}\b", code, re.IGNORECASE)]
    assert not left, f"{name} ({dialect}) still holds {left}"
    macros = load_macros()
    calls = {f.name.lower() for f in tree.find_all(exp.Anonymous)}
    assert not calls & set(macros), f"{name} ({dialect}) calls macros {calls & set(macros)}"


@pytest.mark.parametrize("name", METRICS)
def test_rewritten_query_gives_the_metrics_rows_in_duckdb(warehouse, name):
    """The same AST rewrites as for Spark (macros inlined, stars expanded, ASOF and empty
    OVER () made explicit, params as literals), generated as DuckDB SQL and run on a connection
    without the macros' help: the rows equal the metric's own, for each parameter set."""
    metric = find_metric(name)
    con = tracewh.connect(warehouse, read_only=True)
    bare = duckdb.connect()  # no macros: the rewritten query must not need them
    for view in default_catalog().schemas:
        rows = con.sql(f"SELECT * FROM {view}").to_arrow_table()
        bare.register(view, rows)
    try:
        for params in param_sets(name):
            want = run_metric(con, metric, params).to_pylist()
            values = bind_values(metric, params)
            tree = to_target_ast(metric.query, "duckdb", values,
                                 {p.name: p.type for p in metric.params}, default_catalog(),
                                 label=name)
            sql = tree.sql("duckdb")
            assert "getvariable" not in sql and " ASOF " not in sql.upper()
            got = bare.sql(sql).to_arrow_table().to_pylist()
            want = [{k: v for k, v in r.items() if k not in ("metric", "version")} for r in want]
            assert_same_rows(f"{name} {params}", want, got, is_ordered(name))
            # as the Spark engine runs it: CTEs read more than once materialized first
            steps, final = split_shared_ctes(tree, "__t_")
            for view, query in steps:
                bare.execute(f"CREATE OR REPLACE TEMP TABLE {view} AS {query.sql('duckdb')}")
            got = bare.sql(final.sql("duckdb")).to_arrow_table().to_pylist()
            assert_same_rows(f"{name} {params} (split)", want, got, is_ordered(name))
    finally:
        con.close()
        bare.close()


def test_there_are_rows_to_compare(warehouse):
    """The comparisons above mean something: most metrics have rows on this warehouse."""
    con = tracewh.connect(warehouse, read_only=True)
    empty = [name for name in METRICS if run_metric(con, find_metric(name), {}).num_rows == 0]
    con.close()
    assert empty == [], f"metrics without rows on the test warehouse: {empty}"


# --- pieces ------------------------------------------------------------------------------------

def test_parameters_become_escaped_literals_never_sql():
    sql = transpile_metric(find_metric("gpu_kernel_summary"), "spark",
                           {"run": "x' OR 1=1 --", "rank": "3"})
    tree = sqlglot.parse_one(sql, read="spark")
    strings = {lit.this for lit in tree.find_all(exp.Literal) if lit.is_string}
    assert "x' OR 1=1 --" in strings
    assert "3" in {lit.this for lit in tree.find_all(exp.Literal) if not lit.is_string}


def test_a_bad_parameter_fails_with_duckdbs_message():
    with pytest.raises(TranspileError, match="not a duration like 4s420ms: 4x"):
        transpile_metric(find_metric("gpu_trace"), "spark", {"window": "4x/5s"})


def test_constant_cte_is_evaluated_to_its_rows():
    sql = transpile_metric(find_metric("gpu_trace"), "spark", {"window": "4s420ms/35s390ms"})
    assert "4420000000" in sql and "35390000000" in sql and "duration" not in sql.lower()


def rewrite(sql: str) -> str:
    return to_target_ast(sql, "duckdb", {}, {}, default_catalog()).sql("duckdb")


def test_asof_join_rewrite_picks_the_latest_earlier_row():
    base = """WITH l(k, t) AS (VALUES (1, 5), (1, 10), (1, 1), (2, 7), (3, 4)),
                   r(k, t, v) AS (VALUES (1, 2, 'a'), (1, 5, 'b'), (1, 9, 'c'), (2, 8, 'd'),
                                         (3, 4, 'e'), (3, 4, 'e'))
              SELECT l.k, l.t, r.v FROM l ASOF {side} JOIN r ON l.k = r.k AND {cond}
              ORDER BY l.k, l.t"""
    for side in ("", "LEFT"):
        for cond in ("l.t >= r.t", "r.t <= l.t", "l.t > r.t", "l.t <= r.t", "r.t > l.t"):
            sql = base.format(side=side, cond=cond)
            want = duckdb.sql(sql).fetchall()
            rewritten = rewrite(sql)
            assert " ASOF " not in rewritten.upper()
            assert duckdb.sql(rewritten).fetchall() == want, (side, cond)


def test_window_count_distinct_and_union_by_name():
    sql = """WITH t(g, h) AS (VALUES (1, 'a'), (1, 'b'), (1, 'a'), (1, NULL), (2, NULL), (3, 'z'))
             SELECT g, h, count(DISTINCT h) OVER (PARTITION BY g) AS n FROM t
             UNION ALL BY NAME SELECT 9 AS g, 0 AS n
             ORDER BY g, h NULLS FIRST"""
    want = duckdb.sql(sql).fetchall()
    assert want[:4] == [(1, None, 2), (1, "a", 2), (1, "a", 2), (1, "b", 2)]
    rewritten = rewrite(sql)
    assert "DISTINCT" not in rewritten.upper() and "BY NAME" not in rewritten.upper()
    assert duckdb.sql(rewritten).fetchall() == want


def test_a_field_of_a_macros_struct_is_that_field_alone():
    """op_kernels asks perf_model(name, [], [], []) for its family: the transpiled expression is
    a CASE over the name giving each family (DuckDB's answer for every op name the models
    know, and for one they do not), with none of the FLOPs and bytes formulas left."""
    text = (sql_dir() / "lib" / "perf_models.sql").read_text()
    names = sorted(set(re.findall(r"'((?:aten|flash_attn)::\w+)'", text))) + ["aten::unknown"]
    assert len(names) > 80
    sql = ("SELECT name, perf_model(name, CAST([] AS BIGINT[][]), CAST([] AS VARCHAR[]), "
           "CAST([] AS VARCHAR[])).family AS family FROM cpu_ops")
    tree = to_target_ast(sql, "duckdb", {}, {}, default_catalog())
    assert "flops" not in tree.sql("duckdb") and len(tree.sql("duckdb")) < 5000
    con = tracewh.connect(":memory:")
    con.execute("CREATE TEMP TABLE cpu_ops AS SELECT unnest(?) AS name", [names])
    rewritten = tree.sql("duckdb").replace("FROM cpu_ops AS", "FROM temp.cpu_ops AS")
    want = con.sql(sql.replace("FROM cpu_ops", "FROM temp.cpu_ops")).fetchall()
    assert con.sql(rewritten).fetchall() == want
    assert {family for _, family in want} >= {"GEMM", "CONV_fwd", "SDPA_bwd", "embedding", None}


def test_named_window_in_arithmetic_is_parenthesized_for_spark():
    """Spark reads `sum(n) OVER w - n` as a window named `w-n` (queue_length failed so)."""
    sql = """WITH t(n) AS (VALUES (1), (2), (4))
             SELECT n, sum(n) OVER w - n AS below FROM t WINDOW w AS (ORDER BY n) ORDER BY n"""
    spark = to_target_ast(sql, "spark", {}, {}, default_catalog()).sql("spark")
    assert re.search(r"\(SUM\(t\.n\) OVER w\) - t\.n", spark), spark
    assert duckdb.sql(sql).fetchall() == [(1, 0), (2, 1), (4, 3)]


def test_a_view_the_lake_lacks_is_read_from_its_definition(warehouse):
    """A lake holds the views with a run_id (not launch_cpu_ops, the link op_summary reads):
    the transpiler reads such a view from its definition, with the same rows."""
    full = default_catalog()
    lake = Catalog({view: columns for view, columns in full.schemas.items()
                    if view in lake_views(full.con)}, full.con)
    assert "launch_cpu_ops" not in lake.schemas
    metric = find_metric("op_summary")
    con = tracewh.connect(warehouse, read_only=True)
    bare = duckdb.connect()
    try:
        for view in lake.schemas:
            bare.register(view, con.sql(f"SELECT * FROM {view}").to_arrow_table())
        want = run_metric(con, metric, {}).to_pylist()
        tree = to_target_ast(metric.query, "duckdb", bind_values(metric, {}),
                             {p.name: p.type for p in metric.params}, lake, label="op_summary")
        assert "launch_cpu_ops " not in tree.sql("duckdb") + " "
        got = bare.sql(tree.sql("duckdb")).to_arrow_table().to_pylist()
        want = [{k: v for k, v in r.items() if k not in ("metric", "version")} for r in want]
        assert want and len(want) == len(got)
        assert_same_rows("op_summary", want, got, is_ordered("op_summary"))
    finally:
        con.close()
        bare.close()


def test_empty_over_follows_the_sorted_subquery():
    sql = """SELECT x, lag(x) OVER () AS before, row_number() OVER () AS n
             FROM (SELECT * FROM (VALUES (3), (1), (2)) t(x) ORDER BY x DESC)"""
    rewritten = rewrite(sql)
    assert sorted(duckdb.sql(rewritten).fetchall()) == [(1, 2, 3), (2, 3, 2), (3, None, 1)]


def test_cli_transpile(tmp_path):
    result = runner.invoke(app, ["metrics", "transpile", "idle_gaps", "--dialect", "trino",
                                 "--param", "rank=1"])
    assert result.exit_code == 0, result.stderr
    assert sqlglot.parse_one(result.stdout.rstrip().rstrip(";"), read="trino")
    result = runner.invoke(app, ["metrics", "transpile", "idle_gaps", "--dialect", "mysql"])
    assert result.exit_code == 1 and "use one of spark, trino" in result.stderr
    result = runner.invoke(app, ["query", "idle_gaps", "--engine", "spark"])
    assert result.exit_code == 1 and "--lake" in result.stderr


@pytest.mark.parametrize("name", DUCKDB_ONLY)
def test_metric_without_a_target_form_is_refused_by_name(name):
    with pytest.raises(TranspileError, match=f"{name}: .*USING KEY.*run it on DuckDB"):
        transpile_metric(find_metric(name), "spark")
