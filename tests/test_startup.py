"""What `tracewh` loads to start: the quick commands import no parser, dataframe library or
pydantic, and cliparams converts every option's values as typer's pydantic layer does."""

from __future__ import annotations

import subprocess
import sys
from enum import Enum
from pathlib import Path

import pytest
import typer.main
from typer._click import Context
from typer._click.exceptions import BadParameter
from typer.testing import CliRunner

from tracewh import cliparams
from tracewh.cli import app
from tracewh.resources import sql_dir

ROOT = sql_dir().parent
SAMPLE = ROOT / "sample_db" / "traces"
HEAVY = ("pydantic", "sqlglot", "pyarrow", "polars")
LOADED = """
import runpy, sys
sys.argv = ["tracewh", *sys.argv[1:]]
try:
    runpy.run_module("tracewh.cli", run_name="__main__")
except SystemExit:
    pass
print(" ".join(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr)
"""


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("startup") / "sample.duckdb"
    assert CliRunner().invoke(app, ["ingest", "-q", str(SAMPLE), "--db", str(db)]).exit_code == 0
    return db


@pytest.mark.parametrize("args", [["--help"], ["metrics", "list"], ["runs", "--db", "DB"]])
def test_quick_commands_load_nothing_heavy(args, sample_db):
    args = [str(sample_db) if a == "DB" else a for a in args]
    done = subprocess.run([sys.executable, "-c", LOADED.format(heavy=HEAVY), *args],
                          capture_output=True, text=True, check=True)
    assert done.stdout  # the command answered
    assert done.stderr.splitlines()[-1] == ""  # and loaded none of HEAVY


def _parameters():
    """(command, parameter) for every option and argument of every command."""
    def walk(command, path):
        for param in getattr(command, "params", []):
            if hasattr(param, "type_descriptor"):
                yield path, command, param
        for name, sub in getattr(command, "commands", {}).items():
            yield from walk(sub, f"{path} {name}".strip())
    return list(walk(typer.main.get_command(app), ""))


# a valid value and some invalid ones for each kind of parameter
VALUES = {str: ["abc", ""], int: ["7", "-3", "007", 5, "x", "1.5", "0", "99999"],
          float: ["2.5", "0", "60", 60, 0.5, "-1", "1e3", "x", "inf"],
          Path: ["a/b/", "x.duckdb", "", Path("c")],
          "list[str]": [("a", "b"), ["c"]], "list[pathlib.Path]": [("a", "b/")]}


def _outcome(runtime, value, param, ctx):
    try:
        return "value", runtime._coerce_value(value, param=param, ctx=ctx)
    except BadParameter as exc:
        return "error", exc.format_message()


def test_plain_values_convert_as_typer_does(tmp_path):
    from typer._coercion import build_runtime_param as typer_runtime_param

    cliparams.install()
    compared = 0
    for path, command, param in _parameters():
        descriptor = param.type_descriptor
        annotation = descriptor.annotation
        kind = annotation if annotation in VALUES else str(annotation)
        values = VALUES.get(kind, [])
        if isinstance(annotation, type) and issubclass(annotation, Enum):
            values = [m.value for m in annotation] + [m.value.upper() for m in annotation] + ["no"]
        ctx = Context(command, info_name=path or "tracewh")
        for value in values:
            ours = _outcome(typer.core.build_runtime_param(descriptor), value, param, ctx)
            theirs = _outcome(typer_runtime_param(descriptor), value, param, ctx)
            assert ours == theirs, (path, param.name, value)
            assert type(ours[1]) is type(theirs[1]), (path, param.name, value)
            compared += 1
    assert compared > 300  # every kind of parameter was tried (about 120 parameters)


def test_the_typer_patch_applies_to_the_pinned_typer():
    """cliparams replaces typer.core.build_runtime_param, a private function: pyproject.toml
    pins typer to the versions it was tested on, and this fails when the installed typer is
    outside the pin or no longer builds its parameters through the patched function."""
    import importlib.metadata
    import re

    pin = re.search(r'"typer>=([\d.]+),<([\d.]+)"', (ROOT / "pyproject.toml").read_text())
    assert pin, "pyproject.toml no longer pins typer to a range (>=A,<B)"
    version = tuple(int(p) for p in importlib.metadata.version("typer").split(".")[:3])
    low, high = (tuple(int(p) for p in bound.split(".")) for bound in pin.groups())
    assert low <= version < high, f"typer {version} is outside the pin {pin.group(0)}"
    assert getattr(typer.core.build_runtime_param, "plain", False), \
        "cliparams.install() did not replace typer.core.build_runtime_param"
    built = {type(param.get_runtime_param()).__name__ for _, _, param in _parameters()}
    assert "PlainRuntimeParam" in built, f"typer built {built}, not cliparams' PlainRuntimeParam"
