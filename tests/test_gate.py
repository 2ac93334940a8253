"""The CI gate: `tracewh diff --fail-on` and `tracewh query regressions --fail` exit 1 when a
measure moved past its threshold, 0 when nothing did, on generated pairs whose change is known."""

from __future__ import annotations

import csv
import io
import subprocess
from dataclasses import replace

import pytest

import tracewh
from tracewh.generate.nsys import PHASES, JobSpec, generate_job
from tracewh.generate.pair import KernelChanges, generate_pair

SPEC = JobSpec(world_size=2, iterations=5, layers=2)
EVERY_KERNEL_10PCT = KernelChanges(
    scaled={kernel.name: 1.1 for kernels in PHASES.values() for kernel in kernels})


def _tracewh(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["tracewh", *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    """Runs slow_base/slow_test (every kernel 10 % longer) and same_base/same_test (no change
    but chance)."""
    root = tmp_path_factory.mktemp("gate")
    db = root / "wh.duckdb"
    truths = {"slow": generate_pair(root / "slow", SPEC, EVERY_KERNEL_10PCT),
              # the same job captured twice: only the random variation of durations differs
              "same": (generate_job(root / "same" / "base", replace(SPEC, seed=1)),
                       generate_job(root / "same" / "test", replace(SPEC, seed=2)))}
    for name in truths:
        for side in ("base", "test"):
            done = _tracewh("ingest", "-q", str(root / name / side), "--run", f"{name}_{side}",
                            "--db", str(db))
            assert done.returncode == 0, done.stderr
    return db, truths


def _kernel_ns(truth) -> int:
    return sum(k.end_ns - k.start_ns for kernels in truth.kernels.values() for k in kernels
               if k.kind == "compute")


def test_a_10pct_slowdown_fails_the_gate_and_no_change_passes(pairs):
    db, truths = pairs
    base, test = truths["slow"]
    assert _kernel_ns(test) / _kernel_ns(base) == pytest.approx(1.10, abs=0.01)  # as injected
    with tracewh.Session(db) as session:
        step = [r for r in session.query("breakdown_diff", base="slow_base", test="slow_test")
                .to_pylist() if r["section"] == "step"][0]
    assert 5 < step["diff_pct"] < 11  # idle time between kernels does not grow with them

    slow = _tracewh("diff", "slow_base", "slow_test", "--db", str(db), "-f", "csv",
                    "--fail-on", "step_time>+5%,exposed_comm>+1000%")
    assert slow.returncode == 1, slow.stderr
    verdicts = slow.stderr.splitlines()[-2:]
    assert verdicts[0] == (f"FAIL step_time>+5%: step: step time {step['base_value'] / 1e6:.2f} ms "
                           f"-> {step['test_value'] / 1e6:.2f} ms ({step['diff_pct']:+.1f}%)")
    assert verdicts[1].startswith("ok exposed_comm>+1000%: breakdown: exposed communication ")
    assert slow.stdout.startswith("metric,version,level,")  # the rows stay the output

    same = _tracewh("diff", "same_base", "same_test", "--db", str(db), "-f", "csv",
                    "--fail-on", "step_time>+5%,exposed_comm>+10%,overlap<-10%")
    assert same.returncode == 0, same.stderr
    assert [line.split(":")[0] for line in same.stderr.splitlines()[-3:]] == [
        "ok step_time>+5%", "ok exposed_comm>+10%", "ok overlap<-10%"]
    base, test = truths["same"]
    assert abs(_kernel_ns(test) / _kernel_ns(base) - 1) < 0.02  # chance alone
    # the same slowdown, judged against a looser threshold, passes
    assert _tracewh("diff", "slow_base", "slow_test", "--db", str(db), "-f", "csv",
                    "--fail-on", "step_time>+15%").returncode == 0


def test_gate_mistakes_are_said_before_any_output(pairs):
    db, _ = pairs
    for spec, said in [
        ("stpe_time>5%", "no measure 'stpe_time' - did you mean 'step_time'?"),
        ("exposed>5%", "'exposed' names 3 measures"),
        ("step_time=5", "expected MEASURE>CHANGE or MEASURE<CHANGE"),
    ]:
        done = _tracewh("diff", "slow_base", "slow_test", "--db", str(db), "--fail-on", spec)
        assert done.returncode == 1 and done.stdout == "" and said in done.stderr, done.stderr


def test_regressions_fail(pairs):
    db, _ = pairs
    runs = "same_base,same_test,slow_test"  # slow_test is 10 % off the median of the three
    failed = _tracewh("query", "regressions", "--db", str(db), "-p", f"runs={runs}", "-p",
                      "threshold=0.05", "--fail", "-f", "csv")
    assert failed.returncode == 1
    worse = [row for row in csv.DictReader(io.StringIO(failed.stdout)) if row["worse"] == "true"]
    assert ("slow_test", "step", "step time") in {(r["run_id"], r["section"], r["item"])
                                                   for r in worse}
    assert f"Error: {len(worse)} row(s) say worse = true" in failed.stderr
    passed = _tracewh("query", "regressions", "--db", str(db), "-p", "runs=same_base,same_test",
                      "-p", "threshold=0.5", "--fail", "-f", "csv")
    assert passed.returncode == 0, passed.stderr
    refused = _tracewh("query", "idle_gaps", "--db", str(db), "--fail")
    assert refused.returncode == 1 and "has no 'worse' column" in refused.stderr


def test_the_gate_judges_every_row_and_a_rest_row_is_no_regression(pairs):
    """regressions hands on its top rows and counts the others in a 'rest' row (issue 42):
    --fail judges every row all the same, and the rest row itself is never worse."""
    db, _ = pairs
    args = ("query", "regressions", "--db", str(db), "-p", "runs=same_base,same_test,slow_test",
            "-p", "threshold=0.05", "-f", "csv")
    every = list(csv.DictReader(io.StringIO(_tracewh(*args, "-p", "top=0").stdout)))
    worse = sum(r["worse"] == "true" for r in every)
    cut = _tracewh(*args, "-p", "top=1")
    *first, rest = csv.DictReader(io.StringIO(cut.stdout))
    assert first == every[:1] and first[0]["worse"] == "true" and worse > 1
    assert (rest["section"], rest["flagged"], rest["worse"]) == ("rest", "", "")
    assert rest["item"].startswith(f"{len(every) - 1:,} more rows, ")
    assert f", {worse - 1} worse (top=0 lists them)" in rest["item"]
    assert f"'rest', stands for {rest['item'].split(' (')[0]} (--param top=0 lists them)" in \
        cut.stderr
    gate = _tracewh(*args, "--fail")  # the default top: every row judged and listed
    assert gate.returncode == 1 and list(csv.DictReader(io.StringIO(gate.stdout))) == every
    assert f"Error: {worse} row(s) say worse = true" in gate.stderr and "rest" not in gate.stderr
    refused = _tracewh(*args, "-p", "top=1", "--fail")
    assert (refused.returncode, refused.stdout) == (1, "") and refused.stderr == (
        "Error: --fail judges every row: leave out --param top (the rows past the top would "
        "not be judged)\n")
