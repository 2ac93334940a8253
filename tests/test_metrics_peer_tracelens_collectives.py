"""straggler_ops, straggler and collective_bandwidth against TraceLens v1.0.0's multi-rank
collective report (issue 37 step 4), recorded by tests/peer/tracelens_collectives.py in
tests/peer/tracelens_collectives_1.0.0.json: the 8 real DLRM ranks (one node, no sizes), a
generated 2-node job with PyTorch 2.2+ collective args (sizes, so bandwidths), and alltoall_pairs
against the nccl_all2allv sheet and heatmap on the generated dropless MoE job (all_to_allv with
uneven split sizes).

TraceLens measures on each rank's clock as recorded; tracewh aligns the clocks first (the DLRM
files name no host, so each rank is its own host and gets a 0.5-1.5 us offset from the
collectives' ends). `align_clocks=false` reproduces TraceLens: every wait and skew within 2 ns
(TraceLens' float microseconds), every rank's last and first arrivals equal. TraceLens prints
GiB/s under "GB/s"; `binary_units=true` reproduces its bandwidths to 1e-9."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.generate.parallel import MOE_HIDDEN
from tracewh.metrics import find_metric, run_metric

PEER = json.loads((Path(__file__).parent / "peer" / "tracelens_collectives_1.0.0.json").read_text())


def query(con, name, **params):
    return run_metric(con, find_metric(name), {k: str(v) for k, v in params.items()}).to_pylist()


def warehouse(tmp_path, traces):
    db = tmp_path / "wh.duckdb"
    result = CliRunner().invoke(app, ["ingest", "-q", "--db", str(db), "--run", "job", str(traces)])
    assert result.exit_code == 0, result.stderr
    return tracewh.connect(db, read_only=True)


@pytest.fixture(scope="module")
def dlrm(shared_data, tmp_path_factory):
    con = warehouse(tmp_path_factory.mktemp("tl_dlrm"),
                    shared_data / "kineto" / "param" / "dlrm_kineto")
    yield con, PEER["dlrm"]
    con.close()


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tl_generated")
    result = CliRunner().invoke(app, ["generate", "kineto", str(folder / "job"),
                                      *PEER["generated_args"]])
    assert result.exit_code == 0, result.stderr
    con = warehouse(folder, folder / "job")
    yield con, PEER["generated"]
    con.close()


def paired(con, peer, **params):
    """TraceLens' collectives, each with tracewh's straggler_ops rows of the same collective:
    rank by rank, the n-th collective TraceLens saw on a rank is the n-th tracewh matched."""
    rows = query(con, "straggler_ops", **params)
    ours = {}
    for r in sorted(rows, key=lambda r: r["start_ns"]):
        ours.setdefault(r["rank"], []).append(r)
    theirs = {}
    for c in peer["collectives"]:
        for rank, ts in c["ts"].items():
            theirs.setdefault(int(rank), []).append((ts, c))
    assert sorted(ours) == sorted(theirs)
    found = {}
    for rank, listed in theirs.items():
        listed.sort(key=lambda x: x[0])
        assert len(listed) == len(ours[rank]), rank
        for (_, c), r in zip(listed, ours[rank]):
            found.setdefault(c["collective_id"], (c, {}))[1][rank] = r
    return list(found.values())


@pytest.mark.parametrize("which", ["dlrm", "generated"])
def test_waits_and_skews_on_recorded_clocks_equal_tracelens(which, request):
    con, peer = request.getfixturevalue(which)
    pairs = paired(con, peer, align_clocks="false")
    assert len(pairs) == len(peer["collectives"]) > 4
    for c, ranks in pairs:
        keys = {r["op_key"] for r in ranks.values()}
        assert len(keys) == 1, keys  # one collective of tracewh's is one of TraceLens'
        for rank, r in ranks.items():
            assert r["wait_ns"] == pytest.approx(c["wait_time"][str(rank)] * 1000, abs=2)
            assert r["end_ns"] - r["start_ns"] == pytest.approx(c["dur"][str(rank)] * 1000, abs=2)
        any_row = next(iter(ranks.values()))
        assert any_row["start_skew_ns"] == pytest.approx(c["skew in start time"] * 1000, abs=2)
        assert any_row["end_skew_ns"] == pytest.approx(c["skew in end time"] * 1000, abs=2)
        earliest = [rank for rank, r in ranks.items() if r["arrived_first"]]
        assert c["earliest arrival rank"] in earliest


@pytest.mark.parametrize("which", ["dlrm", "generated"])
def test_the_straggler_summary_equals_tracelens(which, request):
    """Per rank: waits equal; arrivals equal where no two ranks tie. TraceLens counts a tie for
    one rank (last: the lowest tied, first: the highest), tracewh for each tied rank, and
    TraceLens divides by every collective of the job (num_collectives, also those of process
    groups the rank is not in), tracewh by the rank's own collectives."""
    con, peer = request.getfixturevalue(which)
    ours = {r["rank"]: r for r in query(con, "straggler", align_clocks="false")}
    everything = peer["collectives"]
    for s in peer["straggler"]:
        rank, r = s["rank"], ours[s["rank"]]
        mine = [c["wait_time"] for c in everything if str(rank) in c["wait_time"]]
        assert s["num_collectives"] == len(everything) and r["collectives"] == len(mine)
        assert r["total_wait_ns"] == pytest.approx(s["total_wait_time_us"] * 1000,
                                                   abs=2 * len(mine) + 50)
        assert r["mean_wait_ns"] == pytest.approx(s["mean_wait_time_us"] * 1000, abs=50)
        last = [w for w in mine if w[str(rank)] == min(w.values())]
        first = [w for w in mine if w[str(rank)] == max(w.values())]
        assert s["times_arrived_last"] == sum(
            min(int(k) for k, v in w.items() if v == min(w.values())) == rank for w in last)
        assert s["times_arrived_first"] == sum(
            max(int(k) for k, v in w.items() if v == max(w.values())) == rank for w in first)
        assert r["arrived_last_pct"] == pytest.approx(len(last) * 100 / len(mine))
        assert r["arrived_first_pct"] == pytest.approx(len(first) * 100 / len(mine))
        assert s["pct_arrived_last"] == round(s["times_arrived_last"] * 100 / len(everything), 1)
    assert len(ours) == len(peer["straggler"])
    ties = [w for w in (c["wait_time"] for c in everything)
            if list(w.values()).count(max(w.values())) > 1
            or list(w.values()).count(min(w.values())) > 1]
    assert len(ties) == (2 if which == "dlrm" else 0)  # where the two rules part


