"""run_diff and breakdown_diff: HolisticTraceAnalysis 0.5.0's TraceDiff on its own pair, and a
generated pair of runs whose kernels were added, removed, renamed, slowed and sped up on purpose."""

from __future__ import annotations

import csv
import io
import json
import statistics
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import pytest
from metric_fixtures import rows
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.metrics import find_metric
from tracewh.generate.nsys import FLASH_FWD, GEMM_WGRAD, LAYER_NORM, NEG, JobSpec, generate_job
from tracewh.generate.pair import CHANGES, DROPOUT, LAYER_NORM_V2, generate_pair
from tracewh.ingest import ingest_paths

PEER = Path(__file__).parent / "peer" / "hta_trace_diff_0.5.0.json"
LEVELS = {"ALL": "all", "CPU": "cpu_op,cuda_api,nvtx", "GPU": "kernel"}
# HTA's shorten_name keeps a kernel's namespace; tracewh's short name is nsys's base name
SHORT_BY_DESIGN = {"at::native::vectorized_elementwise_kernel": "vectorized_elementwise_kernel"}


# --- the peer: HTA TraceDiff on kineto/hta/trace_compare -----------------------------------------

@pytest.fixture(scope="module")
def hta_pair(shared_data, tmp_path_factory):
    con = tracewh.connect(tmp_path_factory.mktemp("hta_pair") / "wh.duckdb")
    pair = shared_data / "kineto" / "hta" / "trace_compare"
    for run in ("base", "test"):
        results = ingest_paths(con, [pair / run], run=run)
        assert [r.status for r in results] == ["ingested"], results[0].message
    yield con
    con.close()


def hta_params(case: dict) -> dict:
    iteration = case["iteration"]
    # HTA's default is the first iteration; a list is a range here
    scope = ("1009" if iteration is None else
             f"{iteration[0]}-{iteration[-1]}" if isinstance(iteration, list) else str(iteration))
    return dict(base="base", test="test", base_iteration=scope, test_iteration=scope,
                level=LEVELS[case["device_type"]], short_names=case["use_short_name"],
                launched_only="true")  # HTA: a GPU op without its launch is in no iteration


@pytest.mark.parametrize("index", range(len(json.loads(PEER.read_text())["cases"])))
def test_run_diff_reproduces_hta_compare_traces_and_ops_diff(hta_pair, index):
    case = json.loads(PEER.read_text())["cases"][index]
    got = rows(hta_pair, "run_diff", **hta_params(case))
    by_name = defaultdict(lambda: defaultdict(float))  # HTA groups by name across categories
    for row in got:
        for column in ("base_count", "test_count", "base_total_ns", "test_total_ns"):
            by_name[row["name"]][column] += row[column]
        by_name[row["name"]]["class"] = row["count_class"]
    want = {SHORT_BY_DESIGN.get(r["name"], r["name"]): r for r in case["compare_traces"]}
    assert set(by_name) == set(want), case
    sign = {"+": 1, "-": -1, "=": 0}
    for name, hta in want.items():
        mine = by_name[name]
        assert mine["base_count"] == hta["control_counts"], name
        assert mine["test_count"] == hta["test_counts"], name
        assert mine["base_total_ns"] == hta["control_total_duration_us"] * 1000, name
        assert mine["test_total_ns"] == hta["test_total_duration_us"] * 1000, name
        assert mine["test_count"] - mine["base_count"] == hta["diff_counts"], name
        assert mine["test_total_ns"] - mine["base_total_ns"] == hta["diff_duration_us"] * 1000
        diff = mine["test_count"] - mine["base_count"]
        assert (diff > 0) - (diff < 0) == sign[hta["counts_change_categories"]], name
    if "ops_diff" in case:
        classes = defaultdict(list)
        for name, mine in by_name.items():
            classes[mine["class"]].append(name)
        assert {k: sorted(v) for k, v in case["ops_diff"].items()} == \
               {k: sorted(classes.get(k, [])) for k in case["ops_diff"]}


def test_the_peer_cases_cover_every_class(hta_pair):
    """The recorded HTA answers hold added, deleted and unchanged ops: the comparison bites."""
    seen = {c for case in json.loads(PEER.read_text())["cases"] if "ops_diff" in case
            for c, names in case["ops_diff"].items() if names}
    assert {"added", "deleted", "unchanged"} <= seen


