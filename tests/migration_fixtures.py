"""Migration folders for testing one migration on a warehouse made before it."""

from __future__ import annotations

from pathlib import Path

from tracewh import warehouse


def migrations_before_and_after(folder: Path, number: int) -> tuple[Path, Path]:
    """Two migration folders for testing migration `number` on a warehouse made before it:
    every other migration, renumbered without gaps (today's views read the columns that later
    ones add), then the same with `number` applied last."""
    files = sorted(warehouse.migrations_dir().glob("*.sql"))
    others = [f for f in files if int(f.name[:4]) != number]
    tested = next(f for f in files if int(f.name[:4]) == number)
    before, after = folder / f"before_{number:04d}", folder / f"with_{number:04d}_last"
    for target, chosen in ((before, others), (after, [*others, tested])):
        target.mkdir()
        for position, existing in enumerate(chosen, start=1):
            (target / f"{position:04d}{existing.name[4:]}").write_bytes(existing.read_bytes())
    return before, after
