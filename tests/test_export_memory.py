"""The Parquet lake export stays within its memory limit plus a constant, read as the CLI's own
peak RSS (issue 40 item 14): the rows DuckDB hands over wait in Arrow for their row group, so
what they take is left out of DuckDB's limit (export.ARROW_SHARE), and DuckDB hands over small
batches. With 122,880-row batches, 64 MB waiting and DuckDB at the whole limit, the 8 M-op
bench's export peaked at the limit + 590 MiB."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

import tracewh
from peak_memory import run_cli_measured
from tracewh.generate.nsys import JobSpec, generate_job

LIMIT_MB = 128
CONSTANT_MB = 250  # the interpreter with DuckDB and pyarrow loaded: near 150 MB alone


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    """Two ranks of about 150,000 kernels each, launched from the host: gpu_op_launches, the
    view that sets the peak (range nesting over every launch), has 300 k rows to stream."""
    folder = tmp_path_factory.mktemp("export_memory")
    traces = folder / "traces"
    generate_job(traces, JobSpec(world_size=2, iterations=6, kernels_per_rank_target=150_000))
    db = folder / "wh.duckdb"
    done, _ = run_cli_measured(["ingest", str(traces), "--db", str(db), "--quiet"])
    assert done.returncode == 0, done.stderr
    return db


def test_the_lake_export_stays_under_its_limit(warehouse, tmp_path):
    lake = tmp_path / "lake"
    done, peak = run_cli_measured(["export", str(lake), "--db", str(warehouse)],
                                  env={"TRACEWH_MEMORY_LIMIT": f"{LIMIT_MB}MB"})
    assert done.returncode == 0, done.stderr
    assert peak < LIMIT_MB + CONSTANT_MB, f"export: {peak:.0f} MB"
    con = tracewh.connect(warehouse, read_only=True)
    try:
        (launches,), = con.execute("SELECT count(*) FROM gpu_op_launches").fetchall()
    finally:
        con.close()
    written = sum(pq.read_metadata(path).num_rows
                  for path in (lake / "gpu_op_launches").rglob("*.parquet"))
    assert written == launches > 250_000
