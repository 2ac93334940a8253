"""Device events of categories no stored table models are not dropped in silence: the source's
warnings count them per category."""

from __future__ import annotations

import json

import tracewh
from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job
from tracewh.ingest import ingest_paths

PREFIX = "device events of categories tracewh does not model, not stored: "


def warnings_after_ingest(db_path, paths) -> list[str]:
    con = tracewh.connect(db_path)
    results = ingest_paths(con, paths, run="r")
    assert [r.status for r in results] == ["ingested"], results[0].message
    warnings = con.execute("SELECT warnings FROM sources").fetchone()[0] or ""
    con.close()
    return [w for w in warnings.split("; ") if w.startswith(PREFIX)]


def test_cuda_sync_events_are_stored_not_counted(shared_data, db_path):
    # HTA's alexnet trace: 41 `cuda_sync` events on the GPU's pid (0), stored in gpu_syncs
    path = shared_data / "kineto/hta/critical_path/alexnet"
    assert warnings_after_ingest(db_path, [path]) == []


def test_categories_the_generator_does_not_write_are_counted(tmp_path, db_path):
    generate_kineto_job(tmp_path, KinetoJobSpec(world_size=1, iterations=1, layers=1))
    path = next(tmp_path.glob("*.json"))
    trace = json.loads(path.read_text())
    kernel = next(e for e in trace["traceEvents"] if e.get("cat") == "kernel")
    # as an MTIA and a CUDA-profiler-range capture write them: on the device's pid and stream
    extra = [{**kernel, "cat": "mtia_ccp_events", "name": f"ccp {i}"} for i in range(3)]
    extra.append({**kernel, "cat": "cuda_profiler_range", "name": "range"})
    trace["traceEvents"] += extra
    path.write_text(json.dumps(trace))
    assert warnings_after_ingest(db_path, [path]) == [
        PREFIX + "cuda_profiler_range 1, mtia_ccp_events 3"]
