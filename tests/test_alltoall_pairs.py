"""all_to_allv split sizes (issue 37): ingest keeps PyTorch's "In split size" / "Out split size",
nccl_splits sizes them, and alltoall_pairs gives the bytes per rank pair and the imbalance, on
the generated MoE job with dropless routing (`generate parallel --job moe_dropless`). The expected
bytes are worked out here from the routing table alone (dropless_tokens) and the order in which
the job launches its dispatches and combines, never from the SQL under test."""

from __future__ import annotations

import json
import statistics

import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.generate.parallel import MOE_HIDDEN, dropless_sends, dropless_tokens
from tracewh.metrics import find_metric, run_metric

runner = CliRunner()
STEPS, LAYERS, WORLD, BF16 = 3, 4, 4, 2


def expected_sends() -> dict[tuple[int, int, int], int]:
    """(Seq on the expert group, src, dst) -> bytes. Per step: forward layers 0..3, each a
    dispatch (rank s sends tokens[s][d] rows to d) then a combine (the rows come back: s sends
    tokens[d][s] to d); backward layers 3..0 with the same two, in the same order."""
    sends, seq = {}, 0
    for step in range(1, STEPS + 1):
        for layer in [*range(LAYERS), *reversed(range(LAYERS))]:
            t = dropless_tokens(step, layer, WORLD)
            for combine in (False, True):
                seq += 1
                for s in range(WORLD):
                    for d in range(WORLD):
                        rows = t[d][s] if combine else t[s][d]
                        sends[seq, s, d] = rows * MOE_HIDDEN * BF16
    return sends


def ingest(folder, traces):
    db = folder / "wh.duckdb"
    result = runner.invoke(app, ["ingest", "-q", "--db", str(db), "--run", "moe", str(traces)])
    assert result.exit_code == 0, result.stderr
    return db


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    folder = tmp_path_factory.mktemp("moe_dropless")
    result = runner.invoke(app, ["generate", "parallel", str(folder / "traces"),
                                 "--job", "moe_dropless"])
    assert result.exit_code == 0, result.output
    return folder / "traces", ingest(folder, folder / "traces")


def query(db, **params):
    con = tracewh.connect(db, read_only=True)
    try:
        return run_metric(con, find_metric("alltoall_pairs"),
                          {k: str(v) for k, v in params.items()}).to_pylist()
    finally:
        con.close()


def seq_of(op_key: str) -> int:
    return int(op_key.rsplit(" ", 1)[1])


def test_the_generator_writes_its_routing_as_pytorch_does(job):
    traces, _ = job
    assert dropless_sends(STEPS) == expected_sends()
    events = json.loads((traces / "rank2.json").read_text())["traceEvents"]
    host = [e for e in events if e["name"] == "record_param_comms" and e["args"]]
    kernels = [e for e in events if e["cat"] == "kernel" and "all_to_allv" in str(e["args"])]
    assert len(host) == len(kernels) == 16 * STEPS
    first = dropless_tokens(1, 0, WORLD)
    for e in (host[0], kernels[0]):  # the first dispatch, on the op and copied to its kernel
        assert e["args"]["Collective name"] == "all_to_allv"
        assert e["args"]["In split size"] == "[" + ", ".join(map(str, first[2])) + "]"
        assert e["args"]["Out split size"] == "[" + ", ".join(str(row[2]) for row in first) + "]"
        assert e["args"]["In msg nelems"] == sum(first[2]) * MOE_HIDDEN
    assert host[0]["args"]["External id"] == kernels[0]["args"]["External id"]


def test_ingest_keeps_the_splits_in_group_order(job):
    _, db = job
    con = tracewh.connect(db, read_only=True)
    rows = con.execute("SELECT rank, seq, in_splits, out_splits, collective, collective_name "
                       "FROM nccl_ops WHERE in_splits IS NOT NULL ORDER BY rank, seq").fetchall()
    equal = con.execute("SELECT count(*) FROM nccl_ops WHERE collective = 'AllReduce' "
                        "AND in_splits IS NULL AND out_splits IS NULL").fetchone()[0]
    con.close()
    sends = expected_sends()
    assert len(rows) == WORLD * 16 * STEPS and equal == WORLD * 2 * STEPS
    for rank, seq, sent, received, collective, name in rows:
        assert (collective, name) == ("AllToAll", "all_to_allv")
        assert [n * MOE_HIDDEN * BF16 for n in sent] == [sends[seq, rank, d] for d in range(WORLD)]
        assert [n * MOE_HIDDEN * BF16 for n in received] == [sends[seq, s, rank] for s in range(WORLD)]


