"""Hardware counters of nsys exports (issue 34 item 3): GPU_METRICS and the NIC tables into the
gpu_metrics and nic_metrics views, and link_utilization over them.

No export in ../shared/data holds these tables (checked with sqlite3 .tables), so the generator
writes them (JobSpec.gpu_metrics, nic_metrics) in the layout of the 2026.4 SQLite Schema
Reference. Expected values come from the generator's truth and, independently, from the raw
SQLite tables read by hand here; link_utilization's answers are recomputed from the truth.
"""

from __future__ import annotations

import re
import sqlite3

import pytest

import tracewh
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import ingest_paths, nsys
from tracewh.metrics import find_metric, run_metric

NVLINK_4, PCIE_5, NDR = 450.0, 63.0, 50.0  # H100 SXM's links, GB/s per direction (link_peaks)


def rows(con, metric, **params):
    return run_metric(con, find_metric(metric), {k: str(v) for k, v in params.items()}).to_pylist()


def ingested(folder, db):
    con = tracewh.connect(db)
    results = ingest_paths(con, [folder])
    assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    return con


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    out = tmp_path_factory.mktemp("counters")
    spec = JobSpec(world_size=4, ranks_per_file=2, iterations=3, gpu_metrics=True, nic_metrics=True)
    truth = generate_job(out / "traces", spec)
    con = ingested(out / "traces", out / "wh.duckdb")
    yield con, truth, out
    con.close()


def view_samples(con):
    return sorted(con.execute("SELECT rank, ts_ns, metric, value FROM gpu_metrics").fetchall())


def truth_samples(truth):
    return sorted((rank, ts, name, float(v)) for rank, samples in truth.gpu_metrics.items()
                  for ts, name, v in samples)


def test_gpu_metrics_view_equals_the_generators_samples(job):
    con, truth, _ = job
    assert view_samples(con) == truth_samples(truth)
    hosts = dict(con.execute("SELECT DISTINCT rank, host FROM gpu_metrics").fetchall())
    assert hosts == {0: "node0", 1: "node0", 2: "node1", 3: "node1"}


def test_nic_metrics_view_equals_the_generators_intervals(job):
    con, truth, _ = job
    got = sorted(con.execute("SELECT host, start_ns, end_ns, metric, value FROM nic_metrics").fetchall())
    want = sorted((host, a, b, name, float(v)) for host, samples in truth.nic_metrics.items()
                  for a, b, name, v in samples)
    assert got == want and len(got) > 20
    assert set(con.execute("SELECT DISTINCT nic, link_layer, port, unit FROM nic_metrics").fetchall()) == {
        ("mlx5_0", "InfiniBand", 1, "bytes")}


def test_views_equal_the_raw_tables_read_by_hand(job):
    """Each raw GPU_METRICS row, named through TARGET_INFO_GPU_METRICS, its GPU the low byte of
    typeId, at utcEpochNs + timestamp; each NET_NIC_METRIC row through its name tables."""
    con, truth, _ = job
    want_gpu, want_nic = [], []
    for path in truth.files:
        raw = sqlite3.connect(path)
        (utc,) = raw.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()
        host = truth.hostnames[path]
        device_rank = {d: r for r, d in zip(truth.file_ranks[path], range(2))}
        for ts, type_id, name, value in raw.execute(
                "SELECT m.timestamp, m.typeId, n.metricName, m.value FROM GPU_METRICS m "
                "JOIN TARGET_INFO_GPU_METRICS n USING (typeId, metricId)"):
            want_gpu.append((device_rank[type_id & 0xFF], utc + ts, name, float(value)))
        for start, end, name, nic, value in raw.execute(
                "SELECT m.start, m.end, n.name, i.name, m.value FROM NET_NIC_METRIC m "
                "JOIN TARGET_INFO_NETWORK_METRICS n USING (metricsListId, metricsIdx) "
                "JOIN NIC_ID_MAP USING (globalId) JOIN TARGET_INFO_NIC_INFO i USING (nicId)"):
            want_nic.append((host, nic, utc + start, utc + end, name, float(value)))
        raw.close()
    assert view_samples(con) == sorted(want_gpu)
    assert sorted(con.execute("SELECT host, nic, start_ns, end_ns, metric, value FROM nic_metrics")
                  .fetchall()) == sorted(want_nic)


