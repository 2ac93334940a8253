"""link_efficiency (issue 36, item 2): each process group's bus bandwidth against the peak of
its bottleneck link, intra-node or across hosts, from link_peaks() / gpu_links().

The generated 2-node job (4 ranks, 2 per host) moves the bytes of its groups that span hosts
4x slower than those inside a host (KinetoJobSpec.inter_node_gbps); its answers are recomputed
here from the generator's truth (each collective's kernels on every rank), never from the
warehouse. Then the workload card and the parameters that name a link, and the real DLRM trace.
"""

from __future__ import annotations

import statistics

import pytest

import tracewh
from tracewh.generate.kineto import LINK_BYTES_PER_NS, KinetoJobSpec, generate_kineto_job
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric

SLOW = LINK_BYTES_PER_NS / 4  # the generator's inter-node wire rate, GB/s


def rows(con, metric, **params):
    return run_metric(con, find_metric(metric), {k: str(v) for k, v in params.items()}).to_pylist()


def ingest(con, path):
    results = ingest_paths(con, [path])
    assert {r.status for r in results} == {"ingested"}, [r.message for r in results]


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory):
    out = tmp_path_factory.mktemp("links")
    truth = generate_kineto_job(out / "job" / "traces", KinetoJobSpec(
        world_size=4, gpus_per_node=2, subgroup_size=2, iterations=4, inter_node_gbps=SLOW))
    con = tracewh.connect(out / "wh.duckdb")
    ingest(con, out / "job" / "traces")
    yield con, truth, out
    con.close()


def truth_busbw(truth, pg_name):
    """Median bus bandwidth of the group's collectives, from the generator's kernels: per
    collective the shortest duration over its ranks, nccl-tests' bus factor."""
    per_seq = {}
    for ops in truth.nccl_ops.values():
        for op in ops:
            if op.pg_name == pg_name:
                per_seq.setdefault(op.seq, []).append(op)
    busbw = []
    for ops in per_seq.values():
        n, t = ops[0].group_size, min(o.end_ns - o.start_ns for o in ops)
        factor = 2 * (n - 1) / n if ops[0].collective == "AllReduce" else (n - 1) / n
        busbw.append(ops[0].bytes / t * factor)
    return statistics.median(busbw), len(busbw)


def test_inter_node_group_against_the_generators_link_peak(two_nodes):
    con, truth, _ = two_nodes
    assert truth.link_gbps == {"0": SLOW, "1": LINK_BYTES_PER_NS, "2": LINK_BYTES_PER_NS}
    got = {r["pg_name"]: r for r in rows(con, "link_efficiency", inter_node_link=SLOW)}
    assert set(got) == {"0", "1", "2"}
    world = got["0"]
    assert (world["collective"], world["scope"], world["hosts"], world["ranks"]) == \
        ("AllReduce", "inter-node", 2, "[0, 1, 2, 3]")
    want, count = truth_busbw(truth, "0")
    assert world["collectives"] == count == 4
    assert world["busbw_p50_gbps"] == pytest.approx(want, rel=1e-12)
    # the bottleneck is the network given (87.5 GB/s), not the B200s' NVLink 5 (900 GB/s)
    assert (world["link"], world["peak_gbps"], world["link_source"]) == \
        (f"{SLOW} GB/s (given)", SLOW, "parameter")
    assert world["efficiency_pct"] == pytest.approx(want / SLOW * 100, rel=1e-12)
    # the transfer runs at the peak; launch latency (8 us) and jitter (<= 5 %) cost the rest
    assert 85 < world["efficiency_pct"] < 100
    for pg in ("1", "2"):  # two ranks on one host each: NVLink 5 from the GPU model
        r = got[pg]
        assert (r["scope"], r["hosts"], r["link"], r["peak_gbps"], r["link_source"]) == \
            ("intra-node", 1, "NVLink 5", 900.0, "GPU model (B200)")
        want, _ = truth_busbw(truth, pg)
        assert r["busbw_p50_gbps"] == pytest.approx(want, rel=1e-12)
        assert r["efficiency_pct"] == pytest.approx(want / 900 * 100, rel=1e-12)
        assert r["reason"] is None
    # 4x slower on the wire: the inter-node busbw is well under the intra-node groups'
    assert world["busbw_p50_gbps"] < min(got[pg]["busbw_p50_gbps"] for pg in ("1", "2")) / 1.4


def test_unknown_inter_node_link_is_null_with_the_reason(two_nodes):
    con, _, _ = two_nodes
    world = next(r for r in rows(con, "link_efficiency") if r["pg_name"] == "0")
    assert world["busbw_p50_gbps"] is not None
    assert world["peak_gbps"] is None and world["efficiency_pct"] is None and world["link"] is None
    assert world["reason"].startswith("inter-node link unknown")
    named = next(r for r in rows(con, "link_efficiency", inter_node_link="Token Ring")
                 if r["pg_name"] == "0")
    assert named["peak_gbps"] is None
    assert named["reason"] == "link 'Token Ring' (parameter) is not in link_peaks (version 1)"


