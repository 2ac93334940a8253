"""Every metric's answer on every fixture and real trace, kept once so a rewrite can prove it
changes no row (issue 24: the scope macros must give identical rows). First recorded before
the scope-macro rewrite (which then matched 496 of 496 answers); recorded again when the
round's branches merged, whose changes of answers each raised a version (sql/metrics.lock).
Record again only with a new metric or version, never to make a rewrite pass:
`python tests/metric_outputs.py record METRIC ...` records those metrics' answers only.

`python tests/metric_outputs.py record` runs every metric of the catalogue with representative
parameter sets (defaults; run and rank; an iteration range; a UTC range; a relative window;
per_iteration, top, bins and the other knobs) on four warehouses: the catalogue's hand-built one,
a generated nsys job, a generated Kineto job and every real trace of ../shared/data, and writes a
digest per answer to tests/golden/pre_refactor/outputs.json.gz: the columns and their types, the
row count, the SHA-256 of the sorted rows and the first rows. tests/test_metrics_golden.py
computes the same digests from today's SQL and compares them.

Floats are kept to 10 significant digits: DuckDB's parallel sums of doubles may add in any order,
and the order rows reach an aggregate follows ingest's (at 12 digits a standard deviation's last
digit flipped between two ingests of the same files).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import sys
from pathlib import Path

import tracewh
from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import ingest_paths
from tracewh.metrics import list_metrics, run_metric

GOLDEN = Path(__file__).parent / "golden" / "pre_refactor" / "outputs.json.gz"
FIRST_ROWS = 3
DIGITS = 10  # significant digits of a float in a digest
REAL_FOLDERS = ("nsys", "kineto")


# --- the warehouses ---------------------------------------------------------------------------

def catalogue_warehouse(folder: Path):
    from metric_fixtures import build
    from test_metrics_catalogue import RUNS
    return build(folder / "catalogue.duckdb", RUNS)


def generated_nsys_warehouse(folder: Path):
    generate_job(folder / "nsys", JobSpec(world_size=4, iterations=4, layers=3, seed=11))
    return _ingested(folder / "nsys.duckdb", [folder / "nsys"])


def generated_kineto_warehouse(folder: Path):
    generate_kineto_job(folder / "kineto", KinetoJobSpec(world_size=4, iterations=4, layers=2,
                                                         seed=3, clock_skew_ns={1: 2500}))
    return _ingested(folder / "kineto.duckdb", [folder / "kineto"])


def real_warehouse(folder: Path, shared_data: Path):
    """Every real trace; files ingest refuses (CPU-only, unknown rank, ...) are simply absent."""
    return _ingested(folder / "real.duckdb", [shared_data / name for name in REAL_FOLDERS],
                     require_all=False)


def _ingested(path: Path, inputs: list[Path], require_all: bool = True):
    con = tracewh.connect(path)
    results = ingest_paths(con, inputs, jobs=1)
    if require_all:
        assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    return con


WAREHOUSES = ("catalogue", "generated_nsys", "generated_kineto", "real")


def open_warehouse(name: str, folder: Path, shared_data: Path | None):
    folder.mkdir(parents=True, exist_ok=True)
    if name == "real":
        return real_warehouse(folder, shared_data)
    return globals()[f"{name}_warehouse"](folder)


# --- the parameter sets -----------------------------------------------------------------------

def scope_of(con) -> dict[str, str]:
    """Values that select part of the warehouse: its run with the most ranks (then the most GPU
    ops), that run's first rank, its second and third iterations, the middle half of its GPU span
    (UTC and relative to its first source's start)."""
    run, rank = con.execute(
        "SELECT run_id, min(rank) FROM gpu_ops GROUP BY run_id "
        "ORDER BY count(DISTINCT rank) DESC, count(*) DESC, run_id LIMIT 1").fetchone()
    first, last = con.execute(
        "SELECT min(iteration), max(iteration) FROM iterations WHERE run_id = ?", [run]).fetchone()
    low, high = con.execute(
        "SELECT min(start_ns), max(end_ns) FROM gpu_ops WHERE run_id = ?", [run]).fetchone()
    origin = con.execute(
        "SELECT min(origin_ns) FROM sources WHERE run_id = ?", [run]).fetchone()[0] or 0
    quarter = (high - low) // 4
    scope = dict(run=run, rank=str(rank), start_ns=str(low + quarter),
                 end_ns=str(high - quarter),
                 window=f"{low + quarter - origin}/{high - quarter - origin}")
    if first is not None:
        scope.update(iteration_from=str(min(first + 1, last)), iteration_to=str(min(first + 2, last)))
    return scope


KNOBS = dict(per_iteration="true", include_first_last="true", top="2", bins="7",
             threshold="20", kernel_wait_ns="5", collective="AllReduce", stages="2",
             microbatches="4", step_pattern="^ProfilerStep", nvtx="^(forward|ncclAllReduce|aten)",
             phases="^(forward|backward)", measure="memory", per_op="true", per_rank="true",
             parallelism="true")


def param_sets(metric, scope: dict[str, str]) -> dict[str, dict[str, str]]:
    """Named parameter sets for `metric`: each keeps the parameters the metric declares."""
    wanted = {
        "defaults": {},
        "run_rank": {"run": scope["run"], "runs": scope["run"], "rank": scope["rank"]},
        "iterations": {k: scope[k] for k in ("run", "iteration_from", "iteration_to") if k in scope},
        "utc_range": {k: scope[k] for k in ("run", "start_ns", "end_ns")},
        "window": {k: scope[k] for k in ("run", "window")},
        "knobs": KNOBS,
        "knobs_iterations": {**KNOBS, **{k: scope[k] for k in ("iteration_from", "iteration_to")
                                         if k in scope}},
    }
    declared = {p.name for p in metric.params}
    sets: dict[str, dict[str, str]] = {}
    for label, params in wanted.items():
        kept = {k: v for k, v in params.items() if k in declared}
        if kept not in sets.values() and (kept or label == "defaults"):
            sets[label] = kept
    return sets


# --- digests ----------------------------------------------------------------------------------

def canonical(value):
    if isinstance(value, float):
        return "nan" if math.isnan(value) else float(f"{value:.{DIGITS}g}")
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items()}
    if value is None or isinstance(value, (int, str, bool)):
        return value
    return str(value)


