"""Mistakes named as such: parameter values checked against the warehouse before a metric
runs (a run that is not in `runs`, a rank not in `ranks`, a window that ends before it starts,
`bins=0` is a mistake, not a question whose answer is an empty table), the closest known name,
and DuckDB's error with its hint."""

from __future__ import annotations

import difflib
from typing import Iterable

import duckdb

from .errors import TracewhError

_AT_LEAST_ONE = ("bins", "stages", "microbatches")  # counts: 0 leaves nothing to compute
_AT_LEAST_ZERO = ("top",)                           # 0 means all


def did_you_mean(name: str, known: list[str]) -> str:
    """' - did you mean 'x'?' for the closest known name, or ''."""
    close = [k for k in known if k.startswith(name)][:1] or \
        difflib.get_close_matches(name, known, n=1, cutoff=0.6)  # a name cut short, or mistyped
    return f" - did you mean {close[0]!r}?" if close else ""


def known_runs(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The warehouse's run ids, in order, from store.runs (the runs view scans the facts)."""
    return [r for (r,) in con.execute("SELECT run_id FROM store.runs ORDER BY 1").fetchall()]


def check_runs(con: duckdb.DuckDBPyConnection, names: Iterable[str], series: bool = False,
               who: str = "") -> None:
    """Raise TracewhError for the first of `names` that is not a run of the warehouse (nor,
    with `series`, a series_id of the series view); `who` prefixes the message."""
    names = list(names)
    if not names:
        return
    runs = known_runs(con)
    series_ids = [s for (s,) in con.execute(
        "SELECT DISTINCT series_id FROM series ORDER BY 1").fetchall()] if series else []
    for name in names:
        if name not in runs and name not in series_ids:
            nor = "nor a series of the series view; " if series else ""
            raise TracewhError(f"{who}no run {name!r} in the warehouse"
                               f"{did_you_mean(name, runs + series_ids)} "
                               f"({nor}'tracewh runs' lists the {len(runs)} there are)")


def check_params(con: duckdb.DuckDBPyConnection, metric_name: str,
                 values: dict[str, object]) -> None:
    """Raise TracewhError naming the first value that cannot be right for this warehouse."""
    def fail(message: str) -> None:
        raise TracewhError(f"{metric_name}: {message}")

    asked = [values["run"]] if values.get("run") is not None else []
    if values.get("runs") is not None:
        asked += [r.strip() for r in str(values["runs"]).split(",") if r.strip()]
    asked += [values[side] for side in ("base", "test") if values.get(side) is not None]
    check_runs(con, asked, who=f"{metric_name}: ")
    if values.get("series") is not None:
        series = [s for (s,) in con.execute(
            "SELECT DISTINCT series_id FROM series ORDER BY 1").fetchall()]
        if values["series"] not in series:
            fail(f"no series {values['series']!r}{did_you_mean(str(values['series']), series)} "
                 f"(the series view lists the {len(series)} there are: runs that differ in "
                 "exactly one configuration field)")
    if values.get("rank") is not None:
        ranks = [r for (r,) in con.execute(
            "SELECT DISTINCT rank FROM ranks WHERE $run IS NULL OR run_id = $run ORDER BY 1",
            {"run": values.get("run")}).fetchall()]
        if values["rank"] not in ranks:
            where = f"run {values['run']!r}" if values.get("run") is not None else "any run"
            fail(f"no rank {values['rank']} in {where} (ranks: {_span(ranks)})")
    for low, high in (("start_ns", "end_ns"), ("iteration_from", "iteration_to")):
        if values.get(low) is not None and values.get(high) is not None \
                and values[high] < values[low]:
            fail(f"{high}={values[high]} is before {low}={values[low]}: nothing lies between")
    if values.get("window") is not None:
        start, _, end = str(values["window"]).partition("/")
        try:  # parsed by the same SQL macro the metrics use
            start_ns, end_ns = con.execute(
                "SELECT duration_ns(nullif(trim(?), '')), duration_ns(nullif(trim(?), ''))",
                [start, end]).fetchone()
        except duckdb.Error as exc:
            fail(f"window={values['window']!r}: {str(exc).splitlines()[0]}")
        if start_ns is not None and end_ns is not None and end_ns < start_ns:
            fail(f"window={values['window']!r} ends before it starts")
    for name in _AT_LEAST_ONE + _AT_LEAST_ZERO:
        least = 1 if name in _AT_LEAST_ONE else 0
        if values.get(name) is not None and values[name] < least:
            fail(f"{name}={values[name]}: must be {least} or more")


def explain_no_rows(con: duckdb.DuckDBPyConnection, metric_name: str,
                    values: dict[str, object]) -> None:
    """After a metric answered no rows: raise TracewhError when a parameter explains it (a
    window that misses the capture, an annotation no range is named by). Checked only then, as
    it scans the scope's events."""
    scope = {"run": values.get("run"), "rank": values.get("rank")}
    where = (f"run {scope['run']!r}" if scope["run"] is not None else "the warehouse") + \
        (f" rank {scope['rank']}" if scope["rank"] is not None else "")
    windows = {k: values.get(k) for k in ("window", "start_ns", "end_ns")}
    if any(v is not None for v in windows.values()):
        span = _sql_row(con, "capture_span.sql", {**scope, **windows})
        if span["sources"] and not span["overlapping"]:
            asked = ", ".join(f"{k}={v}" for k, v in windows.items() if v is not None)
            spans = []
            if windows["window"] is not None:
                spans.append(f"{_length(span['first_after_start_ns'])} to "
                             f"{_length(span['last_after_start_ns'])} after its sources' start")
            if windows["start_ns"] is not None or windows["end_ns"] is not None:
                spans.append(f"start_ns={span['first_ns']} to end_ns={span['last_ns']} "
                             f"({_moment(span['first_ns'])} to {_moment(span['last_ns'])} UTC)")
            raise TracewhError(f"{metric_name}: {asked} misses the capture: {where} spans "
                               + ", and ".join(spans))
    if values.get("annotation") is not None:
        found = _sql_row(con, "annotation_count.sql",
                         {**scope, "annotation": str(values["annotation"])})
        if not found["matching"]:
            names = found["names"] or []
            close = did_you_mean(str(values["annotation"]), sorted(names))
            raise TracewhError(
                f"{metric_name}: no NVTX range or annotation in {where} has a name containing "
                f"{values['annotation']!r}{close} ({len(names)} distinct names there; "
                "'tracewh query nvtx_summary' lists them)")


def _sql_row(con: duckdb.DuckDBPyConnection, name: str, params: dict) -> dict:
    from .resources import sql_dir

    cursor = con.execute((sql_dir() / "mistakes" / name).read_text(), params)
    return dict(zip([d[0] for d in cursor.description], cursor.fetchone()))


def _moment(ns: int) -> str:
    from .output import Units, duration

    return duration(ns, Units.auto)[:23]


def _length(ns: int) -> str:
    from .output import Units, duration

    return duration(ns, Units.auto) if ns else "0 s"


def _span(ranks: list[int]) -> str:
    if not ranks:
        return "none"
    if ranks == list(range(ranks[0], ranks[-1] + 1)) and len(ranks) > 2:
        return f"{ranks[0]}-{ranks[-1]}"
    return ", ".join(map(str, ranks))


def duckdb_message(exc: Exception) -> str:
    """DuckDB's error on one line, with its hint ('Candidate bindings: ...', 'Did you mean
    ...?'); the echo of the query under a parser error is left out."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    kept = [line for line in lines if not line.startswith("LINE ") and set(line) != {"^"}]
    return " - ".join(kept[:3])
