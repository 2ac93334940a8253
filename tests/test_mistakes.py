"""Mistakes say so: a one-line error and a non-zero exit, never an empty table and exit 0;
what ingest passes over, guesses or warns about is printed."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job
from tracewh.ingest.discover import discover
from tracewh.resources import sql_dir

runner = CliRunner()
SAMPLE = sql_dir().parent / "sample_db" / "traces"


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("mistakes") / "sample.duckdb"
    assert runner.invoke(app, ["ingest", "-q", str(SAMPLE), "--db", str(db)]).exit_code == 0
    return db


def error_of(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code != 0 and not result.stdout, (result.exit_code, result.stdout)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("params, expected", [
    (["run=ddp_4rank"], "no run 'ddp_4rank' in the warehouse - did you mean 'ddp_4ranks'?"),
    (["run=ddp_4ranks", "rank=4"], "no rank 4 in run 'ddp_4ranks' (ranks: 0-3)"),
    (["rank=-1"], "no rank -1 in any run (ranks: 0-3)"),
    (["iteration_from=5", "iteration_to=2"], "iteration_to=5 is before"),
])
def test_unknown_run_or_rank_is_an_error(sample_db, params, expected):
    args = ["query", "gpu_kernel_summary", "--db", str(sample_db)]
    for param in params:
        args += ["-p", param]
    if "iteration_to=2" in params:
        expected = "iteration_to=2 is before iteration_from=5: nothing lies between"
    assert expected in error_of(*args)


@pytest.mark.parametrize("metric, param, expected", [
    ("gpu_trace", "window=5s/1s", "window='5s/1s' ends before it starts"),
    ("gpu_trace", "window=5x/", "not a duration like 4s420ms: 5x"),
    ("gpu_trace", "end_ns=1", "end_ns=1 is before start_ns=2"),
    ("gpu_utilization", "bins=0", "bins=0: must be 1 or more"),
    ("scaling", "runs=ddp_4ranks,nosuch", "no run 'nosuch' in the warehouse"),
    ("scaling", "series=tp-0000", "no series 'tp-0000' (the series view lists the 0 there are"),
    ("regressions", "series=tp-0000", "no series 'tp-0000'"),
    ("run_diff", "base=ddp_4rank", "no run 'ddp_4rank' in the warehouse - did you mean"),
])
def test_empty_questions_are_errors(sample_db, metric, param, expected):
    extra = ["-p", "start_ns=2"] if param == "end_ns=1" else []
    assert expected in error_of("query", metric, "--db", str(sample_db), "-p", param, *extra)


def test_a_window_outside_the_capture_says_the_capture_span(sample_db):
    con = tracewh.connect(sample_db, read_only=True)
    try:  # rank 1's first and last event of any kind, from the views
        first, last = con.execute(
            "SELECT min(s), max(e) FROM (SELECT start_ns s, end_ns e FROM gpu_ops WHERE run_id = "
            "'ddp_4ranks' AND rank = 1 UNION ALL SELECT start_ns, end_ns FROM cuda_api WHERE "
            "run_id = 'ddp_4ranks' AND rank = 1 UNION ALL SELECT start_ns, end_ns FROM cpu_ops "
            "WHERE run_id = 'ddp_4ranks' AND rank = 1)").fetchone()
    finally:
        con.close()
    line = error_of("query", "gpu_trace", "--db", str(sample_db), "-p", "run=ddp_4ranks", "-p",
                    "rank=1", "-p", "start_ns=1", "-p", "end_ns=2")
    assert (f"gpu_trace: start_ns=1, end_ns=2 misses the capture: run 'ddp_4ranks' rank 1 spans "
            f"start_ns={first} to end_ns={last} (2026-01-01 00:00:00.") in line
    line = error_of("query", "gpu_kernel_summary", "--db", str(sample_db), "-p", "window=90s/")
    assert re.search(r"window=90s/ misses the capture: the warehouse spans [\d.]+ us to "
                     r"485\.\d\d ms after its sources' start", line), line
    inside = runner.invoke(app, ["query", "gpu_trace", "--db", str(sample_db), "-p", "rank=0",
                                 "-p", "window=440ms/441ms", "-f", "csv"])
    assert inside.exit_code == 0 and inside.stdout.count("\n") > 1


def test_an_annotation_no_range_names_is_an_error(sample_db):
    line = error_of("query", "critical_path", "--db", str(sample_db), "-p", "run=ddp_4ranks",
                    "-p", "rank=0", "-p", "annotation=ProfilerStap")
    assert ("critical_path: no NVTX range or annotation in run 'ddp_4ranks' rank 0 has a name "
            "containing 'ProfilerStap' - did you mean 'ProfilerStep#") in line


def test_chrome_trace_of_an_unknown_run(sample_db, tmp_path):
    line = error_of("export", str(tmp_path / "x.json"), "--format", "chrome-trace", "--run",
                    "fsdp_4ranks", "--db", str(sample_db))
    assert "no run 'fsdp_4ranks' in the warehouse - did you mean 'fsdp_4ranks_kineto'?" in line
    assert not (tmp_path / "x.json").exists()


def test_did_you_mean_a_metric_and_a_column(sample_db):
    assert "did you mean 'gpu_kernel_summary'?" in error_of("query", "gpu_kernel_sumary")
    line = error_of("sql", "SELECT rnak FROM kernels", "--db", str(sample_db))
    assert 'Referenced column "rnak" not found' in line and 'Candidate bindings: "rank"' in line


def test_one_step_iteration_time_says_what_it_left_out(tmp_path):
    generate_kineto_job(tmp_path / "one", KinetoJobSpec(world_size=1, iterations=1))
    db = tmp_path / "w.duckdb"
    assert runner.invoke(app, ["ingest", "-q", str(tmp_path / "one"), "--db", str(db)]).exit_code == 0
    result = runner.invoke(app, ["query", "iteration_time", "--db", str(db), "-f", "csv"])
    assert result.exit_code == 0 and result.stdout.count("\n") == 1  # the header alone
    assert "leaves out the first and last iteration of each rank" in result.stderr
    assert "--param include_first_last=true" in result.stderr
    kept = runner.invoke(app, ["query", "iteration_time", "--db", str(db), "-f", "csv", "-p",
                               "include_first_last=true"])
    assert [r["iterations"] for r in csv.DictReader(io.StringIO(kept.stdout))] == ["1", "1"]


def test_format_from_the_output_extension(sample_db, tmp_path):
    for name, check in [("x.csv", lambda t: t.startswith("run_id,")),
                        ("x.json", lambda t: json.loads(t)[0]["run_id"] == "ddp_4ranks"),
                        ("x.md", lambda t: t.startswith("| run_id |"))]:
        result = runner.invoke(app, ["runs", "--db", str(sample_db), "-o", str(tmp_path / name)])
        assert result.exit_code == 0 and check((tmp_path / name).read_text()), name
    runner.invoke(app, ["runs", "--db", str(sample_db), "-o", str(tmp_path / "x.parquet")])
    assert (tmp_path / "x.parquet").read_bytes()[:4] == b"PAR1"


def test_sql_from_a_file(sample_db, tmp_path):
    query = tmp_path / "q.sql"
    query.write_text("SELECT count(DISTINCT rank) AS n FROM kernels\n")
    result = runner.invoke(app, ["sql", "--file", str(query), "--db", str(sample_db), "-f", "csv"])
    assert result.stdout == "n\n4\n"
    assert "one of the two" in error_of("sql", "SELECT 1", "--file", str(query))


def test_a_trace_given_as_the_warehouse(tmp_path):
    trace = tmp_path / "rank0.sqlite"
    shutil.copy(SAMPLE / "ddp_4ranks" / "rank0.sqlite", trace)
    line = error_of("runs", "--db", str(trace))
    assert f"{trace} is an SQLite file (a trace?), not a tracewh warehouse - did you mean " \
           f"'tracewh ingest {trace}'?" in line


def test_a_folder_without_traces(tmp_path):
    (tmp_path / "jax").mkdir()
    (tmp_path / "jax" / "proc0.zip").write_bytes(b"PK\x03\x04")
    db = tmp_path / "w.duckdb"
    for given in (tmp_path / "jax", tmp_path / "jax" / "proc0.zip"):
        result = runner.invoke(app, ["ingest", str(given), "--db", str(db)])
        assert result.exit_code == 1
        error, summary = result.stderr.splitlines()
        assert error.startswith(f"Error: {given}: ") and "nsys-jax archive" in error
        assert ("no trace files in this folder" if given.is_dir() else "not a known trace "
                "format") in error
        assert summary.endswith("1 failed")
        assert not db.exists()  # a failed ingest into a new path leaves no empty warehouse


def test_stray_json_and_duplicates_do_not_flood(tmp_path):
    folder = tmp_path / "job"
    shutil.copytree(SAMPLE / "fsdp_4ranks_kineto", folder)
    (folder / "config.json").write_text(json.dumps({"lr": 0.1, "batch_size": 8}))
    db = str(tmp_path / "w.duckdb")
    first = runner.invoke(app, ["ingest", str(folder), "--db", db])
    assert first.exit_code == 0, first.stderr
    assert "passed over 1 .json that is not a trace (config.json)" in first.stderr
    copies = tmp_path / "copies"
    for i in range(6):  # the same four files again, six times: 24 duplicates
        shutil.copytree(folder, copies / f"c{i}")
    again = runner.invoke(app, ["ingest", str(copies), "--db", db])
    assert again.exit_code == 0
    assert again.stderr.count("skipped ") == 3 and "24 already present" in again.stderr


def test_files_read_beside_the_traces_are_not_passed_over(tmp_path):
    folder = tmp_path / "job"
    shutil.copytree(SAMPLE / "fsdp_4ranks_kineto", folder)
    (folder / "workload.yaml").write_text("workload:\n  data:\n    batch_size: 8\n    seq_len: 512\n")
    (folder / "notes.yaml").write_text("todo: rerun with 8 nodes\n")
    (folder / "ds_config.json").write_text(json.dumps({"train_batch_size": 8}))
    result = runner.invoke(app, ["ingest", str(folder), "--db", str(tmp_path / "w.duckdb")])
    assert result.exit_code == 0, result.stderr
    assert "passed over 1 .yaml (notes.yaml)" in result.stderr  # the card and config were read
    assert "workload.yaml" not in result.stderr and "ds_config" not in result.stderr


def test_hints_name_the_cause_that_applies(tmp_path):
    """throughput without complete iterations names include_first_last; traffic_distribution
    on a Kineto trace without message sizes does not blame nsys' --include-blobs."""
    generate_kineto_job(tmp_path / "one", KinetoJobSpec(world_size=2, iterations=1))
    for trace in (tmp_path / "one").glob("*.json"):  # the NCCL ops' sizes taken out
        doc = json.loads(trace.read_text())
        for event in doc["traceEvents"]:
            for key in ("In msg nelems", "Out msg nelems"):
                event.get("args", {}).pop(key, None)
        trace.write_text(json.dumps(doc))
    db = tmp_path / "w.duckdb"
    assert runner.invoke(app, ["ingest", "-q", str(tmp_path / "one"), "--db", str(db)]).exit_code == 0
    with tracewh.Session(db) as session:
        (reason,) = session.query("throughput").column("reason").to_pylist()
        notes = set(session.query("traffic_distribution").column("note").to_pylist())
    assert reason.endswith("(include_first_last=true keeps them)")
    assert notes == {"message size unknown: full_bytes is NULL (this Kineto trace records no "
                     "message size on these NCCL ops: no 'In msg nelems' in their args)"}