def digest(table) -> dict:
    columns = [name for name in table.column_names if name not in ("metric", "version")]
    rows = [json.dumps(canonical([row[c] for c in columns]), sort_keys=True)
            for row in table.to_pylist()]
    return dict(columns=columns,
                types=[str(table.schema.field(c).type) for c in columns],
                rows=len(rows),
                sha256=hashlib.sha256("\n".join(sorted(rows)).encode()).hexdigest(),
                first=[json.loads(r) for r in rows[:FIRST_ROWS]])


def outputs(con, only: set[str] | None = None) -> dict[str, dict]:
    """`metric/param set` -> digest of its answer (or the error it raised) on `con`; `only`:
    those metrics."""
    scope = scope_of(con)
    found = {}
    for metric in list_metrics():
        if only and metric.name not in only:
            continue
        for label, params in param_sets(metric, scope).items():
            try:
                found[f"{metric.name}/{label}"] = dict(params=params,
                                                       **digest(run_metric(con, metric, params)))
            except Exception as exc:  # an error is an answer too: it must stay the same
                found[f"{metric.name}/{label}"] = dict(params=params, error=str(exc))
    return found


def record(folder: Path, shared_data: Path, only: set[str] | None = None) -> dict:
    """Every answer, or with `only` those metrics' answers again (the others kept as recorded)."""
    everything = load_golden() if only else {}
    for name in WAREHOUSES:
        con = open_warehouse(name, folder / name, shared_data)
        answers = everything.setdefault(name, {})
        for key in [k for k in answers if k.split("/")[0] in (only or ())]:
            del answers[key]
        answers.update(outputs(con, only))
        con.close()
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(GOLDEN, "wt") as out:
        json.dump(everything, out, indent=0, sort_keys=True)
    return everything


def load_golden() -> dict:
    with gzip.open(GOLDEN, "rt") as file:
        return json.load(file)


if __name__ == "__main__" and sys.argv[1:2] == ["record"]:
    import tempfile
    sys.path.insert(0, str(Path(__file__).parent))
    from conftest import shared_data_dir
    with tempfile.TemporaryDirectory() as tmp:
        result = record(Path(tmp), shared_data_dir(), set(sys.argv[2:]))
    print({name: len(answers) for name, answers in result.items()}, "->", GOLDEN)