def test_normalised_export_and_the_big_file_path_give_the_same_rows(job, tmp_path, monkeypatch):
    con, truth, _ = job
    generate_job(tmp_path / "norm", JobSpec(world_size=4, ranks_per_file=2, iterations=3,
                                            gpu_metrics=True, nic_metrics=True, ts_normalize=True))
    monkeypatch.setattr(nsys, "SMALL_FILE_BYTES", 0)  # staged through temp tables, as big files are
    other = ingested(tmp_path / "norm", tmp_path / "norm.duckdb")
    assert view_samples(other) == view_samples(con)
    assert other.execute("SELECT count(*) FROM nic_metrics").fetchone() == \
        con.execute("SELECT count(*) FROM nic_metrics").fetchone()


def weighted(samples):
    """Time-weighted mean of (ts, value) samples: each value over the interval since the one before."""
    samples = sorted(samples)
    spans = [(b[0] - a[0], b[1]) for a, b in zip(samples, samples[1:])]
    return sum(d * v for d, v in spans) / sum(d for d, _ in spans)


def test_link_utilization_equals_the_truth(job):
    con, truth, _ = job
    got = {(r["host"], r["device"], r["counter"]): r for r in rows(con, "link_utilization",
                                                                   inter_node_link="InfiniBand NDR")}
    link_counters = [n for n in {name for s in truth.gpu_metrics.values() for _, name, _ in s}
                     if re.match(r"(NVLink|PCIe) ", n)]
    assert len(link_counters) == 4 and not any("Clock" in c or "SMs" in c for _, _, c in got)
    for rank, samples in truth.gpu_metrics.items():
        host, device = ("node0", "node1")[rank // 2], str(rank % 2)
        for counter in link_counters:
            mine = [(ts, v) for ts, name, v in samples if name == counter]
            r = got[(host, device, counter)]
            peak = NVLINK_4 if counter.startswith("NVLink") else PCIE_5
            assert (r["rank"], r["samples"], r["peak_gbps"]) == (rank, len(mine), peak)
            assert r["mean_pct"] == pytest.approx(weighted(mine), rel=1e-12)
            assert r["max_pct"] == max(v for _, v in mine)
            assert r["mean_gbps"] == pytest.approx(weighted(mine) / 100 * peak, rel=1e-12)
            assert r["direction"] == ("RX" if " RX " in counter else "TX") and r["reason"] is None
    for host, intervals in truth.nic_metrics.items():
        for counter in ("IB: Bytes sent", "IB: Bytes received"):
            mine = [(b - a, v) for a, b, name, v in intervals if name == counter]
            r = got[(host, "mlx5_0:1", counter)]
            mean = sum(v for _, v in mine) / sum(d for d, _ in mine)
            assert r["mean_gbps"] == pytest.approx(mean, rel=1e-12)
            assert r["max_gbps"] == pytest.approx(max(v / d for d, v in mine), rel=1e-12)
            assert (r["peak_link"], r["peak_gbps"], r["link"]) == ("InfiniBand NDR", NDR, "InfiniBand")
            assert r["mean_pct"] == pytest.approx(mean / NDR * 100, rel=1e-12)
    # one window: only the samples whose interval ends in it
    first = min(ts for ts, _, _ in truth.gpu_metrics[0])
    windowed = rows(con, "link_utilization", start_ns=first, end_ns=first + 250_000, rank=0)
    assert {r["samples"] for r in windowed if r["source"] == "GPU_METRICS"} == {3}
    assert {r["host"] for r in windowed} == {"node0"}


def test_unknown_network_leaves_the_nic_percentages_null(job):
    con, _, _ = job
    nic = [r for r in rows(con, "link_utilization") if r["source"] == "NET_NIC_METRIC"]
    assert nic and all(r["mean_gbps"] > 0 and r["mean_pct"] is None
                       and r["reason"].startswith("inter-node link unknown") for r in nic)


def test_gpu_utilization_shows_the_sm_active_counter_beside_busy_time(job):
    con, truth, _ = job
    got = rows(con, "gpu_utilization", rank=1, bins=7)
    samples = [(ts, v) for ts, name, v in truth.gpu_metrics[1] if name == "SMs Active [Throughput %]"]
    assert len(got) == 7
    for r in got:
        mine = [v for ts, v in samples if r["bin_start_ns"] <= ts < r["bin_end_ns"]]
        assert r["sm_active_pct"] == pytest.approx(sum(mine) / len(mine), rel=1e-12)
    # the counter follows the compute kernels: never above the bin's busy time
    assert all(r["sm_active_pct"] <= r["busy_pct"] + 100 * 100_000 / (r["bin_end_ns"] - r["bin_start_ns"])
               for r in got)


def test_the_report_draws_the_counters(job, tmp_path):
    """The report's 'Hardware counters' figure: per rank, busy time and the SMs Active counter
    as gpu_utilization gives them, and each link counter's mean and max GB/s and peak as
    link_utilization gives them; a run without counters leaves the figure out, saying why."""
    from tracewh.report import Item, Options, draw, figures_hardware, model
    from tracewh.session import Session

    con, _, _ = job
    (run,) = [r for (r,) in con.execute("SELECT DISTINCT run_id FROM ranks").fetchall()]
    ctx = model._Context(model._Metrics(Session.over(con)), Options((6, 5), ("png",), 60), [run])
    item = Item(f"counters_{run}", "t", "10")
    fig = figures_hardware.fig_counters(ctx, item, run)
    draw._save(fig, item, tmp_path, ctx.options)
    assert [u.name for u in item.uses] == ["gpu_utilization", "link_utilization"]
    top, bottom = fig.axes
    bins = rows(con, "gpu_utilization", run=run)
    for rank in range(4):
        mine = sorted((r for r in bins if r["rank"] == rank), key=lambda r: r["bin"])
        busy, sm = (next(l for l in top.get_lines() if l.get_label() == f"rank {rank} {what}")
                    for what in ("busy", "SMs active"))
        assert list(busy.get_ydata()) == [r["busy_pct"] for r in mine]
        assert list(sm.get_ydata()) == [r["sm_active_pct"] for r in mine]
        assert len(mine) == 30 and all(v is not None for v in sm.get_ydata())
    links = rows(con, "link_utilization", run=run)
    assert sorted(p.get_width() for p in bottom.patches) == sorted(r["mean_gbps"] for r in links)
    assert len(links) == 4 * 4 + 2 * 2  # NVLink and PCIe RX/TX per GPU, IB RX/TX per host
    peaks = bottom.collections[-1].get_offsets()[:, 0]
    assert sorted(peaks) == sorted(r["peak_gbps"] for r in links if r["peak_gbps"] is not None)
    assert any("inter-node link unknown" in note for note in item.notes)
    assert item.files["png"].stat().st_size > 1000


def test_the_report_leaves_the_counters_out_without_them(tmp_path):
    from tracewh.report import Item, Options, model
    from tracewh.report.figures_hardware import fig_counters
    from tracewh.report.model import Skip
    from tracewh.session import Session

    truth = generate_job(tmp_path / "t", JobSpec(world_size=2, iterations=1))
    con = ingested(tmp_path / "t", tmp_path / "wh.duckdb")
    try:
        ctx = model._Context(model._Metrics(Session.over(con)), Options(), ["t"])
        with pytest.raises(Skip, match="no hardware counters in this run"):
            fig_counters(ctx, Item("counters_t", "t", "10"), "t")
    finally:
        con.close()
    assert truth.files
