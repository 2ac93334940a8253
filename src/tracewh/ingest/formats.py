"""The formats ingest reads, by the name discovery gives them: each says how a file is decoded,
written and, for small nsys exports, batched. The pipeline (tracewh.ingest) names no format;
a new one is a module of its own and an entry here."""

from __future__ import annotations

from pathlib import Path

from . import kineto, logs, nsys, nsys_report, series
from .discover import KINETO_JSON, NSYS_REPORT, NSYS_SQLITE, SERIES_CSV, TRAINING_LOG, Candidate
from .source import Batch, Format, SourceFacts

NSYS_BATCH = Batch(fits=lambda info: info.staged is not None, stage=nsys.stage_batch,
                   ranks=nsys.rank_rows, write=nsys.load, facts=nsys.facts)


def _nsys_load(con, candidate: Candidate, source_path: Path, info, file_id: int, rules, alone,
               options) -> SourceFacts:
    """An export too big for a batch, mapped in temp tables of `con` as file_key 0."""
    ranks, clashes = nsys.rank_rows(con, [(0, source_path, info, candidate.run_id)], rules)
    if clashes:
        raise clashes[0]
    nsys.load(con, [(0, *rank, candidate.run_id, file_id) for rank in ranks[0]])
    return nsys.facts(info)


_NSYS = dict(prepare=lambda cur, path, candidate, options: nsys.prepare(cur, path),
             load=_nsys_load, batch=NSYS_BATCH)

FORMATS: dict[str, Format] = {
    NSYS_SQLITE: Format(**_NSYS),
    NSYS_REPORT: Format(**_NSYS, source=nsys_report.export_sqlite),
    KINETO_JSON: Format(
        prepare=lambda cur, path, candidate, options: kineto.prepare(cur, path, candidate.run_id),
        load=lambda con, candidate, path, staged, file_id, rules, alone, options: kineto.load(
            con, candidate.path, staged, candidate.run_id, file_id, rules, alone)),
    SERIES_CSV: Format(
        prepare=lambda cur, path, candidate, options: series.layout(
            candidate.path, options.get("time_column"), options.get("time_unit"),
            options.get("tz")),
        load=lambda con, candidate, path, found, file_id, rules, alone, options: series.load(
            con, candidate.path, found, candidate.run_id, file_id, options.get("host")),
        trace=False),
    TRAINING_LOG: Format(
        prepare=lambda cur, path, candidate, options: logs.decode(
            cur, candidate.path, options.get("log_pattern")),
        load=lambda con, candidate, path, decoded, file_id, rules, alone, options: logs.load(
            con, decoded, candidate.run_id, file_id),
        trace=False, config_text=lambda decoded: decoded.text),
}
