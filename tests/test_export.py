"""The Parquet lake: every view, hive-partitioned, readable with just the path, incremental."""

from __future__ import annotations

import json
import shutil

import duckdb
import polars as pl
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.export import _run_forms, export_lake, lake_views
from tracewh.resources import sql_dir

runner = CliRunner()
SAMPLE = sql_dir().parent / "sample_db" / "traces"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    db = tmp_path_factory.mktemp("exp") / "wh.duckdb"
    assert runner.invoke(app, ["ingest", "--quiet", "--db", str(db), str(SAMPLE)]).exit_code == 0
    return db


def view_counts(db, view):
    con = tracewh.connect(db, read_only=True)
    rows = dict(con.execute(f"SELECT run_id, count(*) FROM {view} GROUP BY run_id").fetchall())
    con.close()
    return rows


def test_lake_has_every_view_and_readers_agree(warehouse, tmp_path):
    lake = tmp_path / "lake"
    result = runner.invoke(app, ["export", str(lake), "--db", str(warehouse)])
    assert result.exit_code == 0, result.stderr
    con = tracewh.connect(warehouse, read_only=True)
    views = lake_views(con)
    manifest = json.loads((lake / "manifest.json").read_text())
    assert set(manifest["schemas"]) == set(views) and manifest["tracewh_version"] == tracewh.__version__
    assert "gpu_kernel_summary" in manifest["metrics_lock"]
    for view in ["kernels", "nccl_ops", "iterations", "runs", "gpu_ops"]:
        expected = view_counts(warehouse, view)
        assert {run: info["rows"][view] for run, info in manifest["runs"].items()
                if info["rows"][view]} == expected
        by_duckdb = dict(duckdb.sql(f"SELECT run_id, count(*) FROM read_parquet('{lake}/{view}/**/*.parquet') "
                                    "GROUP BY run_id").fetchall())
        by_polars = pl.read_parquet(lake / view).group_by("run_id").len()
        by_arrow = pq.read_table(lake / view).group_by("run_id").aggregate([([], "count_all")])
        assert by_duckdb == expected
        assert dict(by_polars.iter_rows()) == expected
        assert dict(zip(by_arrow["run_id"].to_pylist(), by_arrow["count_all"].to_pylist())) == expected
    # column types are the views' own: nanoseconds stay 64-bit integers
    schema = pq.read_table(lake / "kernels").schema
    assert str(schema.field("start_ns").type) == "int64" and str(schema.field("dur_ns").type) == "int64"
    exact = duckdb.sql(f"SELECT sum(start_ns), sum(dur_ns) FROM read_parquet('{lake}/kernels/**/*.parquet')").fetchall()
    assert exact == con.execute("SELECT sum(start_ns), sum(dur_ns) FROM kernels").fetchall()


def test_export_is_incremental(warehouse, tmp_path):
    db = tmp_path / "copy.duckdb"
    shutil.copy(warehouse, db)
    lake = tmp_path / "lake"
    con = tracewh.connect(db, read_only=True)
    first = export_lake(con, lake)
    con.close()
    assert first.exported == ["ddp_4ranks", "fsdp_4ranks_kineto"]
    stamp = {p: p.stat().st_mtime_ns for p in lake.rglob("*.parquet")}
    con = tracewh.connect(db, read_only=True)
    again = export_lake(con, lake)
    con.close()
    assert again.exported == [] and again.skipped == ["ddp_4ranks", "fsdp_4ranks_kineto"]
    assert {p: p.stat().st_mtime_ns for p in lake.rglob("*.parquet")} == stamp
    # a run removed from the warehouse leaves the lake too; the other run is untouched
    assert runner.invoke(app, ["remove", "--db", str(db), "--run", "ddp_4ranks"]).exit_code == 0
    con = tracewh.connect(db, read_only=True)
    third = export_lake(con, lake)
    con.close()
    assert third.removed == ["ddp_4ranks"] and third.skipped == ["fsdp_4ranks_kineto"]
    runs = duckdb.sql(f"SELECT DISTINCT run_id FROM read_parquet('{lake}/kernels/**/*.parquet')").fetchall()
    assert runs == [("fsdp_4ranks_kineto",)]
    assert all(p.stat().st_mtime_ns == stamp[p] for p in lake.rglob("*.parquet") if "fsdp" in str(p))