# --- a generated pair with known changes ------------------------------------------------------------

@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    out = tmp_path_factory.mktemp("pair")
    base, test = generate_pair(out / "traces", JobSpec(world_size=2, iterations=3, layers=2, seed=7))
    con = tracewh.connect(out / "wh.duckdb")
    results = ingest_paths(con, [out / "traces"])
    assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    yield con, base, test
    con.close()


def totals(truth, iterations=None, key=lambda k: k.name):
    """(count, total ns) per kernel name from the generator's record, over every rank."""
    out = defaultdict(lambda: [0, 0])
    for kernels in truth.kernels.values():
        for k in kernels:
            if iterations is None or k.iteration in iterations:
                out[key(k)][0] += 1
                out[key(k)][1] += k.end_ns - k.start_ns
    return out


def expected_class(base, test, threshold=0.05):
    if base[0] == 0:
        return "added", "added"
    if test[0] == 0:
        return "deleted", "deleted"
    count = "increased" if test[0] > base[0] else "decreased" if test[0] < base[0] else "unchanged"
    diff = test[1] - base[1]
    time = ("increased" if diff > threshold * base[1] else
            "decreased" if -diff > threshold * base[1] else "unchanged")
    return count, time


def check_against_truth(got, base, test, scale_base=1, scale_test=1, threshold=0.05):
    by_name = {r["name"]: r for r in got}
    names = set(base) | set(test)
    assert names <= set(by_name)
    for name in names:
        b, t, row = base.get(name, [0, 0]), test.get(name, [0, 0]), by_name[name]
        assert row["base_count"] == b[0] / scale_base and row["test_count"] == t[0] / scale_test
        assert row["base_total_ns"] == pytest.approx(b[1] / scale_base, rel=1e-12)
        assert row["test_total_ns"] == pytest.approx(t[1] / scale_test, rel=1e-12)
        assert row["time_diff_ns"] == pytest.approx(t[1] / scale_test - b[1] / scale_base, rel=1e-12)
        assert (row["count_class"], row["time_class"]) == expected_class(
            [b[0] / scale_base, b[1] / scale_base], [t[0] / scale_test, t[1] / scale_test],
            threshold), name
    return by_name


def test_generated_pair_gives_the_injected_classes_and_deltas(pair):
    con, base, test = pair
    got = rows(con, "run_diff", base="base", test="test", level="kernel")
    by_name = check_against_truth(got, totals(base), totals(test))
    assert by_name[GEMM_WGRAD.name]["count_class"] == "unchanged"
    assert by_name[GEMM_WGRAD.name]["time_class"] == "increased"
    assert 80 < by_name[GEMM_WGRAD.name]["time_diff_pct"] < 120  # 2x, give or take the noise
    assert by_name[FLASH_FWD.name]["time_class"] == "decreased"
    assert -60 < by_name[FLASH_FWD.name]["time_diff_pct"] < -40
    assert by_name[NEG.name]["count_class"] == "deleted"
    assert by_name[DROPOUT.name]["count_class"] == "added"
    assert by_name[LAYER_NORM.name]["count_class"] == "deleted"
    assert by_name[LAYER_NORM_V2.name]["count_class"] == "added"
    assert got[0]["name"] == GEMM_WGRAD.name  # the largest change comes first
    assert not any(r["per_step"] for r in got)
    # the copies and memsets did not change
    assert {r["count_class"] for r in got if r["name"].startswith("[CUDA")} == {"unchanged"}


def test_short_names_match_a_renamed_kernel(pair):
    con, base, test = pair
    got = rows(con, "run_diff", base="base", test="test", level="kernel", short_names="true")
    short = lambda k: k.short_name  # noqa: E731
    by_name = check_against_truth([r for r in got if not r["name"].startswith("[CUDA")],
                                  totals(base, key=short), totals(test, key=short))
    assert by_name["vectorized_layer_norm_kernel"]["count_class"] == "unchanged"
    assert by_name["fused_dropout_kernel_vec"]["count_class"] == "added"
    assert by_name["elementwise_kernel"]["count_class"] == "decreased"  # neg is one of them


