"""Training logs (tracewh ingest --log): DeepSpeed timer and memory lines, Megatron iteration
lines in both forms, a user pattern; run configuration from file names, ds_config.json,
Megatron arguments and --run-param; series; log_phases against a hand computation."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app

runner = CliRunner()
FIXTURES = Path(__file__).parent / "fixtures" / "logs"
TEMPLATE = ("log-{model_size}-tp{tp}-dp{dp}-l{layers}-h{hidden}-a{heads}-sl{seq_len}-gbs{global_batch}"
            "-mbs{micro_batch}-ratio{ratio}-subg{subgroup}-prefetch{prefetch}")


def ingest(db: Path, *args: str):
    return runner.invoke(app, ["ingest", "--quiet", "--db", str(db), *args])


def rows(db: Path, sql: str, params=None):
    con = tracewh.connect(db, read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def timers(db: Path, run: str) -> dict[tuple[int, str], float]:
    return {(step, timer): ms for step, timer, ms in
            rows(db, "SELECT step, timer, ms FROM log_timers WHERE run_id = ?", [run])}


def test_deepspeed_wall_clock_breakdown(db_path):
    """Timestamps, [Rank 0], interleaved lines, a line that does not parse, a cut last line."""
    result = ingest(db_path, "--log", str(FIXTURES / "deepspeed_wall_clock.log"))
    assert result.exit_code == 0, result.stderr
    got = timers(db_path, "deepspeed_wall_clock")
    fwd = {1: 2405.76, 2: 1857.14, 3: 1862.39, 4: 1850.02, 5: 1870.65}
    fwd_microstep = {1: 2405.77, 2: 1857.15, 3: 1862.40, 4: 1850.03, 5: 1870.66}
    assert {s: ms for (s, t), ms in got.items() if t == "fwd"} == fwd
    assert {s: ms for (s, t), ms in got.items() if t == "fwd_microstep"} == fwd_microstep
    assert got[2, "bwd_allreduce_microstep"] == 117.55 and got[2, "step"] == 7939.92
    assert got[5, "bwd_inner"] == 7600.10 and got[4, "step_microstep"] == 7931.18
    # 5 lines x 2 forms x 5 timers; the cut step-6 line and the N/A line are not stored
    assert len(got) == 50 and not [k for k in got if k[1].startswith("optimizer")]
    assert rows(db_path, "SELECT DISTINCT rank FROM log_timers") == [(0,)]
    assert rows(db_path, "SELECT ts_ns FROM log_timers WHERE step = 1 AND timer = 'fwd_microstep'") == [
        (1_711_662_309_862_000_000,)]  # 2024-03-28T21:45:09.862Z
    assert rows(db_path, "SELECT iteration, measure, mb FROM log_memory ORDER BY mb, measure") == [
        (1, "allocated", 18244.64), (1, "max_allocated", 41299.50), (1, "max_reserved", 46764.0),
        (1, "reserved", 46764.0)]
    (warnings,), = rows(db_path, "SELECT warnings FROM sources")
    assert "1 timer line(s) not parsed (line 15)" in warnings
    assert "last line (26) cut short" in warnings


def test_deepspeed_plain_lines_and_other_timers(db_path):
    assert ingest(db_path, "--log", str(FIXTURES / "deepspeed_offload_plain.log")).exit_code == 0
    got = timers(db_path, "deepspeed_offload_plain")
    assert got[1, "selective_optimizer_step"] == 1.48 and got[2, "selective_optimizer_step"] == 1.51
    assert got[2, "selective_optimizer_sync"] == 0.11 and got[1, "step"] == 3310.70
    assert got[2, "bwd_inner_microstep"] == 992.51 and len(got) == 26
    assert rows(db_path, "SELECT DISTINCT rank, ts_ns FROM log_timers") == [(None, None)]
    assert rows(db_path, "SELECT warnings FROM sources") == [(None,)]


def test_megatron_iteration_lines_and_arguments(db_path):
    assert ingest(db_path, "--log", str(FIXTURES / "megatron_lm.log")).exit_code == 0
    got = rows(db_path, "SELECT iteration, train_iterations, consumed_samples, consumed_tokens, "
                        "elapsed_ms, learning_rate, global_batch, lm_loss, loss_scale, "
                        "samples_per_second, tflops, fields['actual_seqlen'], "
                        "fields['number_of_skipped_iterations'] FROM log_iterations ORDER BY 1")
    assert got == [
        (1, 317892, 8, 16384, 17996.0, 3.0e-4, 8, 1.185162e1, 1.0, 0.445, 49.58, 2048.0, 0.0),
        (2, 317892, 16, 32768, 16042.7, 3.0e-4, 8, 1.150208e1, 1.0, 0.499, 55.62, 2048.0, 0.0),
        (3, 317892, 24, 49152, 16038.1, 3.0e-4, 8, 1.101936e1, 1.0, 0.499, 55.64, 2048.0, 0.0),
        (4, 317892, 32, 65536, 16051.9, 3.0e-4, 8, 1.067385e1, 1.0, 0.498, 55.59, 2048.0, 0.0),
    ]  # iteration 5 is cut short
    assert rows(db_path, "SELECT rank, iteration, mb FROM log_memory WHERE measure = 'allocated'") == [
        (0, 1, 18244.64)]
    # the arguments block Megatron prints fills the configuration
    config = rows(db_path, "SELECT tp, dp, pp, zero_stage, layers, hidden, heads, seq_len, "
                           "global_batch, micro_batch, config_sources['tp'] FROM runs")
    assert config == [(2, 4, 1, 1, 24, 2048, 16, 2048, 8, 1, "megatron-args")]


def test_primus_megatron_colour_rank_prefix_repeats_and_pairs(db_path):
    """A 2026 Primus/Megatron-Core log: ANSI colours, '[rank-7/8]', each line printed twice,
    `current/running average` pairs and a field of several sizes (fixtures/logs: three
    iterations written from the values asserted here)."""
    result = ingest(db_path, "--log", str(FIXTURES / "primus_megatron.log"))
    assert result.exit_code == 0, result.stderr
    got = rows(db_path, "SELECT rank, iteration, ts_ns, elapsed_ms, "
                        "fields['elapsed_time_per_iteration_ms_avg'], tflops, "
                        "fields['throughput_per_gpu_tflop_s_gpu_avg'], lm_loss, global_batch, "
                        "consumed_samples, train_iterations FROM log_iterations ORDER BY 2")
    minute = 60 * 10**9
    start = 1_772_366_400 * 10**9  # 2026-03-01 12:00:00 UTC
    assert got == [
        (7, 1, start + 1 * minute, 32208.7, 32208.7, 238.4, 238.4, 10.87836, 128, 128, 100),
        (7, 2, start + 2 * minute, 31950.2, 32079.5, 240.3, 239.4, 10.50211, 128, 256, 100),
        (7, 3, start + 3 * minute, 31990.0, 32049.6, 240.0, 239.6, 10.21, 128, 384, 100)]
    warnings = rows(db_path, "SELECT warnings FROM sources")[0][0]
    assert "3 line(s) printed twice in a row: read once" in warnings
    assert "'hip mem usage/free/total/usage_ratio'" in warnings


def test_megatron_key_value_form(db_path):
    assert ingest(db_path, "--log", str(FIXTURES / "megatron_deepspeed_kv.log")).exit_code == 0
    got = rows(db_path, "SELECT iteration, consumed_samples, consumed_tokens, elapsed_ms, "
                        "global_batch, lm_loss, samples_per_second, tflops, fields['ds_tflops'], "
                        "fields['grad_norm'] FROM log_iterations ORDER BY 1")
    assert got == [(1, 256, 524288, 21877.4, 256, 1.185091e1, 11.702, 128.91, 124.26, 12.411),
                   (2, 512, 1048576, 16030.6, 256, 1.148820e1, 15.970, 175.93, 169.58, 9.833)]


def test_user_pattern(db_path, tmp_path):
    log = tmp_path / "custom.log"
    log.write_text("epoch 0 it 10 rank=1 fwd=12.5ms bwd=30.25ms\nloss 3.2\n"
                   "epoch 0 it 11 rank=1 fwd=12.0ms bwd=31.00ms\n"
                   "epoch 0 it 12 rank=1 fwd=??ms bwd=31.00ms\n")
    pattern = r"it (?P<step>\d+) rank=(?P<rank>\d+) fwd=(?P<fwd>[^m]+)ms bwd=(?P<bwd>[^m]+)ms"
    assert ingest(db_path, "--log", str(log), "--log-pattern", pattern).exit_code == 0
    assert rows(db_path, "SELECT rank, step, timer, ms FROM log_timers ORDER BY ALL") == [
        (1, 10, "bwd", 30.25), (1, 10, "fwd", 12.5), (1, 11, "bwd", 31.0), (1, 11, "fwd", 12.0)]
    assert "1 timer line(s) not parsed (line 4)" in rows(db_path, "SELECT warnings FROM sources")[0][0]
    bad = ingest(db_path, "--log", str(log), "--log-pattern", "it (\\d+)")
    assert bad.exit_code == 1 and "--log-pattern" in bad.stderr and "named group" in bad.stderr


def test_a_log_without_timer_lines_is_refused(db_path, tmp_path):
    assert ingest(db_path, "--log", str(FIXTURES / "deepspeed_offload_plain.log")).exit_code == 0
    before = rows(db_path, "SELECT count(*) FROM store.log_values")
    log = tmp_path / "notes.log"
    log.write_text("starting\nloss 3.2\ntime (ms) | fwd: ??\n")
    result = ingest(db_path, "--log", str(log))
    assert result.exit_code == 1
    assert f"{log}: no timer line" in result.stderr.replace("\n", "")
    assert rows(db_path, "SELECT count(*) FROM store.log_values") == before
    assert rows(db_path, "SELECT run_id FROM runs") == [("deepspeed_offload_plain",)]


def _sweep(folder: Path) -> dict[str, dict]:
    """12 DeepSpeed logs named like the issue's template: tp 1/2/4 x dp 1/2 x prefetch 0/1, each
    with 3 steps (the first a warm-up) of fwd/bwd/step times that differ per run."""
    folder.mkdir()
    runs = {}
    for tp in (1, 2, 4):
        for dp in (1, 2):
            for prefetch in (0, 1):
                name = (f"log-1.3B-tp{tp}-dp{dp}-l24-h2048-a16-sl2048-gbs{32 * dp}-mbs8-ratio0.5"
                        f"-subg100000000-prefetch{prefetch}")
                fwd = [900.0 + 100 * tp + 10 * dp + prefetch + s * 3.25 for s in (7, 0, 1)]
                bwd = [2 * f + 0.5 for f in fwd]
                step = [40.0 * dp - prefetch + s for s in (9, 0, 2)]
                lines = [f"[2024-03-28 21:45:{10 + i:02d},807] [INFO] [logging.py:96:log_dist] "
                         f"[Rank 0] time (ms) | fwd: {fwd[i]:.2f} | bwd: {bwd[i]:.2f} | "
                         f"step: {step[i]:.2f}\n[Rank 0] step={i + 1}, skipped=0\n" for i in range(3)]
                (folder / f"{name}.log").write_text("".join(lines))
                runs[name] = {"tp": tp, "dp": dp, "prefetch": str(prefetch),
                              "global_batch": 32 * dp, "fwd": fwd, "bwd": bwd, "step": step}
    return runs


def test_a_sweep_over_sizes_is_ordered_by_magnitude(db_path, tmp_path):
    """Sub-group sizes written subg100M ... subg2G sort 100M, 200M, 400M, 800M, 1G, 2G (as text:
    100M, 1G, 200M, 2G, ...), in the series and in log_phases."""
    folder = tmp_path / "sizes"
    folder.mkdir()
    sizes = ["1G", "100M", "2G", "400M", "200M", "800M"]
    for n, size in enumerate(sizes):  # each log its own times: identical files are one file
        lines = "".join(f"[Rank 0] time (ms) | fwd: {10 + i}.{n} | step: 5.0\n" for i in range(3))
        (folder / f"log-subg{size}.log").write_text(lines)
    assert ingest(db_path, "--log", str(folder), "--name-template",
                  "log-subg{subgroup}").exit_code == 0
    by_size = ["100M", "200M", "400M", "800M", "1G", "2G"]
    assert rows(db_path, "SELECT value FROM series ORDER BY position") == [(v,) for v in by_size]
    con = tracewh.connect(db_path, read_only=True)
    from tracewh.metrics import find_metric, run_metric

    (series_id,), = con.execute("SELECT DISTINCT series_id FROM series").fetchall()
    phases = run_metric(con, find_metric("log_phases"), {"series": series_id}).to_pylist()
    con.close()
    assert [r["value"] for r in phases if r["timer"] == "fwd"] == by_size


def test_the_report_draws_a_series_tflops_in_the_line_asked_for(db_path, tmp_path):
    """Through the CLI: a sweep of logs printing TFLOP/s, `tracewh report --line dashed,black`:
    the series figure's TFLOP/s line is a dashed black line through the logs' medians, in
    size order (issue 38 item 3)."""
    import re

    folder = tmp_path / "sizes"
    folder.mkdir()
    tflops = {"100M": 120.0, "1G": 170.0, "400M": 150.0}
    for n, (size, rate) in enumerate(tflops.items()):
        lines = "".join(f"[Rank 0] time (ms) | fwd: {40 + n}.{i} | bwd: 80.0 | step: 10.0\n"
                        f" iteration= {i}/ 100 | elapsed_time_per_iteration_ms=140.0 | "
                        f"[LM]TFLOPs={rate + i:.2f} |\n" for i in range(1, 6))
        (folder / f"log-subg{size}.log").write_text(lines)
    assert ingest(db_path, "--log", str(folder), "--name-template",
                  "log-subg{subgroup}").exit_code == 0
    out = tmp_path / "report"
    result = runner.invoke(app, ["report", "--db", str(db_path), "--out", str(out),
                                 "--formats", "svg", "--line", "dashed,black"])
    assert result.exit_code == 0, result.stderr
    (svg,) = out.glob("log_phases_*.svg")
    styles = re.findall(r'style="([^"]*stroke-dasharray[^"]*)"', svg.read_text())
    dashed_black = [s for s in styles if "stroke: #000000" in s]
    assert dashed_black, styles  # the line and its legend handle
    con = tracewh.connect(db_path, read_only=True)
    from tracewh.metrics import find_metric, run_metric

    (series_id,), = con.execute("SELECT DISTINCT series_id FROM series").fetchall()
    phases = run_metric(con, find_metric("log_phases"), {"series": series_id}).to_pylist()
    con.close()
    drawn = [r["tflops"] for r in phases if r["timer"] == "fwd"]
    assert [r["value"] for r in phases if r["timer"] == "fwd"] == ["100M", "400M", "1G"]
    # the median of steps 2-5 (the first is warm-up)
    assert drawn == [pytest.approx(tflops[v] + 3.5) for v in ("100M", "400M", "1G")]


def test_sweep_configuration_series_and_log_phases(db_path, tmp_path):
    runs = _sweep(tmp_path / "sweep")
    result = ingest(db_path, "--log", str(tmp_path / "sweep"), "--name-template", TEMPLATE)
    assert result.exit_code == 0, result.stderr
    got = rows(db_path, "SELECT run_id, model_size, tp, dp, pp, layers, hidden, heads, seq_len, "
                        "global_batch, micro_batch, params, config_sources['tp'] FROM runs")
    assert len(got) == 12
    for run_id, size, tp, dp, pp, layers, hidden, heads, seq, gbs, mbs, params, source in got:
        want = runs[run_id]
        assert (size, tp, dp, pp, layers, hidden, heads, seq, gbs, mbs) == (
            "1.3B", want["tp"], want["dp"], None, 24, 2048, 16, 2048, want["global_batch"], 8)
        assert params == {"prefetch": want["prefetch"], "ratio": "0.5", "subgroup": "100000000"}
        assert source == "name-template"
    # runs differing in exactly one field: tp over 3 values for each (dp, prefetch); prefetch
    # over 2 for each (tp, dp); dp changes global_batch too, so it forms no series
    series = rows(db_path, "SELECT varied, count(DISTINCT series_id), count(*) FROM series GROUP BY 1 ORDER BY 1")
    assert series == [("prefetch", 6, 12), ("tp", 4, 12)]
    (series_id,), = rows(db_path, "SELECT DISTINCT series_id FROM series WHERE varied = 'tp' AND "
                                  "fixed LIKE '%dp=2%' AND fixed LIKE '%prefetch=1%'")
    con = tracewh.connect(db_path, read_only=True)
    from tracewh.metrics import find_metric, run_metric

    phases = run_metric(con, find_metric("log_phases"), {"series": series_id}).to_pylist()
    con.close()
    assert [(r["value"], r["timer"]) for r in phases] == [
        (str(tp), t) for tp in (1, 2, 4) for t in ("bwd", "fwd", "step")]
    for row in phases:
        want = runs[row["run_id"]]
        kept = [round(v, 2) for v in want[row["timer"]][1:]]  # the warm-up step left out
        assert row["steps"] == 2 and row["varied"] == "tp"
        assert abs(row["median_ms"] - statistics.median(kept)) < 1e-9
        assert abs(row["spread_ms"] - (max(kept) - min(kept))) < 1e-9


def test_warmup_default_skips_the_first_of_five(db_path):
    assert ingest(db_path, "--log", str(FIXTURES / "deepspeed_wall_clock.log")).exit_code == 0
    con = tracewh.connect(db_path, read_only=True)
    from tracewh.metrics import find_metric, run_metric

    metric = find_metric("log_phases")
    by_default = {r["timer"]: r for r in run_metric(con, metric, {}).to_pylist()}
    everything = {r["timer"]: r for r in run_metric(con, metric, {"warmup": 0}).to_pylist()}
    con.close()
    assert by_default["fwd"]["steps"] == 4
    assert by_default["fwd"]["median_ms"] == (1857.14 + 1862.39) / 2  # lines 2-5
    assert by_default["step"]["median_ms"] == (7939.92 + 7944.29) / 2
    assert everything["fwd"]["steps"] == 5 and everything["fwd"]["median_ms"] == 1862.39
    assert everything["fwd"]["max_ms"] == 2405.76


def test_configuration_trust_order(db_path, tmp_path):
    """--run-param over ds_config.json over the file name; each value says where it came from."""
    folder = tmp_path / "job"
    folder.mkdir()
    (folder / "ds_config.json").write_text(
        '{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2, '
        '"offload_optimizer": {"device": "cpu", "ratio": 0.3}}}')
    log = folder / "log-7B-tp2-dp8-mbs16-ratio0.9.log"
    log.write_text("time (ms) | fwd: 1.0 | bwd: 2.0\n")
    result = ingest(db_path, "--log", str(log), "--name-template",
                    "log-{model_size}-tp{tp}-dp{dp}-mbs{micro_batch}-ratio{ratio}",
                    "--run-param", "tp=4")
    assert result.exit_code == 0, result.stderr
    got = rows(db_path, "SELECT model_size, tp, dp, zero_stage, micro_batch, params, config_sources FROM runs")
    assert got == [("7B", 4, 8, 2, 4, {"offload_optimizer": "cpu", "ratio": "0.3"},
                    {"dp": "name-template", "micro_batch": "ds_config", "model_size": "name-template",
                     "offload_optimizer": "ds_config", "ratio": "ds_config", "tp": "run-param",
                     "zero_stage": "ds_config"})]
    # a name the template does not fit is said, not silently ignored
    other = folder / "other.log"
    other.write_text("time (ms) | fwd: 1.5\n")
    assert ingest(db_path, "--log", str(other), "--name-template", "log-{model_size}").exit_code == 0
    assert "does not match --name-template" in rows(
        db_path, "SELECT warnings FROM sources WHERE run_id = 'other'")[0][0]
    # removing the run removes its log rows and configuration
    assert runner.invoke(app, ["remove", "--run", "log-7B-tp2-dp8-mbs16-ratio0.9", "--db",
                               str(db_path)]).exit_code == 0
    assert rows(db_path, "SELECT count(*) FROM store.run_params WHERE run_id LIKE 'log-7B%'") == [(0,)]
    assert rows(db_path, "SELECT count(*) FROM log_timers WHERE run_id LIKE 'log-7B%'") == [(0,)]


def test_a_log_beside_traces_joins_their_run(db_path, tmp_path):
    folder = tmp_path / "runs" / "dp4"
    folder.mkdir(parents=True)
    (folder / "rank0.json").write_text('{"traceEvents": []}')
    (folder / "train.log").write_text("time (ms) | fwd: 1.0\n")
    assert ingest(db_path, "--log", str(tmp_path / "runs")).exit_code == 0
    assert rows(db_path, "SELECT DISTINCT run_id FROM log_timers") == [("dp4",)]


def test_workload_card_beats_the_file_name(db_path, tmp_path):
    """A CCL-Bench card beside the log: its parallelization plan and data fill runs, above the
    name template; dp is dp_replicate x dp_shard."""
    folder = tmp_path / "job"
    folder.mkdir()
    (folder / "card.yaml").write_text(
        "workload:\n  data:\n    batch_size: 64\n    seq_len: 4096\n"
        "Model-executor:\n  model_plan_parallelization:\n    dp_replicate: 2\n    dp_shard: 4\n"
        "    tp: 2\n    pp: 1\n")
    log = folder / "log-tp1-ep8.log"
    log.write_text("time (ms) | fwd: 3.0\n")
    assert ingest(db_path, "--log", str(log), "--name-template", "log-tp{tp}-ep{ep}").exit_code == 0
    got = rows(db_path, "SELECT tp, dp, pp, ep, global_batch, seq_len, config_sources FROM runs")
    assert got == [(2, 8, 1, 8, 64, 4096, {"dp": "card", "ep": "name-template", "global_batch": "card",
                                           "pp": "card", "seq_len": "card", "tp": "card"})]