def test_a_view_without_rows_still_has_its_columns(warehouse, tmp_path):
    lake = tmp_path / "lake"
    con = tracewh.connect(warehouse, read_only=True)
    export_lake(con, lake)
    assert con.execute("SELECT count(*) FROM cpu_ops WHERE run_id = 'ddp_4ranks'").fetchall() == [(0,)]
    columns = duckdb.sql(f"DESCRIBE SELECT * FROM read_parquet('{lake}/memset/**/*.parquet')").fetchall()
    assert "start_ns" in [c[0] for c in columns]


def test_chrome_trace_has_every_rank_aligned_by_clock_offsets(tmp_path):
    from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job

    skew = {1: 3_000_000, 2: -2_000_000}  # rank 2 on another host, rank 1 too
    truth = generate_kineto_job(tmp_path / "t", KinetoJobSpec(world_size=4, iterations=3, layers=2,
                                                              gpus_per_node=1, clock_skew_ns=skew))
    db = tmp_path / "wh.duckdb"
    assert runner.invoke(app, ["ingest", "--quiet", "--db", str(db), str(tmp_path / "t")]).exit_code == 0
    out = tmp_path / "job.trace.json"
    result = runner.invoke(app, ["export", str(out), "--format", "chrome-trace", "--run", "t", "--db", str(db)])
    assert result.exit_code == 0, result.stderr
    events = json.loads(out.read_text())["traceEvents"]
    kernels = {}
    for e in events:
        if e["ph"] == "X" and e["cat"] in ("compute", "comm", "other", "sync"):
            kernels[e["pid"]] = kernels.get(e["pid"], 0) + 1
    assert kernels == {r: len(truth.kernels[r]) for r in range(4)}
    names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {r: f"rank {r} (node{r})" for r in range(4)}
    # the same AllReduce ends within microseconds on every rank once offsets are applied; the
    # skews were milliseconds
    ends = {}
    for e in events:
        if e["ph"] == "X" and e["cat"] == "nccl" and e["args"]["collective"] == "AllReduce":
            ends.setdefault(e["args"]["op_key"], []).append(e["ts"] + e["dur"])
    assert ends and all(len(v) == 4 and max(v) - min(v) < 10.0 for v in ends.values())


def test_run_names_with_slashes_survive_the_partition_path(tmp_path):
    db = tmp_path / "wh.duckdb"
    src = SAMPLE / "fsdp_4ranks_kineto"
    assert runner.invoke(app, ["ingest", "--quiet", "--db", str(db), "--run", "param/dlrm kineto",
                               str(src)]).exit_code == 0
    lake = tmp_path / "lake"
    con = tracewh.connect(db, read_only=True)
    export_lake(con, lake)
    con.close()
    assert (lake / "kernels" / "run_id=param%2Fdlrm%20kineto" / "part_0.parquet").exists()
    for runs in (pl.read_parquet(lake / "kernels")["run_id"].unique().to_list(),
                 pq.read_table(lake / "kernels")["run_id"].unique().to_pylist(),
                 [r for (r,) in duckdb.sql(f"SELECT DISTINCT run_id FROM read_parquet('{lake}/kernels/**/*.parquet')").fetchall()]):
        assert [str(r) for r in runs] == ["param/dlrm kineto"]


