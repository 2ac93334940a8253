"""What a format is to the ingest pipeline, and what its loader reports about the file it
wrote, for its row in store.sources."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable


@dataclass
class SourceFacts:
    format: str
    tool_version: str | None
    schema_version: str | None
    has_utc: bool
    origin_ns: int | None
    host: str | None = None
    warnings: list[str] = field(default_factory=list)
    metadata: str | None = None  # JSON
    time_base: str | None = None  # how the file's times became UTC, in words


def fault_warnings(negative_durations: int, duplicates: int, identical: str,
                   durations_not_finite: int = 0, times_not_finite: int = 0) -> list[str]:
    """A source's warnings for the faults its 90_faults.sql counted, worded alike for every
    format: what was found, and how it was stored. `identical` says what a copy shares."""
    said = []
    if negative_durations:
        said.append(f"{negative_durations:,} event(s) with a negative duration: stored with "
                    "duration 0")
    if durations_not_finite:
        said.append(f"{durations_not_finite:,} event(s) with a duration that is not a finite "
                    "number (NaN, Infinity): stored with duration 0")
    if times_not_finite:
        said.append(f"{times_not_finite:,} event(s) with a time that is not a finite number "
                    "(NaN, Infinity): not stored")
    if duplicates:
        said.append(f"{duplicates:,} event(s) written again, {identical}: stored as often as "
                    "written")
    return said


@dataclass(frozen=True)
class Batch:
    """How small files of one format are written together, in one transaction: staged side by
    side under file keys, given their ranks (a file sees the ranks of the files before it; a
    clash leaves that file out), written, and described."""

    fits: Callable[[Any], bool]   # (decoded file) -> may it join a batch
    stage: Callable[..., None]    # (con, [(key, decoded)])
    ranks: Callable[..., tuple]   # (con, [(key, path, decoded, run_id)], rules) -> (rows, clashes)
    write: Callable[..., None]    # (con, [(key, *rank row, run_id, file_id)])
    facts: Callable[[Any], SourceFacts]


@dataclass(frozen=True)
class Format:
    """One format ingest reads (tracewh.ingest.formats). `prepare` decodes a file on a worker
    thread into temp tables of its own cursor; `load` writes it inside the pipeline's transaction
    and says what store.sources records of it."""

    prepare: Callable[..., Any]          # (cursor, source_path, candidate, options) -> decoded
    load: Callable[..., SourceFacts]     # (con, candidate, source_path, decoded, file_id,
                                         #  rank_rules, alone_in_run, options)
    source: Callable[[Path], Path] = lambda path: path  # the file read (a report: its export)
    trace: bool = True  # a trace of its run (a run's only trace may take rank 0 unasked)
    config_text: Callable[[Any], str] = lambda decoded: ""  # text that holds run parameters
    batch: Batch | None = None
