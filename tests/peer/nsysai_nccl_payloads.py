#!/usr/bin/env python3
"""nsys-ai 0.3.0's decoding of NCCL's NVTX payloads, on the generated exports that
tests/test_nccl_payloads.py ingests (JobSpec SPEC there: 4 ranks in 2 files, blobs, two
communicators, every collective kind).

A script, not a test (pytest does not collect it). It runs nsys-ai in its own venv:

    python3 -m venv /work/venvs/nsysai && /work/venvs/nsysai/bin/pip install nsys-ai==0.3.0
    TRACEWH_SHARED=../shared /work/venvs/nsysai/bin/python tests/peer/nsysai_nccl_payloads.py

and writes tests/peer/nsysai_nccl_payloads_0.3.0.json. The exports are generated afresh by the
project's generator (stdlib only, imported from src/; the same spec always writes the same rows).
Per file it records:
  events: nsys_ai.nccl_communicator._load_nccl_payload_events(Profile(file)): every NCCL range
      whose blob nsys-ai decodes (its header, then the fields by NVTX_PAYLOAD_SCHEMA_ENTRIES'
      offsets), as [range name, pid, start (export ns), communicator, message size, no. of
      ranks, rank, reduction operation, root]; nsys-ai reads a field from its offset up to the
      next field's (or the payload's end) as one unsigned integer, padding included, and keeps
      it raw (reduction: no NVTX_PAYLOAD_ENUM tables to name it); "Peer rank" it leaves out;
  communicators: analyze_nccl_communicators(Profile(file)): per (communicator, collective) the
      count and total message bytes of the NCCL kernels it attributes (AllReduce, AllGather,
      ReduceScatter, Broadcast, Reduce: its name hints know no AlltoAll, Send or Recv).
And on the real export of ../shared/data with NCCL ranges and payload schemas but no blobs
(nsys-ai/mfu_2gpu_before.sqlite, exported without --include-blobs), what nsys-ai says.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "src"))

NSYS_AI_VERSION = "0.3.0"
OUT = HERE / f"nsysai_nccl_payloads_{NSYS_AI_VERSION}.json"


def main() -> None:
    from nsys_ai import nccl_communicator as nc
    from nsys_ai.profile import Profile

    from tracewh.generate.nsys import JobSpec, generate_job

    # tests/test_nccl_payloads.py's SPEC (the test checks that the recorded repr is its own)
    SPEC = JobSpec(world_size=4, ranks_per_file=2, iterations=2, layers=2, seed=11, nccl_payloads=True)

    out = {"nsys_ai": NSYS_AI_VERSION, "spec": repr(SPEC), "files": {}}
    with tempfile.TemporaryDirectory() as tmp:
        truth = generate_job(Path(tmp), SPEC)
        for path in truth.files:
            prof = Profile(str(path), cache_mode="direct")
            try:
                events, diagnostics = nc._load_nccl_payload_events(prof)
                rows = [[e.nvtx_text, (e.global_tid >> 24) & 0xFFFFFF, e.start_ns, e.communicator_id, e.message_size_bytes, e.num_ranks,
                         e.rank, e.reduction_op, e.root_rank] for e in events]
                comms = [[r["communicator_hex"], r["collective_type"], r["count"], r["total_bytes"]]
                         for r in nc.analyze_nccl_communicators(prof) if not r.get("_diagnostic")]
            finally:
                prof.close()
            out["files"][path.name] = {"events": sorted(rows, key=lambda r: (r[1], r[2], r[0])),
                                       "communicators": sorted(comms), "diagnostics": diagnostics}
    shared = Path(os.environ.get("TRACEWH_SHARED", HERE.parents[2] / "shared"))
    real = shared / "data" / "nsys" / "nsys-ai" / "mfu_2gpu_before.sqlite"
    prof = Profile(str(real), cache_mode="direct")
    try:
        events, diagnostics = nc._load_nccl_payload_events(prof)
        out["real"] = {"file": "nsys/nsys-ai/mfu_2gpu_before.sqlite", "events": len(events),
                       "diagnostics": diagnostics}
    finally:
        prof.close()
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT}: " + ", ".join(f"{name} {len(f['events'])} events" for name, f in out["files"].items()))


if __name__ == "__main__":
    main()