def test_a_run_is_one_file_per_view_a_row_group_per_rank(tmp_path):
    """Issue 40, item 14: a folder per rank made a 1,024-rank run 11,000 files. One file per
    view and run; a view of ranks' events in row groups of one rank each (min = max in the
    row group's statistics), so a reader filtering on rank skips the rest."""
    lake = tmp_path / "lake"
    con = tracewh.connect(SAMPLE.parent / "sample.duckdb", read_only=True)
    export_lake(con, lake)
    for view in ("kernels", "cpu_ops", "nvtx_ranges"):
        counts = con.execute(f"SELECT run_id, rank, count(*) FROM {view} GROUP BY ALL "
                             "ORDER BY ALL").fetchall()
        assert counts, view
        for run in {run for run, _, _ in counts}:
            files = list((lake / view).glob(f"run_id={run}/**/*.parquet"))
            assert [f.relative_to(lake / view).as_posix() for f in files] == \
                [f"run_id={run}/part_0.parquet"]
            meta = pq.ParquetFile(files[0]).metadata
            column = meta.schema.names.index("rank")
            groups = {}
            for g in range(meta.num_row_groups):
                stats = meta.row_group(g).column(column).statistics
                assert stats.has_min_max and stats.min == stats.max
                groups[stats.min] = groups.get(stats.min, 0) + meta.row_group(g).num_rows
            assert sorted((run, rank, n) for rank, n in groups.items()) == \
                [row for row in counts if row[0] == run]
    con.close()
    manifest = json.loads((lake / "manifest.json").read_text())
    assert manifest["layout"]["kernels"] == ["run_id"] and manifest["lake_layout"] == 2
    assert manifest["row_groups_by"]["kernels"] == ["rank"] and "runs" not in manifest["row_groups_by"]


def test_a_lake_of_the_older_layout_is_written_again_whole(tmp_path):
    """A lake with a folder per rank (layout 1) beside files of layout 2 would read as two
    partitionings: the export rewrites every run, and no rank folder is left."""
    lake = tmp_path / "lake"
    con = tracewh.connect(SAMPLE.parent / "sample.duckdb", read_only=True)
    export_lake(con, lake)
    manifest = json.loads((lake / "manifest.json").read_text())
    del manifest["lake_layout"]
    (lake / "manifest.json").write_text(json.dumps(manifest))
    old = lake / "kernels" / "run_id=ddp_4ranks" / "rank=0" / "part_0.parquet"
    old.parent.mkdir()
    (lake / "kernels" / "run_id=ddp_4ranks" / "part_0.parquet").rename(old)
    again = export_lake(con, lake)
    con.close()
    assert again.exported == ["ddp_4ranks", "fsdp_4ranks_kineto"]
    assert not list(lake.glob("*/*/rank=*"))
    assert pl.read_parquet(lake / "kernels").height == \
        sum(json.loads((lake / "manifest.json").read_text())["runs"][r]["rows"]["kernels"]
            for r in ("ddp_4ranks", "fsdp_4ranks_kineto"))


def test_one_run_exported_through_a_run_form_holds_the_views_rows(warehouse, tmp_path):
    """gpu_op_launches, perf_iteration_flops, parallel_groups, run_config and runs have a form
    taking the runs (their run filter does not reach their sweeps and groups): a run's export
    through it holds what the whole view holds for that run, row for row."""
    rows = "SELECT count(*), sum(hash(CAST(t AS VARCHAR))) FROM (SELECT * EXCLUDE (run_id) FROM {})"
    con = tracewh.connect(warehouse, read_only=True)
    forms = _run_forms(con, lake_views(con))
    assert {"gpu_op_launches", "perf_iteration_flops", "parallel_groups", "run_config",
            "runs"} <= forms
    seen = dict.fromkeys(forms | {"gpu_ops"}, 0)
    for run in ["ddp_4ranks", "fsdp_4ranks_kineto"]:
        export_lake(con, tmp_path / run, runs=[run])
        for view in seen:
            want = con.execute(rows.format(f"{view} WHERE run_id = ?") + " t", [run]).fetchall()
            got = duckdb.sql(rows.format(f"read_parquet('{tmp_path / run}/{view}/**/*.parquet')")
                             + " t").fetchall()
            assert got == want, (run, view)
            if view in forms:  # the form alone: that run's rows, no other run's
                assert con.execute(rows.format(f"{view}_of(?)") + " t", [[run]]).fetchall() \
                    == want, (run, view)
            seen[view] += want[0][0]
        links = "SELECT count(cpu_op_id) + count(range_id) FROM "
        linked = con.execute(links + "gpu_op_launches_of(?)", [[run]]).fetchall()
        assert linked[0][0] > 0
        assert linked == con.execute(links + "gpu_op_launches WHERE run_id = ?", [run]).fetchall()
    con.close()
    assert all(seen.values()), seen  # each compared on rows, not on two empty sets
