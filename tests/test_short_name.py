"""short_name of kernels in '(anonymous namespace)': the fused optimizer kernel and friends."""

from __future__ import annotations

import re

from typer.testing import CliRunner

import tracewh
from tracewh.cli import app

runner = CliRunner()


def base_name(name: str) -> str:
    """The rule, written apart from the SQL macro: namespaces and templates off, last part."""
    name = name.replace("(anonymous namespace)::", "").removeprefix("void ")
    return re.split(r"[<(]", name, maxsplit=1)[0].split("::")[-1]


def test_anonymous_namespace_kernels_have_a_short_name(shared_data, db_path):
    result = runner.invoke(app, ["ingest", "-q", "--db", str(db_path),
                                 str(shared_data / "kineto" / "tracelens" / "b200"),
                                 str(shared_data / "kineto" / "hta" / "nccl_parser_config")])
    assert result.exit_code == 0, result.stderr
    con = tracewh.connect(db_path)
    rows = con.execute("SELECT name::VARCHAR, short_name FROM kernels").fetchall()
    anonymous = [(n, s) for n, s in rows if "(anonymous namespace)::" in n.split("<")[0]]
    assert len(anonymous) == 118  # 73 multimem_all_reduce, 27 multi_tensor_apply, ...
    assert {s for _, s in anonymous} >= {"multi_tensor_apply_kernel", "multimem_all_reduce_kernel"}
    assert all(s == base_name(n) and s for n, s in rows)
    # warehouses ingested before the fix stored '': the view makes the name again
    con.execute("UPDATE store.kernels SET short_name = ''")
    assert con.execute("SELECT list(short_name) FROM kernels").fetchone()[0] == [s for _, s in rows]
    con.close()
