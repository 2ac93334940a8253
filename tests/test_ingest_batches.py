"""Small nsys exports are written in batches (one transaction and one run of the mapping SQL for
several files): the warehouse must hold exactly what writing them one by one gives, and every
promise of ingest holds inside a batch (a bad file fails alone, ranks clash, duplicates, warnings,
a second ingest adds nothing). Through the real CLI, on generated traces and the real exports."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

import tracewh.ingest as ingest_module
from tracewh.check import content_checksums
from tracewh.cli import app
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import nsys

from test_ingest_rules import table_checksums

runner = CliRunner()


def ingest(db: Path, *args: str):
    return runner.invoke(app, ["ingest", "--db", str(db), *args])


def errors(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("Error:")]


@pytest.fixture
def batches(monkeypatch) -> list[int]:
    """The sizes of the batches written (a list filled as ingest runs)."""
    sizes, write = [], ingest_module._write_batch

    def spy(con, batch, *args):
        sizes.append(len(batch))
        return write(con, batch, *args)

    monkeypatch.setattr(ingest_module, "_write_batch", spy)
    return sizes


@pytest.fixture(scope="module")
def jobs(tmp_path_factory) -> Path:
    """Two runs of small exports covering every mapped table: one file per rank with memory
    events, OS runtime calls, syncs and data-loader ranges; two ranks per file."""
    root = tmp_path_factory.mktemp("jobs")
    generate_job(root / "job_a", JobSpec(world_size=4, iterations=3, layers=1, seed=5,
                                         memory_usage=True, checkpoint_every=2, sync_stalls=True,
                                         data_loader_ns=200_000))
    generate_job(root / "job_b", JobSpec(world_size=4, ranks_per_file=2, iterations=2, layers=1,
                                         seed=6))
    return root


def ingested(db: Path, *args: str) -> dict:
    result = ingest(db, "--quiet", *args)
    assert result.exit_code == 0, result.stderr
    return content_checksums(db)


def test_batched_equals_file_by_file_and_streamed(jobs, tmp_path, monkeypatch, batches):
    """Batched, one file per transaction, and every file streamed as a big one: the same rows."""
    batched = ingested(tmp_path / "batched.duckdb", str(jobs))
    assert max(batches) == 6 and batches == [6], batches  # 4 + 2 files, one batch
    monkeypatch.setattr(ingest_module, "BATCH_FILES", 1)
    assert ingested(tmp_path / "one_by_one.duckdb", str(jobs)) == batched
    assert batches[1:] == [1] * 6
    monkeypatch.setattr(nsys, "SMALL_FILE_BYTES", 0)  # the big-file path: temp tables, alone
    assert ingested(tmp_path / "streamed.duckdb", str(jobs)) == batched
    assert len(batches) == 7
    counts = {table: rows for table, (rows, _) in batched.items()}
    for table in ("kernels", "memcpy", "memset", "cuda_api", "nvtx_ranges", "nccl_ops",
                  "gpu_syncs", "os_calls", "memory_events", "devices", "ranks"):
        assert counts[table] > 0, table  # every mapped table was compared on real rows
    assert counts["sources"] == 6 and counts["ranks"] == 8 and counts["runs"] == 2


def test_real_exports_batched_equal_streamed(tmp_path, monkeypatch, shared_data, batches):
    """The real exports of ../shared/data (2021 to 2024 exporters, 1-2 GPUs), all small."""
    folder = shared_data / "nsys"
    batched = ingest(tmp_path / "batched.duckdb", "--quiet", str(folder))
    assert max(batches) > 1
    monkeypatch.setattr(nsys, "SMALL_FILE_BYTES", 0)
    streamed = ingest(tmp_path / "streamed.duckdb", "--quiet", str(folder))
    assert (batched.exit_code, errors(batched)) == (streamed.exit_code, errors(streamed))
    assert content_checksums(tmp_path / "batched.duckdb") == \
        content_checksums(tmp_path / "streamed.duckdb")


def _copy(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, target)
    return target


def test_file_failing_inside_the_batch_fails_alone(jobs, tmp_path, batches):
    """A file that decodes but breaks the batch's transaction (a kernel time overflowing BIGINT
    once made UTC): the batch is rolled back and written again file by file; the good files are
    stored, the bad one gets its line, and the warehouse holds exactly the good files."""
    folder = tmp_path / "run"
    good = [_copy(jobs / "job_a" / f"rank{n}.sqlite", folder / f"rank{n}.sqlite") for n in (0, 3)]
    bad = _copy(jobs / "job_a" / "rank1.sqlite", folder / "rank1.sqlite")
    con = sqlite3.connect(bad)
    con.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 9223372036854000000 "
                "WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL)")
    con.commit()
    con.close()
    result = ingest(tmp_path / "w.duckdb", "--quiet", "--run", "r", str(folder))
    assert result.exit_code == 1
    assert batches[0] == 3 and batches[1:] == [1, 1, 1], batches
    (line,) = errors(result)
    assert line.startswith(f"Error: {bad}: could not be loaded: ") and "verflow" in line, line
    reference = ingested(tmp_path / "reference.duckdb", "--run", "r", *map(str, good))
    assert content_checksums(tmp_path / "w.duckdb") == reference


def test_rank_clash_inside_a_batch(jobs, tmp_path, batches):
    """Two files of a batch claim one rank: the second fails naming both, the files around it
    are stored, and it leaves nothing behind."""
    first = _copy(jobs / "job_a" / "rank0.sqlite", tmp_path / "run" / "a_dup.sqlite")
    second = _copy(jobs / "job_a" / "rank1.sqlite", tmp_path / "run" / "b_dup.sqlite")
    other = _copy(jobs / "job_a" / "rank2.sqlite", tmp_path / "run" / "c_rank2.sqlite")
    args = ["--run", "r", "--rank-map", "*_dup.sqlite=3"]
    result = ingest(tmp_path / "w.duckdb", "--quiet", *args, str(tmp_path / "run"))
    assert result.exit_code == 1 and batches == [3]
    (line,) = errors(result)
    assert line.startswith(f"Error: {second}: rank 3 (from rank-map) is already taken") \
        and str(first) in line, line
    reference = ingested(tmp_path / "reference.duckdb", *args, str(first), str(other))
    assert content_checksums(tmp_path / "w.duckdb") == reference


def test_duplicates_warnings_and_a_second_ingest(jobs, tmp_path, batches):
    """The same content twice in one command is stored once and the copy reported as already
    ingested; a file's warning is printed for it (and stored for it alone); ingesting again adds
    nothing."""
    folder = tmp_path / "run"
    original = _copy(jobs / "job_a" / "rank0.sqlite", folder / "rank0.sqlite")
    copy = _copy(original, folder / "rank0_copy.sqlite")
    anchorless = _copy(jobs / "job_a" / "rank1.sqlite", folder / "rank1.sqlite")
    con = sqlite3.connect(anchorless)
    con.execute("DROP TABLE TARGET_INFO_SESSION_START_TIME")
    con.commit()
    con.close()
    db = tmp_path / "w.duckdb"
    result = ingest(db, "--run", "r", str(folder))
    assert result.exit_code == 0, result.stderr
    assert batches == [1, 2]  # the copy starts the next batch, where it is a known file
    assert f"skipped {copy}: already ingested (run 'r', file_id 1)" in result.stderr
    assert f"warning: {anchorless}: no UTC anchor" in result.stderr
    with duckdb.connect(str(db), read_only=True) as wh:
        warned = wh.execute("SELECT path FROM store.sources WHERE warnings LIKE '%UTC anchor%'"
                            ).fetchall()
        assert warned == [(str(anchorless),)]
    before = table_checksums(db)
    again = ingest(db, "--run", "r", str(folder))
    assert again.exit_code == 0 and again.stderr.count("already ingested") == 3
    assert table_checksums(db) == before
