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
