"""Time series sampled beside the job: nvidia-smi CSV, epoch numbers, hosts, zones."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app

runner = CliRunner()
NVIDIA_SMI = """timestamp, index, memory.free [MiB], memory.used [MiB], utilization.gpu [%], power.draw [W]
2026/01/01 00:00:00.400, 0, 80000 MiB, 1000 MiB, 45 %, 312.50 W
2026/01/01 00:00:00.400, 1, 70000 MiB, 11000 MiB, 50 %, 298.10 W
2026/01/01 00:00:00.500, 0, 79000 MiB, 2000 MiB, 97 %, 401.00 W
2026/01/01 00:00:00.500, 1, [N/A], 12000 MiB, 99 %, 405.20 W
"""
T0 = 1_767_225_600_400_000_000  # 2026-01-01T00:00:00.400Z


def ingest(db: Path, *args: str):
    return runner.invoke(app, ["ingest", "--quiet", "--db", str(db), *args])


def samples(db: Path):
    con = tracewh.connect(db, read_only=True)
    rows = con.execute("SELECT host, device_id, ts_ns, metric, value FROM samples ORDER BY ALL").fetchall()
    con.close()
    return rows


def test_nvidia_smi_csv(db_path, tmp_path):
    csv = tmp_path / "gpu.csv"
    csv.write_text(NVIDIA_SMI)
    result = ingest(db_path, "--series", str(csv), "--run", "job", "--series-host", "node0")
    assert result.exit_code == 0, result.stderr
    rows = samples(db_path)
    assert len(rows) == 4 * 4 - 1  # the [N/A] cell is no sample
    assert ("node0", 0, T0, "memory.free [MiB]", 80000.0) in rows
    assert ("node0", 1, T0 + 100_000_000, "power.draw [W]", 405.2) in rows
    assert not [r for r in rows if r[1] == 1 and r[2] == T0 + 100_000_000 and r[3] == "memory.free [MiB]"]
    con = tracewh.connect(db_path, read_only=True)
    source = con.execute("SELECT format, rows, origin_ns, warnings FROM sources").fetchall()[0]
    con.close()
    assert source[:3] == ("series-csv", 15, T0) and "taken as UTC" in source[3]
    # the same file again adds nothing
    assert ingest(db_path, "--series", str(csv), "--run", "job").exit_code == 0
    assert len(samples(db_path)) == 15


def test_zone_offset_and_epoch_numbers(db_path, tmp_path):
    local = tmp_path / "local.csv"
    local.write_text(NVIDIA_SMI.replace("2026/01/01 00:00", "2026/01/01 02:00"))
    assert ingest(db_path, "--series", str(local), "--run", "job", "--series-tz", "+02:00").exit_code == 0
    assert {r[2] for r in samples(db_path)} == {T0, T0 + 100_000_000}
    epoch = tmp_path / "epoch.csv"
    epoch.write_text("time,host,gpu,free_bytes\n1767225600.4,nodeA,3,100\n1767225600.5,nodeB,3,90\n")
    assert ingest(db_path, "--series", str(epoch), "--run", "job2").exit_code == 0
    con = tracewh.connect(db_path, read_only=True)
    assert con.execute("SELECT host, device_id, ts_ns, value FROM samples WHERE run_id = 'job2' "
                       "ORDER BY ts_ns").fetchall() == [("nodeA", 3, T0, 100.0), ("nodeB", 3, T0 + 100_000_000, 90.0)]


@pytest.mark.parametrize("text, message", [
    ("a,b\n1,2\n", "no time column"),
    ("timestamp,x\n", "empty series"),
    ("timestamp,x\nsoon,3\n", "no samples"),
])
def test_bad_series_is_one_line(db_path, tmp_path, text, message):
    csv = tmp_path / "bad.csv"
    csv.write_text(text)
    result = ingest(db_path, "--series", str(csv), "--run", "job")
    assert result.exit_code == 1 and message in result.stderr and str(csv) in result.stderr
    assert not db_path.exists()  # nothing stored: a failed ingest leaves no new warehouse


def test_memory_by_phase_golden(tmp_path):
    """Generated phases, samples written for them, and the answer worked out here by hand."""
    from tracewh.generate.nsys import JobSpec, generate_job
    from tracewh.metrics import find_metric, run_metric

    generate_job(tmp_path / "t", JobSpec(world_size=2, iterations=3, layers=2, seed=5))
    db = tmp_path / "wh.duckdb"
    assert ingest(db, str(tmp_path / "t"), "--run", "job").exit_code == 0
    con = tracewh.connect(db, read_only=True)
    phases = con.execute("""
        SELECT n.rank, i.iteration, n.name, n.start_ns, n.end_ns FROM nvtx_ranges n
        JOIN iterations i ON i.rank = n.rank AND n.start_ns >= i.start_ns AND n.start_ns < i.end_ns
        WHERE n.name IN ('forward', 'backward', 'optimizer') ORDER BY 1, 4""").fetchall()
    devices = {rank: (device, host) for rank, device, host in
               con.execute("SELECT rank, device_id, host FROM ranks").fetchall()}
    con.close()
    assert len(phases) == 2 * 3 * 3
    # samples every 50 us over the whole job, on each rank's GPU: free = 1000 + ts % 997
    first = min(p[3] for p in phases) - 500_000
    last = max(p[4] for p in phases)
    times = list(range(first, last + 50_000, 50_000))
    lines = ["time_ns,host,gpu,memory.free [MiB],memory.used [MiB]"]
    for ts in times:
        for rank, (device, host) in devices.items():  # one GPU per node: the host tells them apart
            lines.append(f"{ts},{host},{device},{1000 + ts % 997},{ts % 13}")
    csv = tmp_path / "gpu.csv"
    csv.write_text("\n".join(lines) + "\n")
    assert ingest(db, "--series", str(csv), "--run", "job").exit_code == 0
    con = tracewh.connect(db, read_only=True)
    got = run_metric(con, find_metric("memory_by_phase"), {}).to_pylist()
    con.close()
    expected = []
    for rank, iteration, name, start, end in phases:
        inside = [1000 + ts % 997 for ts in times if start <= ts <= end]
        before = [1000 + ts % 997 for ts in times if ts <= start][-1]
        expected.append((rank, iteration, name, len(inside), min(inside, default=None),
                         max(inside, default=None), before,
                         sum(inside) / len(inside) if inside else None))
    rows = [(r["rank"], r["iteration"], r["phase"], r["samples"], r["min_value"], r["max_value"],
             r["value_at_start"], r["mean_value"]) for r in got]
    assert {r["measure"] for r in got} == {"memory.free [MiB]"}
    assert sorted(rows, key=str) == sorted(expected, key=str)
    assert sum(r[3] for r in rows) > 20  # most phases hold several samples


def test_workload_card_names_the_run_and_fills_runs(tmp_path):
    """CCL-Bench layout: <workload>/<workload>.yaml beside <workload>/profile_trace/*.json."""
    import shutil

    from tracewh.resources import sql_dir

    workload = tmp_path / "llama_dp4"
    traces = workload / "profile_trace"
    traces.mkdir(parents=True)
    for trace in (sql_dir().parent / "sample_db/traces/fsdp_4ranks_kineto").glob("*.json.gz"):
        shutil.copy(trace, traces)
    (workload / "llama_dp4.yaml").write_text(
        "version: 1\ndescription: Llama 8B, 4 GPUs\nworkload:\n  model: {model_family: llama}\n"
        "  data: {batch_size: 32, seq_len: 4096}\n"
        "  hardware:\n    xpu_spec: {type: GPU, model: H100, total_count: 4, count_per_node: 4}\n")
    db = tmp_path / "wh.duckdb"
    assert ingest(db, str(tmp_path)).exit_code == 0
    con = tracewh.connect(db, read_only=True)
    row = con.execute("SELECT run_id, description, batch_size, seq_len, gpus_per_node, "
                      "metadata->>'$.workload_card.workload.model.model_family', "
                      "metadata->>'$.distributedInfo.world_size' FROM runs").fetchall()
    assert row == [("llama_dp4", "Llama 8B, 4 GPUs", 32, 4096, 4, "llama", "4")]


def test_stamps_that_carry_their_zone_keep_it(db_path, tmp_path):
    """An offset, Z, or a zone name after the clock time is the stamp's own zone (it used to be
    dropped: samples 2 h and 4 h late, with a warning that the stamps had no zone)."""
    csv = tmp_path / "zoned.csv"
    csv.write_text("timestamp, index, memory.used [MiB]\n"
                   "2023-09-08T01:10:00+02:00, 0, 100 MiB\n"
                   "2023-09-07 19:10:01 EDT, 0, 200 MiB\n"
                   "2023-09-07 23:10:02Z, 0, 300 MiB\n"
                   "2023-09-08 00:10:03 +0100, 0, 400 MiB\n")
    result = ingest(db_path, "--series", str(csv), "--run", "job")
    assert result.exit_code == 0, result.stderr
    t0 = 1_694_128_200_000_000_000  # 2023-09-07T23:10:00Z
    assert [(ts, value) for _, _, ts, _, value in samples(db_path)] == [
        (t0, 100.0), (t0 + 1_000_000_000, 200.0), (t0 + 2_000_000_000, 300.0),
        (t0 + 3_000_000_000, 400.0)]
    assert "without a zone" not in result.stderr


def test_what_a_series_should_not_hold_is_said(db_path, tmp_path):
    """Unknown zones, stamps before 1970, values that are no finite number, a device that is no
    number, stamps out of order and repeated samples: each counted in one warning."""
    csv = tmp_path / "odd.csv"
    csv.write_text("time, gpu, util\n"
                   "1694128200.0, 0, 10\n"
                   "1694128199.0, 0, 20\n"       # earlier than the row before it
                   "1694128199.0, 0, 20\n"       # the same sample again
                   "-5, 0, 30\n"                 # before 1970
                   "1694128201.0, 0, 1e400 %\n"  # no finite number
                   "1694128202.0, x, 50\n")      # no device number
    result = ingest(db_path, "--series", str(csv), "--run", "job")
    assert result.exit_code == 0, result.stderr
    con = tracewh.connect(db_path, read_only=True)
    (said,) = con.execute("SELECT warnings FROM sources").fetchone()
    rows = con.execute("SELECT device_id, value FROM samples ORDER BY ts_ns, value").fetchall()
    con.close()
    assert said.split("; ") == [
        "1 row(s) stamped before 1970: not stored",
        "1 value(s) that are no finite number (1e400, inf): not stored",
        "1 stamp(s) earlier than the row before them on their device: stored in time order",
        "1 sample(s) repeat an earlier one's device, measure and time: stored as written",
        "device column 'gpu' holds x, no device number: those samples have no device"]
    assert rows == [(0, 20.0), (0, 20.0), (0, 10.0), (None, 50.0)]


def _job_series(path: Path, start_ns: int, hosts=("node0", "node1")) -> Path:
    """Free memory of GPU 0 of each host, every 0.5 ms for 70 ms from start_ns."""
    lines = ["time_ns,host,gpu,memory.free [MiB]"]
    lines += [f"{start_ns + i * 500_000},{host},0,{60000 - i}" for i in range(140) for host in hosts]
    path.write_text("\n".join(lines) + "\n")
    return path


def _span(db: Path, run: str):
    con = tracewh.connect(db, read_only=True)
    got = con.execute("SELECT min(start_ns), max(end_ns) FROM gpu_ops WHERE run_id = ?", [run]).fetchone()
    con.close()
    return got


def test_series_without_run_joins_the_run_it_covers(db_path, tmp_path):
    """Issue 38 item 9: --series without --run attaches the samples to the run whose GPUs and time
    they cover (not to a run named after the CSV's folder), so memory_by_phase answers; a series
    covering two runs, or none, is an error naming them, and nothing is written."""
    from tracewh.generate.nsys import JobSpec, generate_job

    generate_job(tmp_path / "traces" / "job", JobSpec(world_size=2, iterations=3, layers=2))
    assert ingest(db_path, str(tmp_path / "traces")).exit_code == 0
    start, end = _span(db_path, "job")
    monitor = tmp_path / "monitor"
    monitor.mkdir()
    csv = _job_series(monitor / "gpu.csv", start)
    result = ingest(db_path, "--series", str(csv))
    assert result.exit_code == 0, result.stderr
    con = tracewh.connect(db_path, read_only=True)
    runs = con.execute("SELECT run_id FROM store.runs ORDER BY 1").fetchall()
    per_run = con.execute("SELECT run_id, count(*) FROM samples GROUP BY 1").fetchall()
    con.close()
    assert runs == [("job",)] and per_run == [("job", 280)]
    answer = runner.invoke(app, ["query", "memory_by_phase", "--db", str(db_path), "--format", "csv",
                                 "--param", "measure=memory.free%"])
    assert answer.exit_code == 0, answer.stderr
    assert ",samples,memory.free [MiB]," in answer.stdout

    late = _job_series(tmp_path / "late.csv", end + 10**12)
    result = ingest(db_path, "--series", str(late))
    assert result.exit_code == 1
    assert "cover the GPUs and time of no run (runs: job 20" in result.stderr
    assert "name the run with --run" in result.stderr
    other_gpus = _job_series(tmp_path / "other.csv", start, hosts=("node7",))
    assert "of no run" in ingest(db_path, "--series", str(other_gpus)).stderr

    generate_job(tmp_path / "twin", JobSpec(world_size=2, iterations=3, layers=2, seed=7))
    assert ingest(db_path, str(tmp_path / "twin"), "--run", "twin").exit_code == 0
    twin_start = _span(db_path, "twin")[0]
    assert twin_start < end  # the twin ran on the same GPUs just before: 70 ms cover both
    again = _job_series(tmp_path / "again.csv", min(start, twin_start))
    result = ingest(db_path, "--series", str(again))
    assert result.exit_code == 1 and "cover the GPUs and time of 2 runs (twin, job)" in result.stderr  # in time order
    assert per_run == [("job", 280)] and len(samples(db_path)) == 280  # nothing more written