def test_different_numbers_of_steps_are_compared_per_rank_and_iteration(pair):
    con, base, test = pair
    got = rows(con, "run_diff", base="base", test="test", level="kernel",
               base_iteration="1-2", test_iteration=" 3 ")
    assert {(r["base_steps"], r["test_steps"], r["per_step"]) for r in got} == {(4, 2, True)}
    check_against_truth([r for r in got if not r["name"].startswith("[CUDA")],
                        totals(base, {1, 2}), totals(test, {3}), scale_base=4, scale_test=2)


def test_scope_by_rank_and_level(pair):
    con, base, test = pair
    got = rows(con, "run_diff", base="base", test="test", base_rank=0, test_rank=1,
               level="kernel, nvtx", threshold=0.5)
    assert {r["level"] for r in got} == {"kernel", "nvtx"}
    kernels = [r for r in got if r["level"] == "kernel" and not r["name"].startswith("[CUDA")]
    one = lambda truth, rank: totals(type(truth)(truth.spec, truth.layers,  # noqa: E731
                                                 kernels={rank: truth.kernels[rank]}))
    check_against_truth(kernels, one(base, 0), one(test, 1), threshold=0.5)
    steps = {r["name"]: r for r in got if r["level"] == "nvtx"}
    assert steps["ProfilerStep#2"]["base_count"] == steps["ProfilerStep#2"]["test_count"] == 1
    gone = rows(con, "run_diff", base="base", test="no such run", level="kernel")
    assert gone and {(r["test_count"], r["count_class"]) for r in gone} == {(0, "deleted")}


def test_unset_runs_compare_the_first_two(pair):
    con, _, _ = pair
    assert rows(con, "run_diff", level="kernel") == rows(con, "run_diff", base="base",
                                                       test="test", level="kernel")
    assert CHANGES.removed == {NEG.name}


# --- breakdown_diff ------------------------------------------------------------------------------

def per_step(truth, values):
    """Sum over every rank, per rank and iteration."""
    return sum(values) / (truth.spec.world_size * truth.spec.iterations)


def test_breakdown_diff_side_by_side_and_the_sentence(pair):
    con, base, test = pair
    got = {(r["section"], r["item"]): r for r in rows(con, "breakdown_diff", top=30)}
    # kernels and collectives: the generator's record, per rank and step
    for name in {k.name for t in (base, test) for ks in t.kernels.values() for k in ks}:
        row = got[("kernel", name)]
        for side, truth in (("base", base), ("test", test)):
            want = per_step(truth, [k.end_ns - k.start_ns for ks in truth.kernels.values()
                                    for k in ks if k.name == name])
            assert (row[f"{side}_value"] or 0) == pytest.approx(want, rel=1e-12), name
    for collective in ("AllReduce", "Send", "Recv"):
        row = got[("collective", collective)]
        for side, truth in (("base", base), ("test", test)):
            want = per_step(truth, [o.end_ns - o.start_ns for ops in truth.nccl_ops.values()
                                    for o in ops if o.collective == collective])
            assert row[f"{side}_value"] == pytest.approx(want, rel=1e-12)
        assert row["diff"] == pytest.approx(row["test_value"] - row["base_value"])
    for side, truth in (("base", base), ("test", test)):  # comm kernels never overlap each other
        comm = sum(k.end_ns - k.start_ns for ks in truth.kernels.values() for k in ks
                   if k.kind == "comm")
        want = sum(truth.comm_overlap_ns.values()) * 100 / comm
        assert got[("overlap", "communication hidden under compute (%)")][f"{side}_value"] == \
            pytest.approx(want, rel=1e-12)
    # the breakdown is temporal_breakdown's, summed over ranks, per rank and step
    for side, truth in (("base", base), ("test", test)):
        ranks = rows(con, "temporal_breakdown", run=side)
        for item, column in (("compute", "compute_ns"), ("exposed communication", "exposed_comm_ns"),
                             ("exposed memory", "exposed_mem_ns"), ("idle", "idle_ns")):
            assert got[("breakdown", item)][f"{side}_value"] == pytest.approx(
                per_step(truth, [r[column] for r in ranks]), rel=1e-12)
        steps = [r for r in rows(con, "iteration_time", run=side) if r["rank"] is None]
        assert got[("step", "step time")][f"{side}_value"] == steps[0]["median_ns"]
    idle = sum(r["base_value"] for (section, _), r in got.items() if section == "idle")
    assert idle == pytest.approx(got[("breakdown", "idle")]["base_value"], rel=1e-9)
    # the injected largest change leads the sentence: the weight-gradient GEMM, twice as long
    sentence = got[("step", "step time")]["sentence"]
    assert sentence.startswith("step time rose from ")
    assert "the largest contributor is compute" in sentence
    assert f"led by kernel {GEMM_WGRAD.name} (+" in sentence
    assert [r["sentence"] for k, r in got.items() if k[0] != "step"] == [None] * (len(got) - 1)


