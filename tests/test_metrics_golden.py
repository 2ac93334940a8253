"""Every metric gives the rows it gave before the scope-macro rewrite (issue 24), on the catalogue
fixture, a generated nsys and Kineto job and every real trace: digests recorded once by
`python tests/metric_outputs.py record` (see that file) against today's answers."""

from __future__ import annotations

import pytest

from metric_outputs import WAREHOUSES, load_golden, open_warehouse, outputs


@pytest.fixture(scope="module")
def golden():
    return load_golden()


@pytest.mark.parametrize("name", WAREHOUSES)
def test_every_metric_answers_as_before_the_rewrite(name, golden, tmp_path, request):
    shared = request.getfixturevalue("shared_data") if name == "real" else None
    con = open_warehouse(name, tmp_path, shared)
    try:
        now = outputs(con)
    finally:
        con.close()
    before = golden[name]
    assert sorted(now) == sorted(before)
    changed = {key: (before[key], now[key]) for key in before if now[key] != before[key]}
    assert not changed, "\n".join(
        f"{key}: {old.get('error') or old['first']} -> {new.get('error') or new['first']}"
        for key, (old, new) in changed.items())
