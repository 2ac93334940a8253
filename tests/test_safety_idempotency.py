"""Idempotency and replacement on generated traces: the same files twice change nothing, the same
files in any order give the same content, --replace swaps a changed file's rows exactly, and
`tracewh remove` takes away exactly one source's or one run's rows.

(test_ingest_rules.py covers the same on a real export when ../shared/data is present;
test_cli.py covers remove --run on the shipped sample.)
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.check import content_checksums
from tracewh.cli import app
from tracewh.generate.nsys import JobSpec, generate_job

from test_ingest_rules import table_checksums

runner = CliRunner()


def ingest(db: Path, *args: str):
    return runner.invoke(app, ["ingest", "--db", str(db), "--quiet", *args])


def remove(db: Path, *args: str):
    return runner.invoke(app, ["remove", "--db", str(db), *args])


def check_ok(db: Path) -> None:
    result = runner.invoke(app, ["check", "--db", str(db)])
    assert result.exit_code == 0, result.stderr


@pytest.fixture(scope="module")
def originals(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("orig")
    generate_job(root / "job_a", JobSpec(world_size=3, iterations=2, layers=1, seed=11))
    generate_job(root / "job_b", JobSpec(world_size=4, ranks_per_file=2, iterations=2, layers=1,
                                         seed=12))
    return root


@pytest.fixture(scope="module")
def traces(originals) -> Path:
    """The jobs, shared by the tests that do not change them."""
    return originals


@pytest.fixture
def private_traces(originals, tmp_path) -> Path:
    """A private copy of the jobs, free to change."""
    root = tmp_path / "traces"
    shutil.copytree(originals, root)
    return root


def build(db: Path, *paths: Path) -> Path:
    """A warehouse holding exactly `paths` (files of job_a / job_b, runs named so)."""
    for path in paths:
        result = ingest(db, "--run", path.parent.name, str(path))
        assert result.exit_code == 0, result.stderr
    return db


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """build(), done once per set of files in this module; each call returns a fresh copy."""
    cache: dict[tuple, Path] = {}
    folder = tmp_path_factory.mktemp("built")

    def warehouse_of(into: Path, *paths: Path) -> Path:
        key = tuple(paths)
        if key not in cache:
            cache[key] = build(folder / f"w{len(cache)}.duckdb", *paths)
        shutil.copy(cache[key], into)
        return into
    return warehouse_of


def files(traces: Path) -> list[Path]:
    return sorted(traces.rglob("*.sqlite"))


def test_same_files_twice_change_nothing(traces, tmp_path):
    db = tmp_path / "wh.duckdb"
    assert ingest(db, str(traces)).exit_code == 0
    before = table_checksums(db)
    again = ingest(db, str(traces))
    assert again.exit_code == 0
    assert table_checksums(db) == before  # byte for byte, file ids included
    result = runner.invoke(app, ["ingest", "--db", str(db), str(traces)])
    assert "0 file(s)" in result.stderr and "5 already present" in result.stderr
    check_ok(db)


def test_same_files_in_any_order_give_the_same_content(traces, tmp_path):
    """For files whose ranks come from the files themselves (here the file names). Ranks by
    process order (job_b) follow the order files are ingested in, by design (DESIGN 4)."""
    together = tmp_path / "together.duckdb"
    assert ingest(together, str(traces / "job_a")).exit_code == 0
    one_by_one = build(tmp_path / "reversed.duckdb", *reversed(files(traces / "job_a")))
    assert content_checksums(one_by_one) == content_checksums(together)


def test_changed_file_needs_replace_then_swaps_exactly(private_traces, tmp_path):
    traces = private_traces
    db = tmp_path / "wh.duckdb"
    assert ingest(db, str(traces)).exit_code == 0
    before = table_checksums(db)
    changed = traces / "job_a" / "rank1.sqlite"
    other = tmp_path / "other"
    generate_job(other, JobSpec(world_size=3, iterations=3, layers=2, seed=99))
    shutil.copy(other / "rank1.sqlite", changed)

    refused = ingest(db, str(traces))
    assert refused.exit_code == 1
    lines = [line for line in refused.stderr.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1 and str(changed) in lines[0] and "--replace" in lines[0], lines
    assert table_checksums(db) == before

    replaced = runner.invoke(app, ["ingest", "--db", str(db), "--replace", str(changed)])
    assert replaced.exit_code == 0, replaced.stderr
    assert "ingested 1 file(s)" in replaced.stderr
    fresh = tmp_path / "fresh.duckdb"
    assert ingest(fresh, str(traces)).exit_code == 0
    assert content_checksums(db) == content_checksums(fresh)  # no row of the old content left
    check_ok(db)


def test_replace_of_an_unchanged_file_gives_the_same_content(traces, tmp_path):
    db = tmp_path / "wh.duckdb"
    assert ingest(db, str(traces)).exit_code == 0
    before = content_checksums(db)
    assert ingest(db, "--replace", str(traces / "job_b" / "node1.sqlite")).exit_code == 0
    assert content_checksums(db) == before
    check_ok(db)


def test_replace_keeps_process_order_ranks(traces, tmp_path):
    db = tmp_path / "wh.duckdb"
    assert ingest(db, str(traces)).exit_code == 0
    before = content_checksums(db)
    assert ingest(db, "--replace", str(traces)).exit_code == 0  # every file, unchanged
    assert content_checksums(db) == before


@pytest.mark.parametrize("how", ["path", "file_id"])
def test_remove_source_removes_exactly_that_source(traces, tmp_path, built, how):
    everything = files(traces)
    gone = traces / "job_a" / "rank1.sqlite"
    db = built(tmp_path / "wh.duckdb", *everything)
    without = built(tmp_path / "without.duckdb", *(p for p in everything if p != gone))
    if how == "path":
        result = remove(db, "--source", str(gone))
    else:
        con = tracewh.connect(db, read_only=True)
        file_id = con.execute("SELECT file_id FROM sources WHERE path = ?", [str(gone)]
                              ).fetchall()[0][0]
        con.close()
        result = remove(db, "--source", str(file_id))
    assert result.exit_code == 0, result.stderr
    assert "removed 1 source(s)" in result.stderr
    assert content_checksums(db) == content_checksums(without)
    check_ok(db)
    assert ingest(db, "--run", "job_a", str(gone)).exit_code == 0  # and it comes back whole
    assert content_checksums(db) == content_checksums(built(tmp_path / "all.duckdb", *everything))


def test_remove_run_removes_exactly_that_run(traces, tmp_path, built):
    everything = files(traces)
    db = built(tmp_path / "wh.duckdb", *everything)
    only_a = built(tmp_path / "only_a.duckdb", *(p for p in everything if p.parent.name == "job_a"))
    result = remove(db, "--run", "job_b")
    assert result.exit_code == 0, result.stderr
    assert "removed 2 source(s)" in result.stderr
    assert content_checksums(db) == content_checksums(only_a)
    check_ok(db)


@pytest.mark.parametrize("args, message", [
    (["--source", "/no/such.sqlite"], "no source '/no/such.sqlite'"),
    (["--source", "999"], "no source '999'"),
    (["--run", "nope"], "no run 'nope'"),
    (["--run", "job_a", "--run", "nope"], "no run 'nope'"),  # all or nothing
])
def test_remove_of_something_absent_changes_nothing(traces, tmp_path, built, args, message):
    db = built(tmp_path / "wh.duckdb", *files(traces))
    before = table_checksums(db)
    result = remove(db, *args)
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert table_checksums(db) == before
