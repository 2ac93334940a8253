"""Workload cards and DeepSpeed configs that are wrong never bring the traces beside them down:
each is one warning naming the file and the field, and the traces load (issue 40, item 12).
Through the real CLI, in a process of its own, whose peak memory is read."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import tracewh
from peak_memory import run_cli_measured
from tracewh.resources import sql_dir

TRACES = sql_dir().parent / "sample_db/traces/fsdp_4ranks_kineto"
BILLION_LAUGHS = "workload: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"l{i}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
    for i in range(9))  # 9^10 leaves: gigabytes once written out as JSON


def ingest(tmp_path: Path, files: dict[str, str]) -> tuple[subprocess.CompletedProcess, float]:
    """`tracewh ingest` of the sample's four Kineto ranks with `files` beside them: the result
    and the peak RSS of its process in MB."""
    run = tmp_path / "job"
    run.mkdir()
    for trace in TRACES.glob("*.json.gz"):
        shutil.copy(trace, run)
    for name, text in files.items():
        (run / name).write_text(text)
    return run_cli_measured(["ingest", str(run), "--db", str(tmp_path / "wh.duckdb"),
                             "--jobs", "1"])


def loaded(tmp_path: Path) -> list[tuple]:
    con = tracewh.connect(tmp_path / "wh.duckdb", read_only=True)
    try:
        return con.execute("SELECT run_id, count(*) FROM sources GROUP BY 1").fetchall()
    finally:
        con.close()


def warnings_of(done: subprocess.CompletedProcess, needle: str) -> list[str]:
    """The warning lines naming `needle`: there must be exactly one (said once, not per trace)."""
    said = [line for line in (done.stdout + done.stderr).splitlines()
            if line.startswith("warning:") and needle in line]
    assert len(said) == 1, done.stdout + done.stderr
    return said


def test_a_card_of_nested_aliases_is_one_warning_and_stays_small(tmp_path):
    done, peak_mb = ingest(tmp_path, {"card.yaml": BILLION_LAUGHS})
    assert done.returncode == 0, done.stderr
    assert loaded(tmp_path) == [("job", 4)]
    said = warnings_of(done, "card.yaml")
    assert said and "YAML alias" in said[0], done.stdout + done.stderr
    assert peak_mb < 600, f"{peak_mb} MB for a 1 KB card"


def test_a_card_too_big_to_be_one_is_not_read(tmp_path):
    big = "workload:\n  data: {batch_size: 8}\n" + "# padding\n" * (1_200_000 // 10)
    done, _ = ingest(tmp_path, {"card.yaml": big})
    assert done.returncode == 0, done.stderr
    assert loaded(tmp_path) == [("job", 4)]
    said = warnings_of(done, "card.yaml")
    assert said and "1.1 MiB, more than the 1 MiB a card can be: not read" in said[0], said


@pytest.mark.parametrize("card, field", [
    ('workload: "abc"\n', "field workload is str 'abc', not a mapping"),
    ("workload:\n  data: {batch_size: 8}\nModel-executor: 5\n", "field Model-executor is int 5"),
    ("workload:\n  data: [1, 2]\n", "field workload.data is list [1, 2]"),
])
def test_a_card_field_of_the_wrong_type_is_named_and_the_traces_load(tmp_path, card, field):
    done, _ = ingest(tmp_path, {"card.yaml": card})
    assert done.returncode == 0, done.stderr
    assert loaded(tmp_path) == [("job", 4)]
    said = warnings_of(done, "card.yaml")
    assert said and field in said[0], done.stdout + done.stderr


@pytest.mark.parametrize("config, problem", [
    ('{"zero_optimization": 3, "train_batch_size": 64}',
     "field zero_optimization is int 3, not a mapping: ignored"),
    ("[1, 2, 3]", "not read (a JSON list, not an object)"),
    ("{not json", "not read (Expecting property name"),
])
def test_a_wrong_deepspeed_config_is_named_and_the_traces_load(tmp_path, config, problem):
    done, _ = ingest(tmp_path, {"ds_config.json": config})
    assert done.returncode == 0, done.stderr
    assert loaded(tmp_path) == [("job", 4)]
    said = warnings_of(done, "ds_config.json")
    assert said and problem in said[0], done.stdout + done.stderr
    if "train_batch_size" in config:  # what could be read still is
        con = tracewh.connect(tmp_path / "wh.duckdb", read_only=True)
        assert con.execute("SELECT global_batch FROM runs").fetchall() == [(64,)]
        con.close()