def test_aligned_clocks_differ_from_tracelens_by_the_offsets_only(dlrm):
    """tracewh's default: the DLRM ranks name no host, so each gets an offset; each wait moves
    by the difference of two ranks' offsets, never more."""
    con, _ = dlrm
    offsets = dict(con.execute("SELECT rank, offset_ns FROM clock_offsets").fetchall())
    raw = {(r["op_key"], r["rank"]): r for r in query(con, "straggler_ops", align_clocks="false")}
    spread = max(offsets.values()) - min(offsets.values())
    assert 0 < spread <= 1_500
    moved = 0
    for r in query(con, "straggler_ops"):
        diff = r["wait_ns"] - raw[r["op_key"], r["rank"]]["wait_ns"]
        assert abs(diff) <= spread
        moved += diff != 0
    assert moved > 0


@pytest.mark.parametrize("which", ["dlrm", "generated"])
def test_bandwidths_equal_tracelens_in_its_units(which, request):
    con, peer = request.getfixturevalue(which)
    pairs = paired(con, peer, align_clocks="false")
    rates = {r["op_key"]: r for r in query(con, "collective_bandwidth", binary_units="true")}
    gb = {r["op_key"]: r for r in query(con, "collective_bandwidth")}
    sized = 0
    for c, ranks in pairs:
        key = next(iter(ranks.values()))["op_key"]
        r = rates[key]
        assert r["t_ns"] == pytest.approx(c["comm_latency"] * 1000, abs=2)  # the shortest duration
        if c["algo bw (GB/s)"] is None:
            assert r["algbw_gbps"] is None and r["full_bytes"] is None
            continue
        sized += 1
        assert r["full_bytes"] == round(c["Full msg size (MB)"] * 2**20)
        assert r["algbw_gbps"] == pytest.approx(c["algo bw (GB/s)"], rel=1e-6)
        assert r["busbw_gbps"] == pytest.approx(c["bus bw (GB/s)"], rel=1e-6)
        assert gb[key]["algbw_gbps"] == pytest.approx(r["algbw_gbps"] * 1.073741824, rel=1e-12)
    assert sized == (0 if which == "dlrm" else len(pairs))


