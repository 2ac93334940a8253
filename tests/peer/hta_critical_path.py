#!/usr/bin/env python3
"""HolisticTraceAnalysis 0.5.0's critical path on the shared alexnet trace.

A script, not a test (pytest does not collect it). It runs HTA in its own venv:

    /work/venvs/hta/bin/python tests/peer/hta_critical_path.py

and writes tests/peer/hta_critical_path_0.5.0.json, which tests/test_critical_path.py compares
with tracewh's `critical_path` (annotation = the range name, instance = HTA's instance_id).
For each case it records: HTA's `critical_path_analysis(rank, annotation, instance_id)`, then
`get_critical_path_breakdown()`: the path's edges (count), the path length (sum of `duration`,
µs) and the time per `bound_by` class (µs); the graph's node and edge counts; the path's first
and last node (time, µs in the file's clock, and event name). HTA's path is its graph's longest
path (networkx dag_longest_path).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import warnings
from pathlib import Path

HTA_VERSION = "0.5.0"
HERE = Path(__file__).resolve().parent
OUT = HERE / f"hta_critical_path_{HTA_VERSION}.json"
TRACE = "kineto/hta/critical_path/alexnet"
ANNOTATION = "[param|pytorch.model.alex_net|0|0|0|measure|forward]"
INSTANCES = [0, 1]


def data_dir() -> Path:
    override = os.environ.get("TRACEWH_SHARED")
    return (Path(override) if override else HERE.parents[2] / "shared") / "data"


def main() -> int:
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    from hta.trace_analysis import TraceAnalysis

    analyzer = TraceAnalysis(trace_dir=str(data_dir() / TRACE))
    rank = next(iter(analyzer.t.traces))
    df = analyzer.t.get_trace(rank)
    sym = analyzer.t.symbol_table.get_sym_table()
    cases = []
    for instance in INSTANCES:
        graph, ok = analyzer.critical_path_analysis(rank=rank, annotation=ANNOTATION,
                                                    instance_id=instance)
        assert ok
        breakdown = graph.get_critical_path_breakdown()
        first, last = (graph.node_list[graph.critical_path_nodes[i]] for i in (0, -1))
        cases.append({
            "rank": int(rank), "annotation": ANNOTATION, "instance": instance,
            "path_us": float(breakdown.duration.sum()),
            "edges": int(len(breakdown)),
            "bound_by_us": {k: float(v) for k, v in
                            breakdown.groupby("bound_by").duration.sum().items()},
            "graph_nodes": int(graph.number_of_nodes()),
            "graph_edges": int(graph.number_of_edges()),
            "first_node": {"ts_us": float(first.ts), "is_start": bool(first.is_start),
                           "name": sym[df.name.loc[first.ev_idx]]},
            "last_node": {"ts_us": float(last.ts), "is_start": bool(last.is_start),
                          "name": sym[df.name.loc[last.ev_idx]]},
        })
    OUT.write_text(json.dumps({"hta_version": HTA_VERSION, "trace": TRACE, "cases": cases},
                              indent=1) + "\n")
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