def test_breakdown_diff_the_other_way_round_names_the_same_kernel(pair):
    con, _, _ = pair
    step = rows(con, "breakdown_diff", base="test", test="base")[0]
    assert step["sentence"].startswith("step time fell from ")
    assert f"led by kernel {GEMM_WGRAD.name} (-" in step["sentence"]


# --- tracewh diff ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pair_db(tmp_path_factory):
    """A small generated pair in a warehouse no connection holds open (the CLI opens it)."""
    out = tmp_path_factory.mktemp("pair_cli")
    base, test = generate_pair(out / "traces", JobSpec(world_size=1, iterations=3, layers=1, seed=3))
    db = out / "wh.duckdb"
    result = CliRunner().invoke(app, ["ingest", str(out / "traces"), "--db", str(db), "--quiet"])
    assert result.exit_code == 0, result.stderr
    return db, base, test


def test_cli_diff_prints_the_sentence_then_the_top_changes(pair_db):
    pair_db = pair_db[0]
    result = CliRunner().invoke(app, ["diff", "base", "test", "--db", str(pair_db), "--max-rows", "3"])
    assert result.exit_code == 0, result.stderr
    first, *table = result.stdout.splitlines()
    con = tracewh.connect(pair_db, read_only=True)
    try:
        sentence = rows(con, "breakdown_diff", base="base", test="test")[0]["sentence"]
        top = rows(con, "run_diff", base="base", test="test")[:3]
    finally:
        con.close()
    assert first == f"base -> test: {sentence}" and GEMM_WGRAD.name in first
    assert f"run_diff v{find_metric('run_diff').version}" in table[0]
    assert [r["level"] for r in top] == [line.split("│")[1].strip() for line in table
                                        if line.startswith("│")]


def test_cli_diff_csv_is_run_diffs_rows(pair_db):
    pair_db = pair_db[0]
    result = CliRunner().invoke(app, ["diff", "base", "test", "--db", str(pair_db), "--format",
                                      "csv", "--level", "kernel", "--short-names"])
    assert result.exit_code == 0, result.stderr
    assert result.stderr.startswith("base -> test: step time rose from")
    con = tracewh.connect(pair_db, read_only=True)
    try:
        want = rows(con, "run_diff", base="base", test="test", level="kernel", short_names="true")
    finally:
        con.close()
    lines = result.stdout.splitlines()
    assert len(lines) == len(want) + 1
    assert [line.split(",")[3] for line in lines[1:]] == [r["name"] for r in want]


def test_run_diff_keeps_its_top_changes_and_sums_the_others(pair_db):
    con = tracewh.connect(pair_db[0], read_only=True)
    try:
        every = rows(con, "run_diff", base="base", test="test", top=0)
        kept = rows(con, "run_diff", base="base", test="test", top=3)
        default = rows(con, "run_diff", base="base", test="test")
    finally:
        con.close()
    assert len(every) > 4 and default == every  # fewer ops than the default top: no rest row
    *first, rest = kept
    left = every[3:]
    assert first == every[:3] and "rest" not in {r["level"] for r in every}
    assert (rest["level"], rest["name"]) == ("rest", f"{len(left):,} more ops (top=0 lists them)")
    for column in ("base_count", "test_count", "base_total_ns", "test_total_ns", "count_diff",
                   "time_diff_ns"):
        assert rest[column] == pytest.approx(sum(r[column] for r in left)), column
    assert (rest["count_class"], rest["time_class"]) == (None, None)  # no op: no change class
    # the largest changes first: none left out moved more than the last one kept
    assert max(abs(r["time_diff_ns"]) for r in left) <= abs(first[-1]["time_diff_ns"])


