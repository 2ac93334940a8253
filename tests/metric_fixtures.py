"""Hand-built warehouses for the metric catalogue tests, and the brute-force answers they check.

Times are small integers of nanoseconds after BASE (a UTC instant), so every expected value can
be computed independently by counting unit cells [t, t + 1): with integer endpoints, an interval
[s, e] covers exactly the cells s .. e - 1, and a union, intersection or difference of intervals
covers exactly the union, intersection or difference of their cell sets. Islands (merged
intervals, touching ones joined) are computed by explicit interval arithmetic.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field

import tracewh
from tracewh.metrics import find_metric, run_metric
from tracewh.ingest import derive

BASE = 1_700_000_000_000_000_000  # UTC ns

NAMES = {
    "compute": "void gemm_kernel<float>(float *)",
    "comm": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)",
    "sync": "wait_kernel(int *)",
}


# --- brute force ------------------------------------------------------------------------------

def cells(intervals) -> set[int]:
    """Unit cells covered by integer intervals [s, e]."""
    covered: set[int] = set()
    for s, e in intervals:
        covered.update(range(s, e))
    return covered


def islands(intervals) -> list[tuple[int, int, int]]:
    """Merged islands (start, end, members) by explicit interval arithmetic; touching ones join."""
    out: list[list[int]] = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
            out[-1][2] += 1
        else:
            out.append([s, e, 1])
    return [tuple(island) for island in out]


def quantile(values, q):
    """Continuous quantile (linear interpolation between closest ranks), as quantile_cont."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def stats(values):
    return dict(total=sum(values), n=len(values), avg=statistics.mean(values),
                med=statistics.median(values), min=min(values), max=max(values),
                std=statistics.stdev(values) if len(values) > 1 else 0.0)


# --- building a warehouse ------------------------------------------------------------------------

@dataclass
class Op:
    """One GPU op on a rank: kind compute | comm | sync | memcpy | memset. Times after BASE."""
    kind: str
    start: int
    end: int
    iteration: int | None = None
    launch: int | None = None  # start of the CUDA API call that launched it (None: no record)
    bytes: int | None = None
    stream: int = 7
    device: int = 0
    name: str | None = None

    @property
    def interval(self):
        return (self.start, self.end)


@dataclass
class Nccl:
    """One nccl_ops row on a rank."""
    collective: str
    start: int
    end: int
    op_key: str | None
    full_bytes: int | None = None
    group_size: int | None = None
    iteration: int | None = None
    pg_name: str | None = None


@dataclass
class Rank:
    run: str
    rank: int
    host: str | None
    ops: list[Op] = field(default_factory=list)
    nccl: list[Nccl] = field(default_factory=list)
    steps: list[tuple[int, int, int | None]] = field(default_factory=list)  # (N, start, end)
    ranges: list[tuple[str, int, int | None, str | None, str]] = field(default_factory=list)
    # NVTX (name, start, end, domain, kind)
    api: list[tuple[str, int, int]] = field(default_factory=list)  # extra API calls (name, start, end)


@dataclass
class Run:
    run_id: str
    ranks: list[Rank]
    batch_size: int | None = None
    seq_len: int | None = None
    metadata: dict | None = None
    params: dict[str, str] = field(default_factory=dict)  # store.run_params, source 'card'


