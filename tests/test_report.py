"""tracewh report: the HTML page and figure files, on the sample warehouse and the real DLRM set,
and the page opened in headless Chromium (figures load, no console errors, a screenshot)."""

from __future__ import annotations

import base64
import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.metrics import MetricError, find_metric, run_metric
from tracewh.session import Session

REPO = Path(__file__).resolve().parents[1]
SAMPLE_TRACES = REPO / "sample_db" / "traces"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
runner = CliRunner()

SAMPLE_DRAWN = {
    "breakdown_ranks_ddp_4ranks", "breakdown_ranks_fsdp_4ranks_kineto", "breakdown_runs",
    "scaling", "overlap_ddp_4ranks", "overlap_fsdp_4ranks_kineto", "bandwidth_fsdp_4ranks_kineto",
    "straggler_ddp_4ranks", "straggler_fsdp_4ranks_kineto", "iteration_time_ddp_4ranks",
    "iteration_time_fsdp_4ranks_kineto", "phases_ddp_4ranks", "phases_fsdp_4ranks_kineto",
    "roofline_fsdp_4ranks_kineto", "tflops_runs", "host_ddp_4ranks", "host_fsdp_4ranks_kineto",
    "critpath_ddp_4ranks", "critpath_fsdp_4ranks_kineto",
    "links_fsdp_4ranks_kineto", "comm_parts_ddp_4ranks", "comm_parts_fsdp_4ranks_kineto",
    "lateness_ddp_4ranks", "lateness_fsdp_4ranks_kineto",
}
# the nsys sample has no message sizes; nothing samples memory beside either run; neither
# sampled the hardware's counters
SAMPLE_LEFT_OUT = {"bandwidth_ddp_4ranks": "NULL", "links_ddp_4ranks": "full_bytes is NULL",
                   "memory_ddp_4ranks": "no samples",
                   "memory_fsdp_4ranks_kineto": "no samples",
                   **{f"memory_{figure}_{run}": reason for run in ("ddp_4ranks", "fsdp_4ranks_kineto")
                      for figure, reason in (("timeline", "no allocator events"),
                                             ("free", "no free-memory measure"))},
                   "roofline_ddp_4ranks": "no kernel launched by an op with a model",
                   **{f"counters_{run}": "no hardware counters in this run"
                      for run in ("ddp_4ranks", "fsdp_4ranks_kineto")}}
FIGURE_METRIC = {"breakdown_ranks": "temporal_breakdown", "breakdown_runs": "scaling",
                 "scaling": "scaling", "overlap": "comm_comp_overlap",
                 "bandwidth": "collective_bandwidth", "straggler": "straggler",
                 "iteration_time": "iteration_time", "phases": "nvtx_phases",
                 "memory": "memory_by_phase", "memory_timeline": "memory_timeline",
                 "memory_free": "memory_by_phase", "traffic": "traffic_distribution",
                 "roofline": "roofline", "tflops_runs": "scaling", "host": "host_breakdown",
                 "critpath": "critical_path",
                 "links": "link_efficiency", "comm_parts": "comm_breakdown",
                 "lateness": "straggler_cause", "counters": "gpu_utilization"}


def cli(*args: str):
    result = runner.invoke(app, list(args))
    return result


def ingest(db: Path, *paths: Path | str, extra: tuple[str, ...] = ()):
    result = cli("ingest", *map(str, paths), "--db", str(db), "--quiet", *extra)
    assert result.exit_code == 0, result.output
    return result


def report(db: Path, out: Path, *args: str):
    result = cli("report", "--db", str(db), "--out", str(out), *args)
    assert result.exit_code == 0, result.output
    return result


def figures(out: Path) -> dict[str, str]:
    """figure id -> its HTML, from index.html."""
    page = (out / "index.html").read_text()
    return dict(re.findall(r'<figure[^>]* id="([^"]+)">(.*?)</figure>', page, re.S))