def test_cli_diff_says_how_many_ops_it_left_out(pair_db):
    db = pair_db[0]
    result = CliRunner().invoke(app, ["diff", "base", "test", "--db", str(db), "--top", "3",
                                      "--format", "csv"])
    assert result.exit_code == 0, result.stderr
    got = list(csv.DictReader(io.StringIO(result.stdout)))
    every = CliRunner().invoke(app, ["diff", "base", "test", "--db", str(db), "--top", "0",
                                     "--format", "csv"])
    left = len(every.stdout.splitlines()) - 1 - 3
    assert len(got) == 3 + 1 and (got[-1]["level"], got[-1]["name"]) == (
        "rest", f"{left:,} more ops (top=0 lists them)")
    assert (f"run_diff kept its top rows: the last row, 'rest', stands for {left:,} more ops "
            "(--top 0 lists them)") in result.stderr
    assert "rest" not in every.stderr + every.stdout  # nothing left out, nothing said
    table = CliRunner().invoke(app, ["diff", "base", "test", "--db", str(db), "--top", "3"])
    assert f"stands for {left:,} more ops" in table.stderr  # beyond a terminal's --max-rows too


@pytest.mark.parametrize("args, message", [
    (["base", "nope"], "Error: no run 'nope' in "),
    (["base", "test", "--level", "kernel,gpu"], "Error: --level 'kernel,gpu': 'gpu' is not one"),
])
def test_cli_diff_refuses_a_mistake_in_one_line(pair_db, args, message):
    result = CliRunner().invoke(app, ["diff", *args, "--db", str(pair_db[0])])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith(message) and len(result.stderr.strip().splitlines()) == 1


# --- regressions over a series -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def series(tmp_path_factory):
    """Three runs of one job: two as they were (seeds 7 and 8), one with the known changes."""
    out = tmp_path_factory.mktemp("series")
    spec = JobSpec(world_size=2, iterations=3, layers=2, seed=7)
    base, test = generate_pair(out / "traces", spec)
    again = generate_job(out / "traces" / "base2", replace(spec, seed=8))
    con = tracewh.connect(out / "wh.duckdb")
    results = ingest_paths(con, [out / "traces"])
    assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    yield con, {"base": base, "base2": again, "test": test}
    con.close()


def test_regressions_flag_what_moved_from_the_series_median(series):
    con, truths = series
    got = rows(con, "regressions", runs="base, base2,test", threshold=0.2)
    kernels = {(r["run_id"], r["item"]): r for r in got if r["section"] == "kernel"}
    names = {k.name for t in truths.values() for ks in t.kernels.values() for k in ks}
    assert {name for _, name in kernels} == names
    for name in names:  # the generator's record, per rank and step, a missing kernel as 0
        values = {run: per_step(t, [k.end_ns - k.start_ns for ks in t.kernels.values()
                                    for k in ks if k.name == name]) for run, t in truths.items()}
        median = statistics.median(values.values())
        for run, value in values.items():
            row = kernels[(run, name)]
            assert row["value"] == pytest.approx(value, rel=1e-12)
            assert row["series_median"] == pytest.approx(median, rel=1e-12)
            assert row["flagged"] == (abs(value - median) > 0.2 * abs(median)), (run, name)
    flagged = {(r["run_id"], r["item"], r["worse"]) for r in got
               if r["flagged"] and r["section"] == "kernel"}
    assert ("test", GEMM_WGRAD.name, True) in flagged  # 2x: a regression
    assert ("test", FLASH_FWD.name, False) in flagged  # 0.5x: an improvement
    assert ("test", NEG.name, False) in flagged and ("test", DROPOUT.name, True) in flagged
    # compute kernels of the unchanged runs stay within 20% (NCCL time, which includes waiting
    # for the slowest rank, moves by ~30% from seed to seed: flagged, rightly)
    assert not {run for run, name, _ in flagged if not name.startswith("nccl")} - {"test"}
    assert got[0]["flagged"] and not got[-1]["flagged"]


def test_regressions_keep_their_top_rows_and_count_the_others(series):
    con, _ = series
    every = rows(con, "regressions", threshold=0.2, top=0)
    assert rows(con, "regressions", threshold=0.2) == every  # fewer rows than the default top
    top = max(i for i, r in enumerate(every) if r["worse"])  # the last regression is cut off
    *first, rest = rows(con, "regressions", threshold=0.2, top=top)
    left = every[top:]
    flagged, worse = (sum(bool(r[c]) for r in left) for c in ("flagged", "worse"))
    assert first == every[:top] and top > 1 and flagged > worse >= 1
    assert rest == {**{k: None for k in rest}, "section": "rest",  # counted, never worse itself
                    "item": f"{len(left):,} more rows, {flagged} flagged, {worse} worse "
                            "(top=0 lists them)"}


