"""GPU op names as the ENUM gpu_op_name (sql/views/_gpu_op_name.sql): made again at every ingest
and view install, always every name the warehouse holds, in text order; the lake keeps strings."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

import tracewh
from tracewh.export import export_lake
from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import ingest_paths, remove_source
from tracewh.warehouse import install_views

MEMCPY_LABEL = {"HtoD": "[CUDA memcpy Host-to-Device]", "DtoH": "[CUDA memcpy Device-to-Host]",
                "DtoD": "[CUDA memcpy Device-to-Device]"}


def enum_values(con) -> list[str]:
    return con.execute("SELECT enum_range(NULL::gpu_op_name)").fetchall()[0][0]


def op_names(truths) -> set[str]:
    """Every name the generators wrote: kernels, memcpy labels, and the memset label (which the
    ENUM always holds)."""
    names = {"[CUDA memset]"}
    for truth in truths:
        names |= {k.name for kernels in truth.kernels.values() for k in kernels}
        names |= {MEMCPY_LABEL[m.kind] for copies in truth.memcpy.values() for m in copies}
    return names


def warehouse(path, out, *runs):
    """A warehouse at `path` with each generated run of `out` ingested, in order."""
    con = tracewh.connect(path)
    for run in runs:
        results = ingest_paths(con, [out / run], run=run)
        assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    return con


@pytest.fixture(scope="module")
def two_jobs(tmp_path_factory):
    out = tmp_path_factory.mktemp("names")
    nsys = generate_job(out / "nsys", JobSpec(world_size=2, iterations=2, layers=2, seed=3))
    kineto = generate_kineto_job(out / "kineto", KinetoJobSpec(world_size=2, iterations=2, seed=4))
    return out, nsys, kineto


def test_the_enum_grows_with_each_ingest_and_holds_every_name(two_jobs, tmp_path):
    out, nsys, kineto = two_jobs
    con = tracewh.connect(tmp_path / "wh.duckdb")
    assert enum_values(con) == ["[CUDA memset]"]  # an empty warehouse
    seen = []
    for run, truth in (("nsys", nsys), ("kineto", kineto)):
        results = ingest_paths(con, [out / run], run=run)
        assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
        seen.append(truth)
        # every name so far, in text (UTF-8 byte = code point) order, as Python sorts str
        assert enum_values(con) == sorted(op_names(seen))
    kineto_only = {k.name for ks in kineto.kernels.values() for k in ks} - \
        {k.name for ks in nsys.kernels.values() for k in ks}
    assert kineto_only, "the two generators should write some different kernel names"
    for view in ("kernels", "gpu_ops"):
        assert con.execute(f"SELECT DISTINCT typeof(name) FROM {view}").fetchall() == [
            (con.execute("SELECT typeof(NULL::gpu_op_name)").fetchall()[0][0],)]
    # each op keeps its own name: per rank and run, the views give what the generators wrote
    got = sorted(con.execute("SELECT run_id, rank, name::VARCHAR FROM kernels").fetchall())
    expected = sorted((run, rank, k.name) for run, truth in (("nsys", nsys), ("kineto", kineto))
                      for rank, ks in truth.kernels.items() for k in ks)
    assert got == expected
    con.close()


def test_text_order_min_max_and_string_functions_as_on_varchar(two_jobs, tmp_path):
    out, nsys, _ = two_jobs
    con = warehouse(tmp_path / "wh.duckdb", out, "nsys")
    names = [r[0] for r in con.execute("SELECT name FROM gpu_ops ORDER BY name").fetchall()]
    assert names == sorted(names) and len(names) == con.execute(
        "SELECT count(*) FROM gpu_ops").fetchall()[0][0]
    texts = [r[0] for r in con.execute("SELECT DISTINCT name::VARCHAR FROM gpu_ops").fetchall()]
    assert con.execute("SELECT min(name), max(name) FROM gpu_ops").fetchall() == [
        (min(texts), max(texts))]
    nccl = sum(1 for ks in nsys.kernels.values() for k in ks if k.name.startswith("nccl"))
    assert nccl > 0
    assert con.execute("SELECT count(*) FROM kernels WHERE name LIKE 'nccl%'").fetchall() == [(nccl,)]
    assert con.execute("SELECT count(*) FROM kernels WHERE name = 'no such kernel'").fetchall() == [(0,)]
    con.close()


def test_removing_sources_keeps_views_answering_and_reinstalling_remakes_the_enum(two_jobs, tmp_path):
    out, nsys, kineto = two_jobs
    con = warehouse(tmp_path / "wh.duckdb", out, "nsys", "kineto")
    before = enum_values(con)
    con.execute("BEGIN")
    for (file_id,) in con.execute("SELECT file_id FROM sources WHERE run_id = 'kineto'").fetchall():
        remove_source(con, file_id)  # the Kineto-only names lose their last ops
    con.execute("COMMIT")
    assert enum_values(con) == before  # a superset stays valid: no view breaks
    con.execute("DELETE FROM store.kernel_names")  # as if the kind patterns had changed
    install_views(con, force=True)  # reclassifies every name, then makes the ENUM again
    # the names of the ops left, exactly: the removed source's own names are gone
    kept = {r[0] for r in con.execute("SELECT DISTINCT name FROM store.kernels").fetchall()}
    kept |= {MEMCPY_LABEL[r[0]] for r in con.execute(
        "SELECT DISTINCT copy_kind FROM store.memcpy").fetchall()}
    assert enum_values(con) == sorted(kept | {"[CUDA memset]"})
    assert con.execute("SELECT count(*) FROM gpu_ops WHERE name IS NULL").fetchall() == [(0,)]
    con.close()


def test_the_lake_stores_names_as_strings(two_jobs, tmp_path):
    out, _, kineto = two_jobs
    con = warehouse(tmp_path / "wh.duckdb", out, "kineto")
    export_lake(con, tmp_path / "lake")
    con.close()
    manifest = json.loads((tmp_path / "lake" / "manifest.json").read_text())
    for view in ("kernels", "gpu_ops"):
        assert dict(manifest["schemas"][view])["name"] == "VARCHAR"
        part = next((tmp_path / "lake" / view).rglob("*.parquet"))
        assert str(pq.read_schema(part).field("name").type) == "string"
    names = pq.read_table(tmp_path / "lake" / "kernels").column("name").to_pylist()
    assert sorted(names) == sorted(k.name for ks in kineto.kernels.values() for k in ks)


def test_op_and_kind_are_fixed_enums_in_text_order(two_jobs, tmp_path):
    out, nsys, _ = two_jobs
    con = warehouse(tmp_path / "wh.duckdb", out, "nsys")
    assert con.execute("SELECT enum_range(NULL::gpu_op_type), enum_range(NULL::gpu_op_kind)"
                       ).fetchall() == [(["kernel", "memcpy", "memset"],
                                         ["comm", "compute", "memcpy", "memset", "other", "sync"])]
    got = con.execute("SELECT op, kind, count(*) FROM gpu_ops GROUP BY ALL ORDER BY op, kind"
                      ).fetchall()
    kinds = {}
    for k in (k for ks in nsys.kernels.values() for k in ks):
        kinds[k.kind] = kinds.get(k.kind, 0) + 1
    memcpy = sum(len(m) for m in nsys.memcpy.values())
    memset = sum(nsys.memset.values())
    expected = sorted([("kernel", kind, n) for kind, n in kinds.items()]
                      + [("memcpy", "memcpy", memcpy)] + ([("memset", "memset", memset)] if memset else []))
    assert got == expected
    assert con.execute("SELECT count(*) FROM kernels WHERE kind = 'comm'").fetchall() == [(kinds["comm"],)]
    con.close()