def build(path, runs: list[Run]):
    """A warehouse at `path` holding exactly `runs` (store tables written directly)."""
    con = tracewh.connect(path)
    file_id = 0
    for run in runs:
        con.execute("INSERT INTO store.runs (run_id, batch_size, seq_len, metadata, created_at) "
                    "VALUES (?, ?, ?, ?, TIMESTAMP '2025-01-01')",
                    [run.run_id, run.batch_size, run.seq_len,
                     json.dumps(run.metadata) if run.metadata is not None else None])
        for key, value in run.params.items():  # the card is read with the run's first file
            con.execute("INSERT INTO store.run_params (run_id, file_id, key, value, source) "
                        "VALUES (?, ?, ?, ?, 'card')", [run.run_id, file_id + 1, key, value])
        for rank in run.ranks:
            file_id += 1
            pid = 1000 + file_id
            con.execute(
                "INSERT INTO store.sources (file_id, run_id, path, sha256, format, bytes, rows, "
                "has_utc, origin_ns, host, ingested_at) VALUES (?, ?, ?, ?, 'nsys-sqlite', 1, 1, "
                "true, ?, ?, TIMESTAMP '2025-01-01')",
                [file_id, run.run_id, f"/t/{file_id}.sqlite", f"{file_id:064d}", BASE, rank.host])
            con.execute("INSERT INTO store.ranks (run_id, rank, file_id, pid, host, device_id, "
                        "rank_source) VALUES (?, ?, ?, ?, ?, 0, 'filename')",
                        [run.run_id, rank.rank, file_id, pid, rank.host])
            for corr, op in enumerate(rank.ops, start=1):
                launch_ns = None if op.launch is None else BASE + op.launch
                common = [run.run_id, rank.rank, file_id, pid, op.device, op.stream,
                          BASE + op.start, BASE + op.end, corr, launch_ns]
                if op.kind in NAMES:
                    name = op.name or NAMES[op.kind]
                    con.execute(
                        "INSERT INTO store.kernels (run_id, rank, file_id, pid, device_id, stream_id,"
                        " start_ns, end_ns, correlation_id, launch_ns, name, short_name, iteration) VALUES "
                        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        common + [name, name.split("(")[0], op.iteration])
                elif op.kind == "memcpy":
                    con.execute(
                        "INSERT INTO store.memcpy (run_id, rank, file_id, pid, device_id, stream_id,"
                        " start_ns, end_ns, correlation_id, launch_ns, bytes, copy_kind, iteration) VALUES "
                        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        common + [op.bytes, op.name or "HtoD", op.iteration])
                else:
                    con.execute(
                        "INSERT INTO store.memset (run_id, rank, file_id, pid, device_id, stream_id,"
                        " start_ns, end_ns, correlation_id, launch_ns, bytes, value, iteration) VALUES "
                        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)",
                        common + [op.bytes, op.iteration])
                if op.launch is not None:
                    api = "cudaMemcpyAsync" if op.kind in ("memcpy", "memset") else "cudaLaunchKernel"
                    con.execute(
                        "INSERT INTO store.cuda_api (run_id, rank, file_id, pid, tid, start_ns, end_ns,"
                        " name, api_kind, correlation_id, iteration) VALUES "
                        "(?, ?, ?, ?, ?, ?, ?, ?, 'runtime', ?, ?)",
                        [run.run_id, rank.rank, file_id, pid, pid, BASE + op.launch,
                         BASE + op.launch + 1, api, corr, op.iteration])
            for name, start, end in rank.api:
                con.execute(
                    "INSERT INTO store.cuda_api (run_id, rank, file_id, pid, tid, start_ns, end_ns,"
                    " name, api_kind, correlation_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'runtime', NULL)",
                    [run.run_id, rank.rank, file_id, pid, pid, BASE + start, BASE + end, name])
            range_id = 0
            for n, start, end in rank.steps:
                range_id += 1
                con.execute(
                    "INSERT INTO store.nvtx_ranges (run_id, rank, file_id, range_id, pid, tid, "
                    "start_ns, end_ns, name, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'push_pop')",
                    [run.run_id, rank.rank, file_id, range_id, pid, pid, BASE + start,
                     None if end is None else BASE + end, f"ProfilerStep#{n}"])
            for name, start, end, domain, kind in rank.ranges:
                range_id += 1
                con.execute(
                    "INSERT INTO store.nvtx_ranges (run_id, rank, file_id, range_id, pid, tid, "
                    "start_ns, end_ns, domain, name, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [run.run_id, rank.rank, file_id, range_id, pid, pid, BASE + start,
                     None if end is None else BASE + end, domain, name, kind])
            for op in rank.nccl:
                con.execute(
                    "INSERT INTO store.nccl_ops (run_id, rank, file_id, pid, device_id, stream_id, "
                    "start_ns, end_ns, collective, full_bytes, group_size, pg_name, op_key, "
                    "collective_source, iteration) VALUES (?, ?, ?, ?, 0, 20, ?, ?, ?, ?, ?, ?, ?, "
                    "'nvtx', ?)",
                    [run.run_id, rank.rank, file_id, pid, BASE + op.start, BASE + op.end,
                     op.collective, op.full_bytes, op.group_size, op.pg_name, op.op_key,
                     op.iteration])
            derive(con, file_id, file_id)  # as ingest does after each source
    return con


def rows(con, metric: str, **params) -> list[dict]:
    """The metric's rows as dicts, without the metric and version columns."""
    table = run_metric(con, find_metric(metric), {k: str(v) for k, v in params.items()})
    return [{k: v for k, v in r.items() if k not in ("metric", "version")}
            for r in table.to_pylist()]


# --- runs written as tables (the input records of tests/sql/*.test) -----------------------------

# Each table: its rows' class (or what a row becomes) and the key columns that place it.
TABLES = ("run", "rank", "op", "nccl", "step", "range", "api")


def runs_from_tables(tables: dict[str, list[dict]]) -> list[Run]:
    """The runs that tables of rows describe, in the order their `rank` rows come. Every row
    but a run's and a rank's names its run and rank; a column left out takes the field's
    default (Op's stream 7, device 0, ...)."""
    unknown = set(tables) - set(TABLES)
    if unknown:
        raise ValueError(f"unknown input table(s) {', '.join(sorted(unknown))}: use {TABLES}")
    cards = {row["run"]: row for row in tables.get("run", [])}
    runs: dict[str, Run] = {}
    ranks: dict[tuple[str, int], Rank] = {}
    for row in tables.get("rank", []):
        if row["run"] not in runs:
            card = cards.get(row["run"], {})
            runs[row["run"]] = Run(row["run"], [], card.get("batch_size"), card.get("seq_len"),
                                   json.loads(card["metadata"]) if card.get("metadata") else None,
                                   json.loads(card["params"]) if card.get("params") else {})
        rank = Rank(row["run"], row["rank"], row.get("host"))
        runs[row["run"]].ranks.append(rank)
        ranks[(row["run"], row["rank"])] = rank
    for table, add in (("op", lambda r, f: r.ops.append(Op(**f))),
                       ("nccl", lambda r, f: r.nccl.append(Nccl(**f))),
                       ("step", lambda r, f: r.steps.append((f["n"], f["start"], f["end"]))),
                       ("range", lambda r, f: r.ranges.append(
                           (f["text"], f["start"], f.get("end"), f.get("domain"), f["kind"]))),
                       ("api", lambda r, f: r.api.append((f["name"], f["start"], f["end"])))):
        for row in tables.get(table, []):
            fields = {k: v for k, v in row.items() if k not in ("run", "rank")}
            add(ranks[(row["run"], row["rank"])], fields)
    return list(runs.values())


def table_rows(lines: list[str]) -> list[dict]:
    """Tab-separated rows under a line of column names; NULL is None, integers are ints."""
    def value(text: str):
        if text == "NULL":
            return None
        try:
            return int(text)
        except ValueError:
            return text
    names = lines[0].split("\t")
    return [dict(zip(names, (value(v) for v in line.split("\t")))) for line in lines[1:]]
