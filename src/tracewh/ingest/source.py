"""What a loader reports about the file it wrote, for its row in store.sources."""

from __future__ import annotations

from dataclasses import dataclass, field


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