def assert_size(path: Path, size: tuple[float, float], dpi: int) -> None:
    width, height = size
    if path.suffix == ".png":
        assert Image.open(path).size == (round(width * dpi), round(height * dpi)), path
    elif path.suffix == ".svg":
        head = path.read_text()[:2000]
        match = re.search(r'<svg[^>]*\bwidth="([\d.]+)pt" height="([\d.]+)pt"', head)
        assert match and (float(match[1]), float(match[2])) == (width * 72, height * 72), path
    elif path.suffix == ".eps":
        head = path.read_text(errors="replace")[:2000]
        assert f"%%BoundingBox: 0 0 {round(width * 72)} {round(height * 72)}" in head, path
    else:
        raise AssertionError(path)


# --- the sample warehouse -------------------------------------------------------------------

@pytest.fixture(scope="module")
def sample_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("sample") / "wh.duckdb"
    ingest(db, SAMPLE_TRACES)
    return db


@pytest.fixture(scope="module")
def sample_report(sample_db, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "out"
    result = report(sample_db, out, "--size", "5x3", "--formats", "png,svg,eps", "--dpi", "100")
    assert f"wrote {out / 'index.html'}" in result.stderr
    return out


def test_sample_report_writes_every_figure_as_asked(sample_report):
    items = figures(sample_report)
    drawn = {key for key, body in items.items() if "<img" in body}
    assert drawn == SAMPLE_DRAWN
    for key in SAMPLE_DRAWN:
        for fmt in ("png", "svg", "eps"):
            path = sample_report / f"{key}.{fmt}"
            assert path.stat().st_size > 1000, path
            assert_size(path, (5, 3), 100)
            assert f'href="{key}.{fmt}"' in items[key]
    written = {p.stem for p in sample_report.iterdir() if p.suffix in (".png", ".svg", ".eps")}
    assert written == SAMPLE_DRAWN


def test_sample_report_leaves_out_empty_figures_with_a_reason(sample_report):
    items = figures(sample_report)
    for key, reason in SAMPLE_LEFT_OUT.items():
        assert "left out" in items[key] and reason in items[key], items[key]
        assert not list(sample_report.glob(f"{key}.*"))
    page = (sample_report / "index.html").read_text()
    assert "could not draw" not in page


def test_sample_report_puts_the_findings_first(sample_report):
    """Issue 38 item 8: the first thing on the page is a figure; the runs come after the
    figures, their ranks and sources folded; what was left out is folded at the end."""
    page = (sample_report / "index.html").read_text()
    body = page[page.index("<main>"):]
    first_figure = body.index("<img")
    assert first_figure < body.index('id="runs"') < body.index('id="left-out"')
    assert "<details><summary>Ranks (8)</summary>" in body  # folded, not open
    assert "<details><summary>Sources (8)</summary>" in body
    folded = body[body.index('id="left-out"'):]
    assert folded.startswith('id="left-out"><h2>Left out</h2><details><summary>'
                             f"{len(SAMPLE_LEFT_OUT)} figure(s) left out")
    assert folded.count('class="left-out"') == len(SAMPLE_LEFT_OUT)
    assert body.count('class="left-out"') == len(SAMPLE_LEFT_OUT)  # nowhere else
    assert "Left out:" not in body and 'id="warnings"' not in body  # the sample's sources are clean


def test_sample_report_names_each_figure_metric_and_lists_the_warehouse(sample_report,
                                                                        sample_db):
    items = figures(sample_report)
    for key, body in items.items():
        stem = next(s for s in sorted(FIGURE_METRIC, key=len, reverse=True) if key.startswith(s))
        metric = find_metric(FIGURE_METRIC[stem])
        if "left out" not in body:
            assert f"metric: {metric.name} v{metric.version}" in body, key
    page = (sample_report / "index.html").read_text()
    for text in ("ddp_4ranks", "fsdp_4ranks_kineto", "rank0.sqlite",
                 "node0_24647.1792963102002010932.pt.trace.json.gz", "nsys-sqlite",
                 "kineto-json", "rank from", "<h2>Left out</h2>", "<h2>Runs</h2>"):
        assert text in page, text
    # the scaling figure's caption is the bottleneck sentence of the scaling metric
    con = tracewh.connect(sample_db, read_only=True)
    try:
        sentences = run_metric(con, find_metric("scaling")).column("sentence").to_pylist()
    finally:
        con.close()
    for sentence in sentences:
        assert html.escape(sentence) in items["scaling"]


def test_sample_report_is_self_contained(sample_report):
    page = (sample_report / "index.html").read_text()
    assert "<script" not in page and "<link" not in page and "@import" not in page
    images = re.findall(r'<img[^>]* src="([^"]+)"', page)
    assert len(images) == len(SAMPLE_DRAWN)
    for src in images:
        assert src.startswith("data:image/svg+xml;base64,")
        assert base64.b64decode(src.split(",", 1)[1]).lstrip().startswith(b"<?xml")
    without_data = re.sub(r'src="data:[^"]*"', "", page)
    assert "http:" not in without_data and "https:" not in without_data
    for href in re.findall(r'href="([^"#][^"]*)"', without_data):  # links: the figure files
        assert (sample_report / href).is_file(), href


def test_memory_by_phase_figure_from_samples(sample_db, tmp_path):
    from tracewh import report as rep
    from tracewh.report import draw, figures_memory, figures_steps, model

    db = tmp_path / "with_series.duckdb"
    shutil.copy(sample_db, db)
    # free memory of rank 0's GPU (node0, GPU 0), every 0.5 ms over the ddp_4ranks job
    start = 1_767_225_600_420_000_000
    lines = ["time_ns,host,gpu,memory.free [MiB]"]
    lines += [f"{start + i * 500_000},node0,0,{60000 - (i % 20) * 100}" for i in range(140)]
    series = tmp_path / "gpu.csv"
    series.write_text("\n".join(lines) + "\n")
    ingest(db, extra=("--series", str(series), "--run", "ddp_4ranks"))
    con = tracewh.connect(db, read_only=True)
    try:
        ctx = model._Context(model._Metrics(Session.over(con)), rep.Options((4, 2.5), ("png", "svg"), 80),
                           ["ddp_4ranks"])
        item = rep.Item("memory_ddp_4ranks", "memory", "8")
        fig = figures_memory.fig_memory(ctx, item, "ddp_4ranks")
        draw._save(fig, item, tmp_path, ctx.options)
        with pytest.raises(rep.Skip, match="no samples"):  # no series beside the other run
            figures_memory.fig_memory(ctx, rep.Item("m", "m", "8"), "fsdp_4ranks_kineto")
    finally:
        con.close()
    assert [u.name for u in item.uses] == ["memory_by_phase"]
    assert fig.axes[0].get_ylabel() == "memory.free [MiB]"
    assert_size(item.files["png"], (4, 2.5), 80)
    assert_size(item.files["svg"], (4, 2.5), 80)
    # no allocator events: the timeline shows the sampled series per phase, the bars its least
    con = tracewh.connect(db, read_only=True)
    try:
        ctx.metrics = model._Metrics(Session.over(con))
        rows = [r for r in run_metric(con, find_metric("memory_by_phase"), {"run": "ddp_4ranks"})
                .to_pylist() if r["min_value"] is not None]
        timeline = rep.Item("memory_timeline_ddp_4ranks", "t", "8")
        fig = figures_memory.fig_memory_timeline(ctx, timeline, "ddp_4ranks")
        assert "sampled series" in fig.axes[0].get_title() and len(fig.axes) == 1  # rank 0 only
        free = rep.Item("memory_free_ddp_4ranks", "f", "8")
        fig = figures_memory.fig_memory_free(ctx, free, "ddp_4ranks")
        last = max(r["iteration"] for r in rows)
        bars = [r for r in rows if r["iteration"] == last]
        assert [p.get_width() for p in fig.axes[0].patches] == [r["min_value"] for r in bars]
        assert fig.axes[0].get_xlabel().startswith("memory.free [MiB] (samples)")
    finally:
        con.close()


def test_memory_figures_from_allocator_events(tmp_path):
    """A generated nsys export with CUDA memory usage rows: the timeline draws each rank's
    allocated total, marks every step's peak where memory_peaks puts it, and the free-memory
    bars are memory_by_phase's least free memory in the last step's phases."""
    from tracewh import report as rep
    from tracewh.report import draw, figures_memory, figures_steps, model
    from tracewh.generate.nsys import JobSpec, generate_job
    from tracewh.ingest import ingest_paths

    truth = generate_job(tmp_path / "t", JobSpec(world_size=2, iterations=2, memory_usage=True))
    con = tracewh.connect(tmp_path / "wh.duckdb")
    try:
        assert {r.status for r in ingest_paths(con, truth.files, run="mem")} == {"ingested"}
        ctx = model._Context(model._Metrics(Session.over(con)), rep.Options((5, 3), ("png",), 60), ["mem"])
        item = rep.Item("memory_timeline_mem", "t", "8")
        fig = figures_memory.fig_memory_timeline(ctx, item, "mem")
        draw._save(fig, item, tmp_path, ctx.options)
        peaks = [r for r in run_metric(con, find_metric("memory_peaks"), {"run": "mem"})
                 .to_pylist() if r["device_type"] == "GPU" and r["iteration"] is not None]
        free = [r for r in run_metric(con, find_metric("memory_by_phase"), {"run": "mem"})
                .to_pylist() if r["iteration"] == 2]
        bars = rep.Item("memory_free_mem", "f", "8")
        fig_bars = figures_memory.fig_memory_free(ctx, bars, "mem")
    finally:
        con.close()
    assert [u.name for u in item.uses] == ["memory_timeline", "memory_by_phase", "memory_peaks"]
    assert len(fig.axes) == 2 and [ax.get_ylabel() for ax in fig.axes] == ["rank 0", "rank 1"]
    for rank, ax in enumerate(fig.axes):
        line = next(l for l in ax.get_lines() if l.get_label() == "allocated")
        mine = [r for r in peaks if r["rank"] == rank]
        assert max(line.get_ydata()) == max(r["peak_allocated"] for r in mine) == 80 << 20
        marks = ax.collections[-1].get_offsets()
        assert sorted(marks[:, 1]) == sorted(r["peak_allocated"] for r in mine)
        assert len([p for p in ax.patches]) == 6  # forward, backward, optimizer x 2 steps
    assert_size(item.files["png"], (5, 3), 60)
    assert [p.get_width() for p in fig_bars.axes[0].patches] == [r["min_value"] for r in free]
    assert {r["measure"] for r in free} == {"free [B]"} and len(free) == 6


def test_report_refuses_bad_options_in_one_line(sample_db, tmp_path):
    out = str(tmp_path / "out")
    for args, message in ((("--size", "5by3"), "--size"), (("--formats", "png,pdf"), "--formats"),
                          (("--run", "no_such_run"), "no run 'no_such_run'"),
                          (("--second-axis", "flops"), "--second-axis")):
        result = cli("report", "--db", str(sample_db), "--out", out, *args)
        assert result.exit_code == 1 and message in result.stderr, result.output
        assert "Traceback" not in result.output


def test_report_of_an_empty_warehouse_says_so(tmp_path):
    db = tmp_path / "empty.duckdb"
    tracewh.connect(db).close()
    report(db, tmp_path / "out")
    assert "holds no runs" in (tmp_path / "out" / "index.html").read_text()


# --- figures from given metric rows (no warehouse) ------------------------------------------

class FakeMetrics:
    """Stands in for the metric runner: rows per metric name; a missing name raises."""

    def __init__(self, rows: dict[str, list[dict]]):
        self.rows = rows

    def run(self, name, **params):
        from tracewh.report import MetricUse

        if name not in self.rows:
            raise MetricError(f"unknown metric {name!r}")
        return self.rows[name], MetricUse(name, 1, params)


def test_phase_figure_second_axis_and_missing_metric(tmp_path):
    from tracewh import report as rep
    from tracewh.report import draw, figures_memory, figures_steps, model

    phases = [{"run_id": "r", "rank": 0, "iteration": i, "phase": p, "total_ns": n,
               "iteration_ns": 10_000_000} for i in (1, 2) for p, n in
              (("forward", 3_000_000), ("backward", 5_000_000), ("optimizer", 1_000_000))]
    throughput = [{"run_id": "r", "tokens_per_s": 123456.0, "samples_per_s": 60.3, "reason": None}]
    ctx = model._Context(FakeMetrics({"nvtx_phases": phases, "throughput": throughput}),
                       rep.Options(formats=("png",), dpi=50), ["r"])
    item = rep.Item("phases_r", "phases", "7")
    fig = figures_steps.fig_phases(ctx, item, "r")
    assert len(fig.axes) == 2 and fig.axes[1].get_ylabel() == "tokens/s"
    assert [u.name for u in item.uses] == ["nvtx_phases", "throughput"]
    draw._save(fig, item, tmp_path, ctx.options)
    assert_size(item.files["png"], rep.DEFAULT_SIZE, 50)

    ctx.options.second_axis = "none"
    assert len(figures_steps.fig_phases(ctx, rep.Item("p", "p", "7"), "r").axes) == 1
    with pytest.raises(rep.Skip, match="no samples .metric memory_by_phase unavailable"):
        figures_memory.fig_memory(ctx, rep.Item("m", "m", "8"), "r")  # the metric file is missing


def test_the_line_option_styles_every_second_axis_line():
    """--line: the TFLOP/s of a log series, of each run and the tokens/s of a run are drawn
    in the style and color asked for (dotted red unless asked)."""
    from matplotlib.colors import to_rgba

    from tracewh import report as rep
    from tracewh.report import figures_steps, model

    configs = [("1", "100M", 10.0), ("2", "1G", 14.0)]
    logs = [{"position": i, "varied": "subgroup", "value": value, "run_id": run, "timer": timer,
             "median_ms": ms, "tflops": tflops}
            for i, (run, value, tflops) in enumerate(configs)
            for timer, ms in (("fwd", 3.0), ("bwd", 5.0), ("step", 1.0))]
    phases = [{"run_id": "1", "rank": 0, "iteration": 1, "phase": "forward", "total_ns": 3_000,
               "iteration_ns": 10_000}]
    throughput = [{"run_id": "1", "tokens_per_s": 100.0, "samples_per_s": None, "reason": None}]
    metrics = FakeMetrics({"log_phases": logs, "nvtx_phases": phases, "throughput": throughput})
    for given, style, color in (("", ":", "tab:red"), ("dashed,black", "--", "black"),
                                ("#882255", ":", "#882255"), ("solid", "-", "tab:red")):
        ctx = model._Context(metrics, rep.Options(formats=("png",), dpi=50,
                                                  line=rep.parse_line(given)), ["1", "2"])
        series = figures_steps.fig_log_phases_series(ctx, rep.Item("l", "l", "7"), "s")
        (tflops,) = series.axes[1].lines
        assert list(tflops.get_xdata()) == [10.0, 14.0]
        run = figures_steps.fig_phases(ctx, rep.Item("p", "p", "7"), "1")
        (tokens,) = run.axes[1].lines
        for line in (tflops, tokens):
            assert (line.get_linestyle(), to_rgba(line.get_color())) == (style, to_rgba(color))
    for wrong in ("wavy", "dotted,nocolor"):
        with pytest.raises(rep.ReportError, match="neither a style .solid, dashed, dotted, "
                                                  "dashdot. nor a color"):
            rep.parse_line(wrong)
    result = CliRunner().invoke(app, ["report", "--out", "x", "--line", "wavy"])
    assert result.exit_code == 1 and "--line 'wavy': 'wavy' is neither a style" in result.stderr


# --- the real 8-rank DLRM traces ------------------------------------------------------------

def test_report_on_real_dlrm_traces(shared_data, tmp_path):
    traces = shared_data / "kineto" / "param" / "dlrm_kineto"
    if not traces.is_dir():
        pytest.skip(f"{traces} not available")
    db = tmp_path / "dlrm.duckdb"
    ingest(db, traces)
    out = tmp_path / "out"
    report(db, out, "--run", "dlrm_kineto", "--size", "4x2.5", "--formats", "png,svg",
           "--dpi", "80")
    items = figures(out)
    drawn = {key for key, body in items.items() if "<img" in body}
    for stem in ("breakdown_ranks", "overlap", "straggler", "iteration_time", "phases"):
        assert any(k.startswith(stem + "_") for k in drawn), stem
    assert {"breakdown_runs", "scaling"} <= drawn
    for key in drawn:
        for fmt in ("png", "svg"):
            assert_size(out / f"{key}.{fmt}", (4, 2.5), 80)
        assert not (out / f"{key}.eps").exists()
    # Kineto traces of 2023 carry no message sizes: the bandwidth figure says why it is absent
    bandwidth = next(body for key, body in items.items() if key.startswith("bandwidth_"))
    assert "left out" in bandwidth and "full_bytes is NULL" in bandwidth
    straggler = next(body for key, body in items.items() if key.startswith("straggler_"))
    assert "Straggler: rank" in straggler and "metric: straggler v" in straggler


# --- in a browser ---------------------------------------------------------------------------

PROBE = """<script>
window.addEventListener("load", function () {
  var images = Array.prototype.slice.call(document.images).map(function (i) {
    return {id: i.closest("figure") ? i.closest("figure").id : "", complete: i.complete,
            width: i.naturalWidth, height: i.naturalHeight,
            shown: i.getBoundingClientRect().width};
  });
  document.body.setAttribute("data-probe", JSON.stringify(
    {images: images, svgs: document.querySelectorAll("svg").length}));
});
</script>"""
CONSOLE = re.compile(r"Uncaught|ERROR:CONSOLE|:CONSOLE[:(]|Failed to load resource|net::ERR_")


def chromium(page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--no-first-run", f"--user-data-dir={profile}", "--enable-logging=stderr",
               "--v=0", "--host-resolver-rules=MAP * ~NOTFOUND",  # any network use would fail
               *extra, page.resolve().as_uri()]
    return subprocess.run(command, capture_output=True, text=True, timeout=90)


def console_problems(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if CONSOLE.search(line)]


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed "
                    "(Debian: apt-get install chromium); .ci/run installs it")