def test_bytes_per_pair_and_collective_equal_the_routing(job):
    _, db = job
    sends = expected_sends()
    rows = query(db)
    assert {(seq_of(r["op_key"]), r["src_rank"], r["dst_rank"]): r["bytes"] for r in rows} == sends
    for r in rows:
        seq = seq_of(r["op_key"])
        assert r["received_bytes"] == r["bytes"] and r["collectives"] == 1 and r["note"] is None
        sent = {s: sum(sends[seq, s, d] for d in range(WORLD)) for s in range(WORLD)}
        got = {d: sum(sends[seq, s, d] for s in range(WORLD)) for d in range(WORLD)}
        pairs = [sends[seq, s, d] for s in range(WORLD) for d in range(WORLD)]
        assert r["src_sent_bytes"] == sent[r["src_rank"]]
        assert r["dst_received_bytes"] == got[r["dst_rank"]]
        assert r["send_imbalance"] == pytest.approx(max(sent.values()) / statistics.mean(sent.values()))
        assert r["recv_imbalance"] == pytest.approx(max(got.values()) / statistics.mean(got.values()))
        assert r["pair_vs_mean"] == pytest.approx(r["bytes"] / statistics.mean(pairs))
    # the hot expert: every dispatch has a receiver well above the mean, its combine a sender
    dispatch = [r for r in rows if seq_of(r["op_key"]) % 2 == 1]
    combine = [r for r in rows if seq_of(r["op_key"]) % 2 == 0]
    assert min(r["recv_imbalance"] for r in dispatch) > 1.4 > max(r["send_imbalance"] for r in dispatch)
    assert min(r["send_imbalance"] for r in combine) > 1.4 > max(r["recv_imbalance"] for r in combine)
    assert [seq_of(r["op_key"]) for r in rows] == sorted(seq_of(r["op_key"]) for r in rows)


def test_per_pair_sums_the_run_and_element_units_follow_tracelens(job):
    _, db = job
    sends = expected_sends()
    total = {(s, d): sum(v for (_, a, b), v in sends.items() if (a, b) == (s, d))
             for s in range(WORLD) for d in range(WORLD)}
    rows = query(db, per="pair")
    assert {(r["src_rank"], r["dst_rank"]): r["bytes"] for r in rows} == total
    assert all(r["op_key"] is None and r["collectives"] == 16 * STEPS for r in rows)
    assert all(r["avg_bytes"] == pytest.approx(r["bytes"] / (16 * STEPS)) for r in rows)
    elements = query(db, per="pair", split_unit="element")
    assert [r["bytes"] * MOE_HIDDEN for r in elements] == [r["bytes"] for r in rows]
    kept = query(db, iteration_from=2, iteration_to=2)
    assert {seq_of(r["op_key"]) for r in kept} == set(range(17, 33))


def test_splits_from_record_param_comms_when_the_kernel_has_none(job, tmp_path):
    """Kernels without the copied args (kineto before PyTorch 2.2): the splits come from the
    record_param_comms op with the same External id."""
    traces, db = job
    bare = tmp_path / "traces"
    bare.mkdir()
    for path in traces.glob("rank*.json"):
        doc = json.loads(path.read_text())
        for e in doc["traceEvents"]:
            if e["cat"] == "kernel":
                e["args"] = {k: v for k, v in e["args"].items()
                             if k in ("device", "stream", "correlation", "External id")}
        (bare / path.name).write_text(json.dumps(doc))
    assert query(ingest(tmp_path, bare)) == query(db)


def test_a_cut_list_leaves_the_bytes_unknown_and_says_why(job, tmp_path):
    """PyTorch lists the first 30 split sizes of a larger group and then '...': every member
    still has its row (its receive side is known), none its bytes."""
    traces, _ = job
    cut = tmp_path / "traces"
    cut.mkdir()
    for path in traces.glob("rank*.json"):
        text = path.read_text()
        if path.name == "rank1.json":
            doc = json.loads(text)
            for e in doc["traceEvents"]:
                if e["args"].get("Seq") == 1 and "In split size" in e["args"]:
                    e["args"]["In split size"] = e["args"]["In split size"].rsplit(",", 2)[0] + ", ...]"
            text = json.dumps(doc)
        (cut / path.name).write_text(text)
    rows = [r for r in query(ingest(tmp_path, cut)) if seq_of(r["op_key"]) == 1 and r["src_rank"] == 1]
    assert [r["dst_rank"] for r in rows] == [0, 1, 2, 3]
    assert all(r["bytes"] is None and "first 30 split sizes" in r["note"] for r in rows)


def test_mistakes_are_errors(job):
    _, db = job
    for params, message in ((["run=nope"], "no run 'nope'"),
                            (["per=rank"], "per must be collective or pair, not rank"),
                            (["split_unit=byte"], "split_unit must be row or element, not byte")):
        result = runner.invoke(app, ["query", "alltoall_pairs", "--db", str(db),
                                     *[x for p in params for x in ("--param", p)]])
        assert result.exit_code != 0 and message in result.stderr, result.stderr


def test_equal_all_to_all_has_no_pairs(tmp_path):
    """The capacity-bound MoE job's all_to_all records no splits ("[]" or none): no rows."""
    result = runner.invoke(app, ["generate", "parallel", str(tmp_path / "traces"), "--job", "moe"])
    assert result.exit_code == 0
    assert query(ingest(tmp_path, tmp_path / "traces")) == []