def test_natural_file_order(tmp_path):
    for name in ("node10.sqlite", "node2.sqlite", "node1.sqlite"):
        (tmp_path / name).write_bytes(b"")
    found, errors, _ = discover([tmp_path])
    assert [c.path.name for c in found] == ["node1.sqlite", "node2.sqlite", "node10.sqlite"]


def test_ingest_warnings_are_printed(shared_data, tmp_path):
    result = runner.invoke(app, [
        "ingest", str(shared_data / "nsys" / "nsys-2021" / "report1.sqlite"),
        str(shared_data / "kineto" / "hta" / "rank_unavailable"), "--db",
        str(tmp_path / "w.duckdb")])
    assert result.exit_code == 0, result.stderr
    assert "report1.sqlite: no UTC anchor" in result.stderr
    assert "rank_not_found.json.gz: no rank in the trace: taken as rank 0" in result.stderr


def test_runs_name_what_looks_wrong(shared_data, tmp_path):
    # three nsys exports from two hosts and three days, in one folder
    folder = tmp_path / "mixed"
    folder.mkdir()
    for name in ("mfu_2gpu_before.sqlite", "h100_2gpu_1s.sqlite", "mock.sqlite"):
        (folder / name).symlink_to(shared_data / "nsys" / "nsys-ai" / name)
    db = str(tmp_path / "w.duckdb")
    result = runner.invoke(app, ["ingest", str(folder), "--db", db])
    note = "run 'mixed': 3 files whose captures do not overlap in time (2 host(s), 3 day(s))"
    assert result.exit_code == 0 and note in result.stderr, result.stderr
    assert note in runner.invoke(app, ["runs", "--db", db]).stderr
    con = tracewh.connect(db, read_only=True)
    hosts, days = con.execute(
        "SELECT count(DISTINCT host), count(DISTINCT CAST(to_timestamp(origin_ns / 1e9) AS DATE)) "
        "FROM sources").fetchone()
    con.close()
    assert (hosts, days) == (2, 3)


