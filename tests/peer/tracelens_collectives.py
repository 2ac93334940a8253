#!/usr/bin/env python3
"""Reference numbers from TraceLens v1.0.0's multi-rank collective report for tracewh's
collective metrics (issue 37 step 4).

A script, not a test: pytest does not collect it and CI never runs it. It runs
TraceLens.Reporting.generate_multi_rank_collective_report_pytorch.generate_collective_report (what
TraceLens_generate_multi_rank_collective_report_pytorch runs) on every multi-rank trace set of
../shared/data it matches across ranks, and records its sheets in
tests/peer/tracelens_collectives_1.0.0.json, which tests/test_metrics_peer_tracelens_collectives.py
compares with straggler_ops, straggler and collective_bandwidth:

  dlrm       kineto/param/dlrm_kineto, the 8 ranks of one node (--trace_glob with the rank from
             'worker<N>'): all_to_all and all_reduce without sizes (2023 traces record none)
  generated  `tracewh generate kineto --ranks 4 --gpus-per-node 2 --iterations 2` (2 nodes;
             PyTorch 2.2+ collective args, so sizes and bandwidths), written by the project's
             own Python ($TRACEWH_PYTHON, default python3, with the repository's src/ on the path),
             each file linked as rank<N>_trace.json from its distributedInfo.rank
  moe_dropless  `tracewh generate parallel --job moe_dropless` (4 ranks, 3 steps): 48
             all_to_allv with uneven "In split size" / "Out split size", as PyTorch 2.2+ writes
             them; its nccl_all2allv sheet and the nccl_all2allv_heatmap (all2allv_heatmap=True)

The other multi-rank sets match nothing across ranks in TraceLens (kineto/hta/trace_filter: 2
sampled ranks of 128, "No implicit sync collectives found") or stop it (kineto/generated: gloo
only, KeyError 'collective_id'); kineto/generated's AllToAll carries no split sizes, and no
shared trace records all_to_allv, so the nccl_all2allv sheets are empty but on moe_dropless.

Kept per set: collectives (nccl_implicit_sync: id, name, group, size, comm_latency, skews,
earliest arrival rank, bandwidths, each rank's ts / dur / wait_time; times in µs as TraceLens
writes them), straggler (straggler_summary per rank), and where there are all_to_allv:
all2allv_collectives (nccl_all2allv: id, group, total data communicated (MB), total nelems,
size_imbalance, each rank's In msg nelems and In split size) and all2allv_heatmap (src_rank,
dst_rank, total_sent_MB, avg_sent_MB, count).

Runs in TraceLens' own venv (make tracelens-numbers builds .peers/tracelens):
    TRACEWH_PYTHON=.venv/bin/python .peers/tracelens/bin/python tests/peer/tracelens_collectives.py
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import tempfile
from pathlib import Path

VERSION = "1.0.0"  # tag v1.0.0 = commit 171dd74721ca1ec45709e5805b68ae1f65e27811
HERE = Path(__file__).resolve().parent
OUT = HERE / f"tracelens_collectives_{VERSION}.json"
GENERATED = ["--ranks", "4", "--gpus-per-node", "2", "--iterations", "2"]
MOE_DROPLESS = ["parallel", "--job", "moe_dropless"]


def data_dir() -> Path:
    shared = os.environ.get("TRACEWH_SHARED")
    return (Path(shared) if shared else HERE.parents[2] / "shared") / "data"


def plain(value):
    """A CSV cell as JSON: NaN -> None, numpy scalars -> Python."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def report(**where) -> dict:
    from TraceLens.Reporting.generate_multi_rank_collective_report_pytorch import (
        generate_collective_report)

    sheets = generate_collective_report(**where, all2allv_heatmap=True)
    ranks = range(where["world_size"])
    collectives = []
    for row in sheets["nccl_implicit_sync"].to_dict("records"):
        kept = {k: plain(row.get(k)) for k in (
            "collective_id", "Collective name", "Process Group Name", "Group size", "dtype",
            "Full msg size (MB)", "comm_latency", "skew in start time", "earliest arrival rank",
            "avg_wait_time", "skew in end time", "algo bw (GB/s)", "bus bw (GB/s)")}
        for part in ("ts", "dur", "wait_time"):
            kept[part] = {str(r): plain(row.get(f"rank_{r}_{part}")) for r in ranks
                          if plain(row.get(f"rank_{r}_{part}")) is not None}
        collectives.append(kept)
    straggler = [{k: plain(v) for k, v in row.items()}
                 for row in sheets["straggler_summary"].to_dict("records")]
    found = dict(collectives=collectives, straggler=straggler,
                 all2allv=sorted(k for k in sheets if "all2allv" in k))
    if "nccl_all2allv" in sheets:
        found["all2allv_collectives"] = [
            {**{k: plain(row[k]) for k in ("collective_id", "Process Group Name", "Group size",
                                           "dtype", "total data communicated (MB)",
                                           "total nelems communicated", "size_imbalance")},
             **{part: {str(r): plain(row[f"rank_{r}_{part}"]) for r in ranks}
                for part in ("In msg nelems", "In split size", "Out split size", "ts")}}
            for row in sheets["nccl_all2allv"].to_dict("records")]
        found["all2allv_heatmap"] = [{k: plain(v) for k, v in row.items()}
                                     for row in sheets["nccl_all2allv_heatmap"].to_dict("records")]
    return found


def generated(folder: Path, args=("kineto", *GENERATED)) -> Path:
    env = {**os.environ, "PYTHONPATH": str(HERE.parents[1] / "src")}
    subprocess.run([os.environ.get("TRACEWH_PYTHON", "python3"), "-m", "tracewh.cli", "generate",
                    args[0], str(folder / "job"), *args[1:]], env=env, check=True)
    ranks = folder / "ranks"
    ranks.mkdir()
    for path in (folder / "job").glob("*.json"):
        rank = json.loads(path.read_text())["distributedInfo"]["rank"]
        (ranks / f"rank{rank}_trace.json").symlink_to(path)
    return ranks


def main() -> None:
    data = data_dir()
    found = {"tracelens": VERSION, "generated_args": GENERATED, "moe_dropless_args": MOE_DROPLESS}
    found["dlrm"] = report(
        trace_glob=str(data / "kineto" / "param" / "dlrm_kineto" / "worker*.json"),
        world_size=8, rank_regex=r"worker(?P<rank>\d+)")
    with tempfile.TemporaryDirectory() as tmp:
        found["generated"] = report(trace_dir=str(generated(Path(tmp))), world_size=4)
    with tempfile.TemporaryDirectory() as tmp:
        found["moe_dropless"] = report(trace_dir=str(generated(Path(tmp), MOE_DROPLESS)),
                                       world_size=4)
    OUT.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
