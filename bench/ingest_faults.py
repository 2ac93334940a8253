"""Benchmark: ingest memory stays bounded by --memory-limit, whatever the input (issue 25).

Three inputs, built once into bench/out/faults/ (git-ignored), each ingested by ``python -m
tracewh.cli ingest --quiet`` into a fresh warehouse in its own child process, with peak RSS of the
process tree (kineto_ingest.measure), MB/s of the input and the memory limit DuckDB was given:

* a gzip bomb: 4.9 MB of ``.json.gz`` that inflates to 5 GB (a trace header, then spaces), which
  ingest must refuse with one line, well under the limit;
* one 4 GiB Kineto trace (``tracewh.generate.kineto``, one rank): one file, so memory cannot
  grow with the largest file;
* the 8 x 100 MB DLRM set of kineto_ingest.py, for comparison.

The bound is the issue's: peak RSS under --memory-limit + 0.5 GB. With ``--ab SRC`` the 8 x 100
MB set is also ingested by the tracewh in SRC (another checkout's ``src``), in interleaved pairs
(``--pairs``), and the median ratio of the two times is printed: this machine drifts 20-30%.

    python bench/ingest_faults.py [--gib 4] [--out bench/out] [--ab ../main/src --pairs 5]
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "src"))

from kineto_ingest import build_inputs, measure  # noqa: E402

from tracewh.ingest import default_memory_limit  # noqa: E402


def build_bomb(path: Path, inflated: int = 5 << 30) -> Path:
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        spaces = b" " * (16 << 20)
        with gzip.open(path.with_suffix(".part"), "wb", compresslevel=9) as out:
            out.write(b'{"schemaVersion": 1, "traceEvents": [')
            for _ in range(inflated // len(spaces)):
                out.write(spaces)
        path.with_suffix(".part").rename(path)
    return path


def build_big(folder: Path, gib: int) -> Path:
    from tracewh.generate.kineto import KinetoJobSpec, generate_kineto_job

    if not folder.is_dir():
        partial = folder.with_name(folder.name + ".part")
        generate_kineto_job(partial, KinetoJobSpec(world_size=1, iterations=3, seed=5,
                                                   target_bytes_per_rank=gib << 30))
        partial.rename(folder)
    return folder


def ingest(paths: list[Path], src: Path = REPO / "src") -> dict:
    with tempfile.TemporaryDirectory(prefix="tracewh-faults-") as tmp:
        env_src = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = str(src)
        try:
            return measure([sys.executable, "-m", "tracewh.cli", "ingest", "--quiet", "--db",
                            str(Path(tmp) / "wh.duckdb"), *map(str, paths)])
        finally:
            if env_src is None:
                os.environ.pop("PYTHONPATH")
            else:
                os.environ["PYTHONPATH"] = env_src


def size_of(paths: list[Path]) -> int:
    return sum(p.stat().st_size for path in paths
               for p in ([path] if path.is_file() else path.rglob("*")) if p.is_file())


def _megabytes(limit: str) -> float:
    number, unit = float(limit[:-2]), limit[-2:].upper()
    return number * {"MB": 1, "GB": 1000}[unit]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=int, default=4, help="size of the single big trace")
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--shared", type=Path,
                        default=Path(os.environ.get("TRACEWH_SHARED", REPO.parent / "shared")))
    parser.add_argument("--ab", type=Path, help="another checkout's src: A/B on the 8 x 100 MB set")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--skip-big", action="store_true")
    args = parser.parse_args()

    folder = args.out / "faults"
    limit = os.environ.get("TRACEWH_MEMORY_LIMIT") or default_memory_limit(None)
    bound = _megabytes(limit) + 500
    cases = [("gzip bomb (4.9 MB -> 5 GB)", [build_bomb(folder / "bomb.json.gz")])]
    if not args.skip_big:
        cases.append((f"one {args.gib} GiB Kineto trace", [build_big(folder / f"big{args.gib}g",
                                                                     args.gib)]))
    dlrm = build_inputs(args.shared / "data" / "kineto" / "param" / "dlrm_kineto", args.out, 100)
    cases.append(("8 x 100 MB DLRM set", dlrm))

    print(f"memory limit {limit} (cores {os.cpu_count()}); bound: limit + 500 MB = {bound:.0f} MB")
    print(f"{'input':32} {'MB':>8} {'s':>7} {'MB/s':>7} {'CPU s':>7} {'peak MB':>8}  within  result")
    for label, paths in cases:
        mb = size_of(paths) / 1e6
        got = ingest(paths)
        result = got["error"] or "ok"
        print(f"{label:32} {mb:8.0f} {got['wall']:7.1f} {mb / got['wall']:7.1f} {got['cpu']:7.1f} "
              f"{got['peak_mb']:8.0f}  {'yes' if got['peak_mb'] <= bound else 'NO':6}  "
              f"{result[:110]}", flush=True)

    if args.ab:
        mb = size_of(dlrm) / 1e6
        times = {"this": [], "other": []}
        for _ in range(args.pairs):
            for name, src in (("this", REPO / "src"), ("other", args.ab)):
                got = ingest(dlrm, src)
                times[name].append((got["wall"], got["cpu"], got["peak_mb"]))
        print(f"\nA/B on the 8 x 100 MB set, {args.pairs} interleaved pairs (this = {REPO / 'src'}, "
              f"other = {args.ab}):")
        for name, rows in times.items():
            walls = [w for w, _, _ in rows]
            print(f"  {name:5} median {statistics.median(walls):6.2f} s ({mb / statistics.median(walls):6.1f} MB/s), "
                  f"CPU {statistics.median(c for _, c, _ in rows):6.1f} s, "
                  f"peak {max(p for _, _, p in rows):5.0f} MB; runs {', '.join(f'{w:.2f}' for w in walls)}")
        ratios = [a[0] / b[0] for a, b in zip(times["this"], times["other"])]
        print(f"  this / other, per pair: {', '.join(f'{r:.3f}' for r in ratios)}; "
              f"median {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