def test_runs_say_when_ranks_are_missing(shared_data, tmp_path):
    folder = tmp_path / "dlrm"
    folder.mkdir()
    for name in sorted(p.name for p in (shared_data / "kineto" / "param" / "dlrm_kineto")
                       .glob("worker[01]_*.json")):  # 2 of the job's 8 ranks
        (folder / name).symlink_to(shared_data / "kineto" / "param" / "dlrm_kineto" / name)
    db = str(tmp_path / "w.duckdb")
    assert runner.invoke(app, ["ingest", "-q", str(folder), "--db", db]).exit_code == 0
    result = runner.invoke(app, ["runs", "--db", db])
    assert "run 'dlrm': 2 of 8 ranks present" in result.stderr
    row = next(csv.DictReader(io.StringIO(runner.invoke(app, ["runs", "--db", db, "-f",
                                                               "csv"]).stdout)))
    assert (row["ranks"], row["world_size"], row["note"]) == ("2", "8", "2 of 8 ranks present")


def test_piped_stderr_keeps_whole_lines(sample_db, tmp_path):
    # the ingest summary ran past 80 characters and was cut into two lines when piped
    done = subprocess.run([sys.executable, "-m", "tracewh.cli", "ingest", str(SAMPLE),
                           str(tmp_path / "no_such.sqlite"), "--db", str(sample_db)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "80"})
    assert done.returncode == 1
    summary = done.stderr.splitlines()[-1]
    assert re.fullmatch(r"ingested 0 file\(s\), 0 rows, 0\.0 MB in [0-9.]+ s \(0\.0 MB/s\); "
                        r"8 already present; 1 failed", summary), done.stderr
    assert len(summary) > 80
