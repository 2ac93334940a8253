"""The realistic nsys bench set: a real autograd-NVTX capture tiled in time into one export per rank.

`../shared/data/nsys/nsys-ai/mfu_2gpu_before.sqlite` is a real 0.3 s capture of two H100 ranks
made with PyTorch's autograd NVTX (about 9.5 k nested `aten::*` ranges and 2 k kernels per rank,
NCCL ranges in a domain of their own). Rank r of the set is process r % 2 of that capture,
repeated --tiles times one window (300 ms) apart: every time column shifted by the tile's offset
plus a per-rank skew of r x 1.37 us (so no two files are byte-equal and the ranks' clocks differ
as real ones do), every id that links rows (correlation ids, range ids, event ids) moved by the
tile's stride. The nesting, names, threads, API calls, memcpy/memset and syncs are the real
ones. The default, 265 tiles, gives each rank >= 500 k kernels and >= 2.5 M NVTX ranges (an
80 s capture); 8 ranks hold >= 4 M kernels and >= 20 M ranges.

    python bench/nsys_tiled.py [--ranks 8] [--tiles 265] [--out bench/out/nsys_tiled]
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent.parent / "shared" / "data" / "nsys" / "nsys-ai" / "mfu_2gpu_before.sqlite"
WINDOW_NS = 300_000_000      # the source's DERIVED_WINDOW_NS span: tiles follow each other
SKEW_NS = 1_370              # per rank
TIME_COLUMNS = {"start", "end", "timestamp"}
ID_COLUMNS = {"correlationId", "rangeId", "eventId", "eventSyncId"}
PROCESS_COLUMNS = ("globalPid", "globalTid")  # rows of one process are kept by either


def _columns(con: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in con.execute(f'PRAGMA src.table_info("{table}")')]


def _id_strides(con: sqlite3.Connection, tables: list[str]) -> dict[str, int]:
    """Per id column, one more than its largest value in any table: tile k adds k x stride."""
    strides: dict[str, int] = {}
    for table in tables:
        for column in set(_columns(con, table)) & ID_COLUMNS:
            (top,) = con.execute(f'SELECT max("{column}") FROM src."{table}"').fetchone()
            strides[column] = max(strides.get(column, 1), (top or 0) + 1)
    return strides


def build_rank(rank: int, tiles: int, path: Path) -> Path:
    """Write rank's tiled export to path (atomically: a .part file renamed at the end)."""
    part = path.with_suffix(".part")
    part.unlink(missing_ok=True)
    con = sqlite3.connect(part)
    con.execute("PRAGMA journal_mode = OFF")
    con.execute("PRAGMA synchronous = OFF")
    con.execute(f"ATTACH 'file:{SOURCE}?mode=ro' AS src")
    (pid,) = con.execute(
        "SELECT DISTINCT globalPid FROM src.CUPTI_ACTIVITY_KIND_KERNEL ORDER BY 1 "
        f"LIMIT 1 OFFSET {rank % 2}").fetchone()
    schema = con.execute("SELECT type, name, sql FROM src.sqlite_master "
                         "WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
                         "ORDER BY type = 'index', rowid").fetchall()
    tables = [name for kind, name, _ in schema if kind == "table"]
    strides = _id_strides(con, tables)
    con.execute("CREATE TEMP TABLE tiles AS WITH RECURSIVE k(k) AS "
                f"(SELECT 0 UNION ALL SELECT k + 1 FROM k WHERE k + 1 < {tiles}) SELECT k FROM k")
    for kind, name, sql in schema:
        if kind != "table":
            continue
        con.execute(sql)
        columns = _columns(con, name)
        keep = [c for c in PROCESS_COLUMNS if c in columns]
        # the other process's rows go, so that each file is one rank
        where = f"WHERE ({keep[0]} >> 24) = ({pid} >> 24)" if keep else ""
        timed = set(columns) & TIME_COLUMNS
        if not timed or name.startswith(("TARGET_INFO", "META_DATA", "ENUM_")):
            con.execute(f'INSERT INTO main."{name}" SELECT * FROM src."{name}" {where}')
            continue
        shift = f"k * {WINDOW_NS} + {rank * SKEW_NS}"
        select = ", ".join(
            f'"{c}" + {shift}' if c in TIME_COLUMNS else
            f'"{c}" + k * {strides[c]}' if c in ID_COLUMNS and strides.get(c) else f'"{c}"'
            for c in columns)
        con.execute(f'INSERT INTO main."{name}" SELECT {select} '
                    f'FROM tiles CROSS JOIN src."{name}" {where} ORDER BY k, src."{name}".rowid')
    for kind, name, sql in schema:
        if kind == "index":
            con.execute(sql)
    con.execute("DELETE FROM META_DATA_EXPORT WHERE name LIKE 'DERIVED_%'")
    con.execute("INSERT INTO META_DATA_EXPORT VALUES ('DERIVED_FROM', ?), ('DERIVED_BY', ?)",
                (SOURCE.name, f"bench/nsys_tiled.py rank {rank} of process {pid} x {tiles} tiles"))
    con.commit()
    con.close()
    part.rename(path)
    return path


def build(out: Path, ranks: int = 8, tiles: int = 265, jobs: int = 2) -> list[Path]:
    """The set in out/ (made once; a file already there is kept)."""
    folder = out / f"mfu_{ranks}rank_{tiles}tiles"
    wanted = [folder / f"rank{r}.sqlite" for r in range(ranks)]
    missing = [r for r, path in enumerate(wanted) if not path.exists()]
    if missing:
        if not SOURCE.exists():
            sys.exit(f"{SOURCE} is missing: the realistic nsys bench tiles that real export")
        folder.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        print(f"tiling {SOURCE.name} into {len(missing)} rank exports x {tiles} tiles in {folder} ...",
              flush=True)
        with ProcessPoolExecutor(jobs) as pool:
            list(pool.map(build_rank, missing, [tiles] * len(missing),
                          [wanted[r] for r in missing]))
        print(f"  tiled in {time.perf_counter() - started:.1f} s", flush=True)
    return wanted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--tiles", type=int, default=265)
    parser.add_argument("--out", type=Path, default=HERE / "out" / "nsys_tiled")
    args = parser.parse_args()
    for path in build(args.out, args.ranks, args.tiles):
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        kernels, = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
        ranges, = con.execute("SELECT count(*) FROM NVTX_EVENTS").fetchone()
        print(f"{path.name}: {kernels:,} kernels, {ranges:,} NVTX events, "
              f"{path.stat().st_size / 1e6:,.0f} MB")
        con.close()


if __name__ == "__main__":
    main()
