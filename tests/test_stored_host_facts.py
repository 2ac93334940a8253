"""The host facts stored at ingest (migration 0020: sql/nvtx_range_facts.sql and
sql/cuda_api_roles.sql) equal what the views computed from the rows at every query before: on
the sample traces and on a real autograd-NVTX nsys export. And a warehouse stored before 0020
gets them, and the same answers, when it is upgraded."""

from __future__ import annotations

import re

import duckdb
import pytest

import tracewh
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric
from tracewh.resources import sql_dir

SAMPLE = sql_dir().parent / "sample_db" / "traces"
EXPORT = "nsys/nsys-ai/mfu_2gpu_before.sqlite"

# The rules as the views wrote them (sql/lib/iteration_number.sql, phase_names.sql,
# host_activity.sql, views/parallel_groups.sql), in Python's re
STEP = re.compile(r"^(?:ProfilerStep#|[Ii]teration[ _#]?|[Ss]tep[ _#]?)([0-9]+)$")
PHASE = re.compile(r"(^|[.:]|## )(forward|backward|optimizer|optimizer_step|_take_model_step|step)( ##)?$")
DATA = re.compile(r"(?i)dataloader|data_load|data loading|get_batch|next_batch")
LAUNCH = re.compile(r"(?i)optimi[sz]er|_take_model_step|backward|forward")


def name_facts(name: str | None) -> tuple:
    """(iteration, phase, data_loading, launch_phase) of a range name, NULL as None."""
    if name is None:
        return None, None, None, None
    step = STEP.match(name)
    iteration = int(step.group(1)) if step and int(step.group(1)) < 2**31 else None
    phase = None
    if PHASE.search(name):
        phase = ("backward" if re.search(r"(?i)backward|bwd", name)
                 else "forward" if re.search(r"(?i)forward|fwd", name) else "optimizer")
    launch = None
    if LAUNCH.search(name) and not re.search(r"(?i)zero_grad", name):
        launch = (1 if re.search(r"(?i)optimi[sz]er|_take_model_step", name)
                  else 2 if re.search(r"(?i)backward", name) else 3)
    return iteration, phase, True if DATA.search(name) else None, launch


# blocking_calls' rules as sql/lib/host_activity.sql computed them over every call before 0020
# (_nested_driver_calls, _few_calls), read from the views
BLOCKING_BEFORE = """
WITH nested AS (
    SELECT DISTINCT r.file_id, r.pid, r.correlation_id
    FROM cuda_api r
    JOIN (SELECT DISTINCT file_id, pid, correlation_id FROM cuda_api
          WHERE api_kind = 'driver' AND correlation_id IS NOT NULL) d
      ON d.file_id = r.file_id AND d.pid = r.pid AND d.correlation_id = r.correlation_id
    WHERE r.api_kind = 'runtime'
),
copies AS (
    SELECT file_id, pid, correlation_id, launch_ns,
           CASE WHEN src_kind = 'Pageable' OR dst_kind = 'Pageable' THEN 'pageable memcpy' END AS pageable
    FROM memcpy WHERE launch_ns IS NOT NULL
    UNION ALL
    SELECT file_id, pid, correlation_id, launch_ns, NULL FROM memset WHERE launch_ns IS NOT NULL
),
few AS (
    SELECT a.*,
           CASE WHEN regexp_matches(a.name, '^(cu|cuda|hip)(Device|Stream|Event|Ctx)Synchronize') THEN 'sync api'
                WHEN regexp_matches(a.name, '^(cu|cuda|hip)[A-Za-z0-9_]*Memcpy') THEN 'memcpy'
                WHEN regexp_matches(a.name, '^(cu|cuda|hip)[A-Za-z0-9_]*Memset') THEN 'memset'
                WHEN regexp_matches(a.name, '^(cu|cuda|hip)[A-Za-z0-9_]*Launch') THEN 'launch' END AS class,
           a.api_kind = 'driver' AND (a.file_id, a.pid, a.correlation_id) IN (SELECT * FROM nested) AS inside
    FROM cuda_api a
)
SELECT a.file_id, a.pid, a.tid, a.start_ns, a.name, a.inside,
       CASE WHEN a.inside OR a.class IS NULL THEN NULL
            WHEN a.class = 'sync api' THEN 'sync api'
            WHEN c.launch_ns IS NULL THEN NULL
            WHEN a.class IN ('memcpy', 'memset') AND NOT contains(a.name, 'Async') THEN 'sync ' || a.class
            WHEN a.class = 'memcpy' THEN c.pageable END AS rule
FROM few a
LEFT JOIN (SELECT file_id, pid, correlation_id, launch_ns, any_value(pageable) AS pageable
           FROM copies GROUP BY ALL) c
       ON c.file_id = a.file_id AND c.pid = a.pid AND c.correlation_id = a.correlation_id
      AND c.launch_ns = a.start_ns
"""
BLOCKING_STORED = """
SELECT file_id, pid, tid, start_ns, name, coalesce(in_runtime_call, false), blocking_rule
FROM store.cuda_api
"""
# the metrics reading the stored facts (host_activity, iterations, parallel_groups)
METRICS = ("idle_gaps", "host_breakdown", "sync_stalls", "straggler_cause", "parallelism",
           "iteration_time", "nvtx_phases")