def test_no_shared_trace_records_all_to_allv_splits():
    """TraceLens' nccl_all2allv sheets need all_to_allv with split sizes; no shared trace has
    them, the generated dropless MoE job does."""
    assert PEER["dlrm"]["all2allv"] == PEER["generated"]["all2allv"] == []
    assert PEER["moe_dropless"]["all2allv"] == ["nccl_all2allv", "nccl_all2allv_heatmap",
                                                "nccl_summary_all2allv"]


@pytest.fixture(scope="module")
def moe_dropless(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tl_moe_dropless")
    kind, *args = PEER["moe_dropless_args"]
    result = CliRunner().invoke(app, ["generate", kind, str(folder / "job"), *args])
    assert result.exit_code == 0, result.stderr
    con = warehouse(folder, folder / "job")
    yield con, PEER["moe_dropless"]
    con.close()


def test_all2allv_collectives_equal_tracelens(moe_dropless):
    """Each all_to_allv of TraceLens' nccl_all2allv sheet (collective_id "<group>_<n>": the n-th
    of the group, from 0) is tracewh's collective of Seq n + 1: the same splits on every rank,
    TraceLens' total data communicated (its MB: 2^20 bytes) is what the ranks sent, and its
    size_imbalance (max / mean of the ranks' In msg size) is send_imbalance."""
    con, peer = moe_dropless
    rows = query(con, "alltoall_pairs")
    splits = {(op_key, rank): (sent, received) for op_key, rank, sent, received in con.execute(
        "SELECT op_key, rank, in_splits, out_splits FROM nccl_ops WHERE in_splits IS NOT NULL"
    ).fetchall()}
    assert len(peer["all2allv_collectives"]) == len({r["op_key"] for r in rows}) == 48
    for c in peer["all2allv_collectives"]:
        group, n = c["collective_id"].rsplit("_", 1)
        ours = [r for r in rows if r["op_key"] == f"pg {group} [0, 1, 2, 3] seq {int(n) + 1}"]
        assert len(ours) == 16
        for rank, text in c["In split size"].items():
            sent, received = splits[ours[0]["op_key"], int(rank)]
            assert json.loads(text) == sent
            assert json.loads(c["Out split size"][rank]) == received
        sent = {r["src_rank"]: r["src_sent_bytes"] for r in ours}
        assert sum(sent.values()) == c["total data communicated (MB)"] * 2**20
        assert {str(k): v // 2 for k, v in sent.items()} == c["In msg nelems"]  # bf16
        assert ours[0]["send_imbalance"] == pytest.approx(c["size_imbalance"], rel=1e-12)


def test_all2allv_heatmap_equals_tracelens_in_its_units(moe_dropless):
    """TraceLens' heatmap reads each split size as one element; PyTorch's are dim-0 rows (here
    a token's 1024-element hidden state): split_unit=element reproduces it, the default counts
    the rows' elements, MOE_HIDDEN times more."""
    con, peer = moe_dropless
    theirs = {(h["src_rank"], h["dst_rank"]): h for h in peer["all2allv_heatmap"]}
    ours = {(r["src_rank"], r["dst_rank"]): r
            for r in query(con, "alltoall_pairs", per="pair", split_unit="element")}
    rows = {(r["src_rank"], r["dst_rank"]): r for r in query(con, "alltoall_pairs", per="pair")}
    assert sorted(ours) == sorted(theirs) and len(ours) == 16
    for pair, h in theirs.items():
        assert ours[pair]["bytes"] == h["total_sent_MB"] * 2**20
        assert ours[pair]["avg_bytes"] == pytest.approx(h["avg_sent_MB"] * 2**20, rel=1e-12)
        assert ours[pair]["collectives"] == h["count"] == 48
        assert rows[pair]["bytes"] == ours[pair]["bytes"] * MOE_HIDDEN