def test_regressions_take_an_explicit_list_of_runs_or_a_series(series):
    con, _ = series
    assert {r["run_id"] for r in rows(con, "regressions", runs="base,test")} == {"base", "test"}
    assert {r["run_id"] for r in rows(con, "regressions")} == {"base", "base2", "test"}
    # a series: base and test differ in lr only, base2 also in its seed
    con.executemany("INSERT INTO store.run_params VALUES (?, 0, ?, ?, 'run-param')",
                    [("base", "lr", "1e-4"), ("test", "lr", "2e-4"),
                     ("base2", "lr", "1e-4"), ("base2", "seed", "8")])
    try:
        (series_id,) = [s for (s,) in con.execute(
            "SELECT DISTINCT series_id FROM series WHERE varied = 'lr'").fetchall()]
        assert {r["run_id"] for r in rows(con, "regressions", series=series_id)} == {"base", "test"}
    finally:
        con.execute("DELETE FROM store.run_params WHERE file_id = 0")


# --- the report's diff section -----------------------------------------------------------------------

def test_report_gains_a_diff_section_when_asked_for_two_runs(pair, tmp_path):
    """(Without --run, a warehouse of two runs gets no diff section: tests/test_report.py's
    sample report.)"""
    from tracewh.report import build_report
    from tracewh.report.draw import _fmt_ns
    from tracewh.session import Session

    con, _, _ = pair
    report = build_report(Session.over(con), tmp_path, runs=["base", "test"], formats=("svg",))
    figure, table = [i for i in report.items if i.section.startswith("9.")]
    assert (figure.key, table.key) == ("diff", "diff_ops") and figure.files["svg"].exists()
    sentence = rows(con, "breakdown_diff", base="base", test="test")[0]["sentence"]
    assert figure.caption == sentence and GEMM_WGRAD.name in sentence
    version = find_metric("breakdown_diff").version
    assert [u.describe() for u in figure.uses] == [f"breakdown_diff v{version} (base=base, test=test)"]
    every = rows(con, "run_diff", base="base", test="test", top=0)
    top, left = every[:15], every[15:]
    assert table.table_html.count("<tr>") == len(top) + 1 and "more ops" not in table.table_html
    assert len(left) > 0 and table.notes[0] == (  # the ops past the 15: summed, in a note
        f"The other ops changed less: {len(left):,} more ops, "
        f"{_fmt_ns(sum(r['base_total_ns'] for r in left))} in base and "
        f"{_fmt_ns(sum(r['test_total_ns'] for r in left))} in test.")
    assert table.table_html.index(GEMM_WGRAD.name[:63]) < table.table_html.index("flash_fwd")
    assert sentence in (tmp_path / "index.html").read_text()


# --- two runs in one chrome trace ---------------------------------------------------------------------

def test_chrome_trace_puts_two_runs_side_by_side(pair_db, tmp_path):
    db, base, test = pair_db
    out = tmp_path / "pair.trace.json"
    result = CliRunner().invoke(app, ["export", str(out), "--format", "chrome-trace", "--run",
                                      "base", "--run", "test", "--db", str(db)])
    assert result.exit_code == 0, result.stderr
    events = json.loads(out.read_text())["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {0: "base: rank 0 (node0)", 100000: "test: rank 0 (node0)"}
    kernels, first = defaultdict(int), {}
    for e in events:
        if e["ph"] == "X":
            first[e["pid"]] = min(first.get(e["pid"], e["ts"]), e["ts"])
            kernels[e["pid"]] += e["cat"] in ("compute", "comm")
    assert kernels == {0: len(base.kernels[0]), 100000: len(test.kernels[0])}
    assert first == {0: 0, 100000: 0}  # each run from its own first event
    result = CliRunner().invoke(app, ["export", str(out), "--format", "chrome-trace", "--db",
                                      str(db)])
    assert result.exit_code == 1 and "repeat it to see runs side by side" in result.stderr
