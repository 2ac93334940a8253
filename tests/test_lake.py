"""DuckDB over a Parquet lake (tracewh.lake, `tracewh query --lake`): every metric gives exactly
the warehouse's rows on the lake exported from it (the sample traces, and real nsys and Kineto
traces when ../shared is there); a folder that is not a lake, or a lake of other views, is
refused in one line."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import REPO, shared_data_dir
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.errors import TracewhError
from tracewh.lake import read_manifest
from tracewh.metrics import list_metrics
from tracewh.session import Session

runner = CliRunner()
# real traces beside the sample's two runs: nsys with NCCL (2 ranks), Kineto with shapes and
# memory events (perf_ops, op_efficiency, the memory metrics)
REAL = {"mfu": "nsys/nsys-ai/mfu_2gpu_before.sqlite",
        "bert": "kineto/tracelens/pairs/h100/gaunernst_bert-small-uncased__1016001.json.gz"}


def _invoke(*args: str):
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A warehouse of the sample traces, a generated MoE job (and the real ones when present)
    and its lake."""
    folder = tmp_path_factory.mktemp("lake")
    db, lake = folder / "wh.duckdb", folder / "lake"
    _invoke("ingest", "--quiet", "--db", str(db), str(REPO / "sample_db" / "traces"))
    # all_to_allv with split sizes (alltoall_pairs): no sample or shared trace records them
    _invoke("generate", "parallel", str(folder / "moe_dropless"), "--job", "moe_dropless",
            "--steps", "2")
    _invoke("ingest", "--quiet", "--db", str(db), str(folder / "moe_dropless"))
    data = shared_data_dir()
    for run, path in REAL.items() if data.is_dir() else ():
        _invoke("ingest", "--quiet", "--db", str(db), str(data / path), "--run", run)
    _invoke("export", str(lake), "--db", str(db))
    return db, lake


@pytest.fixture(scope="module")
def over_lake(exported):
    with Session.of_lake(exported[1]) as session:
        yield session


def _no_rows_here() -> set[str]:
    """Metrics these traces give no rows (no logs, no NIC counters, no phases in memory)."""
    none = {"link_utilization", "log_phases", "memory_by_phase"}
    return none if shared_data_dir().is_dir() else \
        none | {"memory_at_peak", "memory_peaks", "memory_timeline"}


def _sorted(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda row: repr(list(row.values())))


@pytest.mark.parametrize("name", [m.name for m in list_metrics()])
def test_metric_on_the_lake_equals_the_warehouse(exported, over_lake, name):
    # the warehouse without a Session's guards: they would lock the settings of the file's
    # database for every connection this process opens to it while this one is open
    con = tracewh.connect(exported[0], read_only=True)
    try:
        want = Session.over(con).query(name)
    finally:
        con.close()
    got = over_lake.query(name)
    assert want.num_rows > 0 or name in _no_rows_here(), f"{name}: no rows to compare"
    assert got.column_names == want.column_names
    # the same values, floats included (the same SQL over the same rows); row order where the
    # metric orders is checked through the CLI below
    assert _sorted(got.to_pylist()) == _sorted(want.to_pylist())


def test_cli_query_and_runs_over_the_lake(exported):
    db, lake = exported
    for args in (["query", "gpu_trace", "--param", "rank=1", "--format", "csv"],
                 ["query", "temporal_breakdown", "--param", "run=ddp_4ranks", "--format", "csv"],
                 ["runs", "--format", "csv"]):
        on_lake = _invoke(*args, "--lake", str(lake)).stdout
        assert on_lake == _invoke(*args, "--db", str(db)).stdout  # order included
        assert len(on_lake.splitlines()) > 2
    csv = _invoke("sql", "SELECT run_id, count(*) AS n FROM kernels GROUP BY 1 ORDER BY 1",
                  "--lake", str(lake), "--format", "csv").stdout
    assert csv == _invoke("sql", "SELECT run_id, count(*) AS n FROM kernels GROUP BY 1 ORDER BY 1",
                          "--db", str(db), "--format", "csv").stdout


def test_mistakes_are_named_as_on_the_warehouse(exported):
    db, lake = exported
    for args in (["query", "gpu_trace", "--param", "rank=9"],
                 ["query", "gpu_trace", "--param", "run=ddp_4rank"],
                 ["query", "gpu_kernel_summary", "--param", "window=900s/901s"]):
        on_lake = runner.invoke(app, [*args, "--lake", str(lake)])
        on_db = runner.invoke(app, [*args, "--db", str(db)])
        assert on_lake.exit_code == on_db.exit_code == 1
        assert on_lake.stderr == on_db.stderr
    both = runner.invoke(app, ["query", "gpu_trace", "--db", str(db), "--lake", str(lake)])
    assert both.exit_code == 1 and "give one" in both.stderr


def test_a_run_the_manifest_does_not_vouch_for_is_not_read(exported, tmp_path):
    """An export killed before its manifest leaves files of a run the manifest does not list."""
    _, lake = exported
    copy = tmp_path / "lake"
    shutil.copytree(lake, copy)
    for view in ("kernels", "runs"):
        ghost = copy / view / "run_id=ghost"
        shutil.copytree(copy / view / "run_id=ddp_4ranks", ghost)
    with Session.of_lake(copy) as session:
        assert "ghost" not in session.runs()
        runs = session.sql("SELECT DISTINCT run_id FROM kernels").column("run_id").to_pylist()
        assert "ghost" not in runs and "ddp_4ranks" in runs


def _manifest_only(exported, folder, **changes) -> str:
    """A folder holding the lake's manifest with `changes`: all read_manifest reads."""
    manifest = json.loads((exported[1] / "manifest.json").read_text())
    manifest.update(changes)
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return str(folder)


def test_what_is_not_a_lake_of_these_views_is_refused_in_one_line(exported, tmp_path):
    schemas = json.loads((exported[1] / "manifest.json").read_text())["schemas"]
    (tmp_path / "empty").mkdir()
    other = {**schemas, "kernels": [c for c in schemas["kernels"] if c[0] != "launch_ns"]}
    cases = {
        "not a lake (no manifest.json)": str(tmp_path / "empty"),
        "no such folder": str(tmp_path / "missing"),
        "a lake of an older layout (1, this tracewh reads 2)":
            _manifest_only(exported, tmp_path / "old", lake_layout=1),
        "whose views differ from this tracewh's (kernels: launch_ns BIGINT expected)":
            _manifest_only(exported, tmp_path / "other", schemas=other, views_checksum="older"),
        "not a lake manifest this tracewh reads":
            _manifest_only(exported, tmp_path / "bad", runs=[]),
    }
    for said, folder in cases.items():
        result = runner.invoke(app, ["query", "gpu_trace", "--lake", folder])
        assert result.exit_code == 1, said
        assert said in result.stderr and len(result.stderr.strip().splitlines()) == 1, \
            result.stderr
        with pytest.raises(TracewhError, match="tracewh export"):
            read_manifest(folder)
    # a lake another tracewh exported, whose views have these columns, is read
    same = _manifest_only(exported, tmp_path / "same", views_checksum="older")
    assert read_manifest(same)["schemas"] == schemas