def check_facts(con) -> dict[str, int]:
    """Every stored fact equals the rules' value; returns how many rows of each are set."""
    rows = con.execute("SELECT name, iteration, phase, data_loading, launch_phase "
                       "FROM store.nvtx_ranges").fetchall()
    wrong = [(name, got) for name, *got in rows if tuple(got) != name_facts(name)]
    assert not wrong, wrong[:5]
    before = sorted(con.execute(BLOCKING_BEFORE).fetchall(), key=repr)
    stored = sorted(con.execute(BLOCKING_STORED).fetchall(), key=repr)
    assert stored == before
    counts = dict(zip(("iteration", "phase", "data_loading", "launch_phase", "blocking_rule",
                       "in_runtime_call"), con.execute(
        "SELECT (SELECT count(iteration) FROM store.nvtx_ranges), "
        "(SELECT count(phase) FROM store.nvtx_ranges), "
        "(SELECT count(data_loading) FROM store.nvtx_ranges), "
        "(SELECT count(launch_phase) FROM store.nvtx_ranges), "
        "(SELECT count(blocking_rule) FROM store.cuda_api), "
        "(SELECT count(in_runtime_call) FROM store.cuda_api)").fetchone()))
    return counts


def answers(con, metrics=METRICS) -> dict[str, list]:
    """Each metric's rows with its default parameters, in a fixed order."""
    return {m: sorted(map(repr, run_metric(con, find_metric(m), {}).to_pylist())) for m in metrics}


def test_sample_facts_equal_the_rules(db_path):
    con = tracewh.connect(db_path)
    assert {r.status for r in ingest_paths(con, [SAMPLE], jobs=1)} == {"ingested"}
    counts = check_facts(con)
    con.close()
    # the sample has steps, phases (forward, backward, optimizer) and sync calls
    assert counts["iteration"] > 0 and counts["phase"] > 0 and counts["launch_phase"] > 0
    assert counts["blocking_rule"] > 0


def test_real_autograd_nvtx_export_facts_equal_the_rules(shared_data, db_path):
    con = tracewh.connect(db_path)
    results = ingest_paths(con, [shared_data / EXPORT], run="mfu")
    assert [r.status for r in results] == ["ingested"], results[0].message
    counts = check_facts(con)
    con.close()
    # autograd's ...Backward0 ranges mark backward for the collectives; syncs and copies wait
    assert counts["launch_phase"] > 0 and counts["blocking_rule"] > 0


def test_a_warehouse_stored_before_0020_gets_the_facts_and_the_same_answers(db_path):
    """The sample ingested by today's tracewh, then taken back to how a warehouse made before
    0020 holds it (without the columns, 0020 and the derive entries not recorded): opened for
    writing it is upgraded to the same facts and the same answers."""
    con = tracewh.connect(db_path)
    assert {r.status for r in ingest_paths(con, [SAMPLE], jobs=1)} == {"ingested"}
    facts = check_facts(con)
    expected = answers(con)
    con.close()
    with duckdb.connect(str(db_path)) as raw:
        for table, column in (("nvtx_ranges", "iteration"), ("nvtx_ranges", "phase"),
                              ("nvtx_ranges", "data_loading"), ("nvtx_ranges", "launch_phase"),
                              ("cuda_api", "in_runtime_call"), ("cuda_api", "blocking_rule")):
            raw.execute(f"ALTER TABLE store.{table} DROP COLUMN {column}")
        raw.execute("DELETE FROM store.schema_migrations WHERE version = 20")
        raw.execute("DELETE FROM store.meta WHERE key IN "
                    "('derive:nvtx_range_facts', 'derive:cuda_api_roles')")
    con = tracewh.connect(db_path)
    assert con.execute("SELECT count(*) FROM store.schema_migrations WHERE version = 20").fetchone() == (1,)
    assert check_facts(con) == facts
    assert answers(con) == expected
    con.close()