def test_report_opens_in_headless_chromium(sample_report, tmp_path):
    # the console scan works: a page with an error and a missing image is caught
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><img src="https://example.invalid/x.png">'
                   "<script>undefined_function()</script>")
    caught = chromium(bad, tmp_path / "profile0", "--dump-dom")
    assert console_problems(caught.stderr), caught.stderr[-2000:]

    # every figure of the page loads and has a size; nothing goes to the console
    probe = sample_report / "probe.html"
    probe.write_text((sample_report / "index.html").read_text().replace("</body>",
                                                                         PROBE + "</body>"))
    try:
        dumped = chromium(probe, tmp_path / "profile1", "--dump-dom")
    finally:
        probe.unlink()
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    match = re.search(r'data-probe="([^"]*)"', dumped.stdout)
    assert match, "the probe script did not run:\n" + dumped.stderr[-2000:]
    result = json.loads(html.unescape(match[1]))
    assert {i["id"] for i in result["images"]} == SAMPLE_DRAWN
    for image in result["images"]:
        assert image["complete"] and image["width"] > 0 and image["height"] > 0, image
        assert image["shown"] > 200, image  # laid out at a readable width
    assert console_problems(dumped.stderr) == []

    # and a screenshot of the top of the page, for a human to look at
    shot = tmp_path / "report.png"
    taken = chromium(sample_report / "index.html", tmp_path / "profile2",
                     f"--screenshot={shot}", "--window-size=1280,2400", "--hide-scrollbars")
    assert taken.returncode == 0 and shot.is_file(), taken.stderr[-2000:]
    assert console_problems(taken.stderr) == []
    image = Image.open(shot).convert("RGB")
    assert image.size == (1280, 2400)
    assert len(image.getcolors(maxcolors=1 << 20) or []) > 50  # figures drawn, not a blank page
    print(f"screenshot: {shot}")
