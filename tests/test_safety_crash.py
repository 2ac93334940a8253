"""Crash safety: `kill -9` of a running `tracewh ingest` at random points, 20 trials
(bench/crash_trials.py). After each kill the warehouse opens and passes `tracewh check` (no
partial source), and ingesting again completes it to exactly an uninterrupted ingest's content.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tracewh.resources import sql_dir

SCRIPT = sql_dir().parent / "bench" / "crash_trials.py"
TRIALS = int(os.environ.get("TRACEWH_CRASH_TRIALS", "20"))


def test_kill_9_at_random_points_never_leaves_a_partial_source(tmp_path):
    seed = int(os.environ.get("TRACEWH_CRASH_SEED", "20240611"))
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--trials", str(TRIALS), "--out", str(tmp_path),
         "--seed", str(seed), "--json"],
        capture_output=True, text=True, timeout=480)
    lines = result.stdout.splitlines()
    summary = json.loads(lines[-1])
    bad = [t for t in summary["trials"] if not t["consistent"]]
    assert result.returncode == 0 and not bad, "\n".join(lines[:-1]) + result.stderr
    assert summary["consistent"] == TRIALS >= 20
    assert f"kill -9: {TRIALS}/{TRIALS} trials consistent" in result.stdout
    # the kills landed over the whole ingest: before any write, between files, and after some
    killed = [t for t in summary["trials"] if not t["finished_first"]]
    assert len(killed) >= TRIALS // 2, result.stdout
    print("\n".join(lines[:-1]))


def test_an_interrupted_creation_leaves_no_warehouse(tmp_path, monkeypatch):
    """A new warehouse is built under a temporary name, migrated and given its views, and only
    then linked into place: dying half-way leaves nothing at the path (kill -9 in miniature)."""
    import pytest

    import tracewh
    from tracewh import warehouse

    def dies(*args, **kwargs):
        raise KeyboardInterrupt("killed while creating the views")

    monkeypatch.setattr(warehouse, "install_views", dies)
    monkeypatch.setenv("TRACEWH_CACHE_DIR", "")  # built, not copied from a template
    path = tmp_path / "new.duckdb"
    with pytest.raises(KeyboardInterrupt):
        tracewh.connect(path)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    con = tracewh.connect(path)
    try:
        assert con.execute("SELECT count(*) FROM store.schema_migrations").fetchall()[0][0] == len(
            warehouse.load_migrations())
    finally:
        con.close()