def test_links_named_in_the_workload_card(two_nodes, tmp_path):
    _, truth, out = two_nodes
    (out / "job" / "workload_card.yaml").write_text(
        "workload:\n  hardware:\n    interconnect:\n      intra_node: PCIe Gen4\n"
        "      inter_node: InfiniBand XDR\n")
    con = tracewh.connect(tmp_path / "card.duckdb")
    ingest(con, out / "job")
    got = {r["pg_name"]: r for r in rows(con, "link_efficiency")}
    assert (got["0"]["link"], got["0"]["peak_gbps"], got["0"]["link_source"]) == \
        ("PCIe Gen4 x16", 31.5, "workload card")  # the slower of the two links it crosses
    assert (got["1"]["link"], got["1"]["peak_gbps"]) == ("PCIe Gen4 x16", 31.5)
    # a parameter wins over the card
    got = {r["pg_name"]: r for r in rows(con, "link_efficiency", intra_node_link="NVLink 5")}
    assert (got["0"]["link"], got["0"]["peak_gbps"], got["0"]["link_source"]) == \
        ("InfiniBand XDR", 100.0, "workload card")
    assert got["0"]["peak_source"].startswith("InfiniBand Trade Association")
    assert (got["1"]["link"], got["1"]["link_source"]) == ("NVLink 5", "parameter")
    (out / "job" / "workload_card.yaml").unlink()


def test_link_tables_are_complete_and_sourced(con):
    peaks = con.execute("SELECT link, scope, gbps, source, table_version FROM link_peaks()").fetchall()
    assert len({p[0] for p in peaks}) == len(peaks)
    assert all(p[2] > 0 and p[3] and p[4] == 1 for p in peaks)
    kinds = {row[0] for row in con.execute("SELECT DISTINCT kind FROM link_peaks()").fetchall()}
    assert kinds == {"NVLink", "PCIe", "InfiniBand", "RoCE", "EFA"}
    # every GPU model's link is a row of link_peaks, inside a host
    orphans = con.execute("SELECT g.link FROM gpu_links() g LEFT JOIN link_peaks() p USING (link) "
                          "WHERE p.link IS NULL OR p.scope <> 'intra-node'").fetchall()
    assert orphans == []
    # per direction, from the datasheets' bidirectional figures and the line rates
    gbps = {p[0]: p[2] for p in peaks}
    assert (gbps["NVLink 4"], gbps["NVLink 5"], gbps["InfiniBand NDR"], gbps["PCIe Gen5 x16"]) == \
        (900 / 2, 1800 / 2, 400 / 8, 32 * 16 * 128 / 130 / 8 // 1)


def test_real_dlrm_without_hosts_or_sizes_says_why(shared_data, tmp_path):
    con = tracewh.connect(tmp_path / "dlrm.duckdb")
    ingest(con, shared_data / "kineto" / "param" / "dlrm_kineto")
    got = rows(con, "link_efficiency")
    # 2023 format: no host names, no NCCL sizes: no scope, no bandwidth, and the reason says so
    assert got and {r["scope"] for r in got} == {None}
    assert all(r["busbw_p50_gbps"] is None and "message size unknown" in r["reason"] for r in got)


def test_real_b200_rank_placed_by_the_cards_gpus_per_node(shared_data, tmp_path):
    """TraceLens' B200 trace: rank 0 of 8, no host name; the card's count_per_node puts the
    8 ranks of each process group on one host, and the GPU model names NVLink 5."""
    job = tmp_path / "b200"
    job.mkdir()
    (job / "eager_trace.json.gz").symlink_to(shared_data / "kineto" / "tracelens" / "b200" / "eager_trace.json.gz")
    (job / "card.yaml").write_text("workload:\n  hardware:\n    xpu_spec:\n      count_per_node: 8\n")
    con = tracewh.connect(tmp_path / "b200.duckdb")
    ingest(con, job)
    got = [r for r in rows(con, "link_efficiency") if r["busbw_p50_gbps"] is not None]
    assert got
    raw = con.execute("SELECT DISTINCT pg_ranks FROM nccl_ops WHERE pg_ranks IS NOT NULL").fetchall()
    assert all(max(eval(p)) < 8 for (p,) in raw)  # every group inside ranks 0-7: one host
    for r in got:
        assert (r["scope"], r["hosts"], r["host_source"], r["link"], r["peak_gbps"]) == \
            ("intra-node", 1, "gpus_per_node", "NVLink 5", 900.0)
        assert r["efficiency_pct"] == pytest.approx(r["busbw_p50_gbps"] / 9, rel=1e-12)
