"""nsys ingest on the real exports of ../shared/data/nsys: every row accounted for, UTC exact."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import tracewh
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric

REAL_EXPORTS = [
    "nsys-2021/report1.sqlite",
    "nsys-2024.1/report1.sqlite",
    "nsys-ai/mock.sqlite",
    "nsys-ai/h100_2gpu_1s.sqlite",
    "nsys-ai/mfu_2gpu_before.sqlite",
]
# nsys table -> warehouse view whose rows must match it one for one
COUNTED = {
    "CUPTI_ACTIVITY_KIND_KERNEL": "kernels",
    "CUPTI_ACTIVITY_KIND_MEMCPY": "memcpy",
    "CUPTI_ACTIVITY_KIND_MEMSET": "memset",
    "CUPTI_ACTIVITY_KIND_RUNTIME": "cuda_api",
}
NVTX_KINDS = "(34, 59, 60, 70, 71)"  # marks, push/pop and start/end ranges


def sqlite_rows(path: Path, sql: str):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return con.execute(sql).fetchall()
    except sqlite3.OperationalError:  # table absent from this export
        return None
    finally:
        con.close()


@pytest.fixture(scope="module")
def real_warehouse(shared_data, tmp_path_factory):
    """Every real export ingested, each as its own run."""
    path = tmp_path_factory.mktemp("real") / "wh.duckdb"
    con = tracewh.connect(path)
    for name in REAL_EXPORTS:
        results = ingest_paths(con, [shared_data / "nsys" / name], run=name)
        assert [r.status for r in results] == ["ingested"], results[0].message
    yield con, shared_data / "nsys"
    con.close()


@pytest.mark.parametrize("name", REAL_EXPORTS)
def test_row_counts_equal_the_source_tables(real_warehouse, name):
    con, root = real_warehouse
    for table, view in COUNTED.items():
        expected = sqlite_rows(root / name, f"SELECT count(*) FROM {table}")
        got = con.execute(f"SELECT count(*) FROM {view} WHERE run_id = ?", [name]).fetchall()
        assert got[0][0] == (expected[0][0] if expected else 0), (name, view)
    nvtx = sqlite_rows(root / name, f"SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN {NVTX_KINDS}")
    got = con.execute("SELECT count(*) FROM nvtx_ranges WHERE run_id = ?", [name]).fetchall()[0][0]
    assert got == (nvtx[0][0] if nvtx else 0)


@pytest.mark.parametrize("name", [n for n in REAL_EXPORTS if n != "nsys-2024.1/report1.sqlite"])
def test_first_kernel_starts_at_utc_anchor_plus_start(real_warehouse, name):
    con, root = real_warehouse
    start = sqlite_rows(root / name, "SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0][0]
    anchor = sqlite_rows(root / name, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME")
    expected = start + (anchor[0][0] if anchor else 0)
    got = con.execute("SELECT min(start_ns), bool_and(has_utc) FROM kernels JOIN sources USING (file_id) "
                      "WHERE kernels.run_id = ?", [name]).fetchall()[0]
    assert got == (expected, anchor is not None)


def test_2021_export_without_anchor_is_flagged(real_warehouse):
    con, _ = real_warehouse
    row = con.execute("SELECT has_utc, tool_version, origin_ns, warnings FROM sources "
                      "WHERE run_id = 'nsys-2021/report1.sqlite'").fetchall()[0]
    assert row[:3] == (False, "unknown (<2022)", 0)
    assert "no UTC anchor" in row[3]


def test_export_without_kernel_table_ingests_what_it_has(real_warehouse):
    con, _ = real_warehouse
    run = "nsys-2024.1/report1.sqlite"
    counts = con.execute("SELECT (SELECT count(*) FROM kernels WHERE run_id = $r), "
                         "(SELECT count(*) FROM cuda_api WHERE run_id = $r), "
                         "(SELECT count(*) FROM gpu_syncs WHERE run_id = $r), "
                         "(SELECT rows FROM sources WHERE run_id = $r)", {"r": run}).fetchall()[0]
    assert counts == (0, 5497, 1177, 5497 + 1177)


def test_one_rank_per_process_of_a_multi_process_report(real_warehouse):
    con, root = real_warehouse
    name = "nsys-ai/mfu_2gpu_before.sqlite"
    pids = sqlite_rows(root / name, "SELECT DISTINCT (globalPid >> 24) & 16777215 FROM "
                       "CUPTI_ACTIVITY_KIND_KERNEL ORDER BY 1")
    ranks = con.execute("SELECT rank, pid, device_id, rank_source FROM ranks WHERE run_id = ? "
                        "ORDER BY rank", [name]).fetchall()
    assert ranks == [(0, pids[0][0], 0, "process-order"), (1, pids[1][0], 1, "process-order")]
    per_rank = con.execute("SELECT pid, count(*) FROM kernels WHERE run_id = ? GROUP BY pid "
                           "ORDER BY pid", [name]).fetchall()
    expected = sqlite_rows(root / name, "SELECT (globalPid >> 24) & 16777215, count(*) FROM "
                           "CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1 ORDER BY 1")
    assert per_rank == expected


def test_kernel_api_join_uses_correlation_and_process(real_warehouse):
    # correlationIds repeat across the two processes of this file: joining on the id alone
    # over-matches (reference/nsys_schema.md: 4280 naive matches vs 3986 correct).
    con, root = real_warehouse
    name = "nsys-ai/mfu_2gpu_before.sqlite"
    expected = sqlite_rows(root / name, """
        SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r
          ON r.correlationId = k.correlationId
         AND k.globalPid = (r.globalTid & 0xFFFFFFFFFF000000)""")[0][0]
    naive = sqlite_rows(root / name, """
        SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r
          ON r.correlationId = k.correlationId""")[0][0]
    got = con.execute("SELECT count(*) FROM kernels k JOIN cuda_api a ON a.file_id = k.file_id "
                      "AND a.pid = k.pid AND a.correlation_id = k.correlation_id "
                      "WHERE k.run_id = ?", [name]).fetchall()[0][0]
    assert got == expected == 3986 and naive == 4280


def test_sendrecv_kernels_take_send_and_recv_from_their_nvtx_group(real_warehouse):
    con, root = real_warehouse
    name = "nsys-ai/mfu_2gpu_before.sqlite"
    path = root / name
    kernels = sqlite_rows(path, """
        SELECT (k.globalPid >> 24) & 16777215, k.start, r.correlationId IS NOT NULL
        FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName
        LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId
         AND k.globalPid = (r.globalTid & 0xFFFFFFFFFF000000)
        WHERE s.value = 'ncclDevKernel_SendRecv'""")
    anchor = sqlite_rows(path, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME")[0][0]
    assert len(kernels) == 66
    launched = {(pid, start + anchor) for pid, start, has_launch in kernels if has_launch}
    rows = con.execute("SELECT pid, start_ns, collective, collective_source, api_name FROM nccl_ops "
                       "WHERE run_id = ?", [name]).fetchall()
    by_kernel = {}
    for pid, start, collective, source, api in rows:
        by_kernel.setdefault((pid, start), []).append((collective, source, api))
    assert set(by_kernel) == {(pid, start + anchor) for pid, start, _ in kernels}
    for key in launched:
        # each group in this file is ncclGroupStart, Send, Recv, Send, Recv, ncclGroupEnd
        assert sorted(by_kernel[key]) == [("Recv", "nvtx", "ncclRecv")] * 2 + [("Send", "nvtx", "ncclSend")] * 2
    # The fixture was cut from a longer capture: the first SendRecv kernel of each rank was
    # launched before the cut, so neither its launch call nor its NVTX group is in the file.
    unlaunched = set(by_kernel) - launched
    assert len(unlaunched) == 2
    for key in unlaunched:
        assert by_kernel[key] == [("SendRecv", "kernel_name", None)]


def test_nvtx_domains_nesting_and_names(real_warehouse, shared_data):
    con, root = real_warehouse
    name = "nsys-ai/mfu_2gpu_before.sqlite"
    nccl = con.execute("SELECT name, count(*) FROM nvtx_ranges WHERE run_id = ? AND domain = 'NCCL' "
                       "GROUP BY name ORDER BY name", [name]).fetchall()
    assert nccl == [("ncclCommCount", 66), ("ncclGroupEnd", 66), ("ncclGroupStart", 66),
                    ("ncclRecv", 132), ("ncclSend", 132)]
    # Depth and parent by sweep agree with a brute-force containment count on the same rows.
    rows = con.execute("SELECT range_id, tid, start_ns, end_ns, depth, parent_id FROM nvtx_ranges "
                       "WHERE run_id = ? AND kind = 'push_pop' AND end_ns IS NOT NULL", [name]).fetchall()
    by_tid = {}
    for row in rows:
        by_tid.setdefault(row[1], []).append(row)
    checked = 0
    for ranges in by_tid.values():
        ranges.sort(key=lambda r: (r[2], -r[3], r[0]))
        for i, (rid, _, start, end, depth, parent) in enumerate(ranges[:400]):
            enclosing = [r for r in ranges[:i] if r[2] <= start and r[3] >= end and r[3] > r[2]]
            assert depth == len(enclosing), rid
            assert parent == (enclosing[-1][0] if enclosing else None), rid
            checked += 1
    assert checked > 500


def test_cuda_api_names_as_nsys_stats_prints_them(real_warehouse):
    # nsys stats (cuda_api_sum) cuts a name's last six characters when they start with `_v`:
    # the 4-digit API version (_v7000, _v3020). _v2, _v10000 and _v2_v12000 stay, and so
    # cuGetProcAddress and cuGetProcAddress_v2 stay two functions.
    con, _ = real_warehouse
    calls = dict(con.execute("SELECT name, count(*) FROM cuda_api WHERE run_id = ? GROUP BY name",
                             ["nsys-2024.1/report1.sqlite"]).fetchall())
    assert calls["cuGetProcAddress"] == 373 and calls["cuGetProcAddress_v2"] == 1576
    assert calls["cudaLaunchKernel"] == 2082 and calls["cudaMalloc"] == 29
    assert calls["cudaStreamIsCapturing_v10000"] == 1
    assert calls["cudaGetDeviceProperties_v2_v12000"] == 2
    assert calls["cudaGetDriverEntryPoint_v11030"] == 2
    summary = run_metric(con, find_metric("cuda_api_summary"),
                         {"run": "nsys-2024.1/report1.sqlite"}).to_pylist()
    by_name = {row["name"]: row["num_calls"] for row in summary}
    assert by_name["cuGetProcAddress"] == 373 and by_name["cuGetProcAddress_v2"] == 1576


def test_nvtx_summary_names_a_guessed_domain_as_nsys_does(real_warehouse):
    # The NCCL domain's create event was cut off this capture: nsys stats prints `:ncclSend`;
    # the domain column keeps tracewh's guess.
    con, root = real_warehouse
    name = "nsys-ai/mfu_2gpu_before.sqlite"
    expected = sqlite_rows(root / name, """
        SELECT ':' || s.value, count(*) FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId
        WHERE e.domainId = 1 AND e.eventType = 59 AND e."end" IS NOT NULL GROUP BY 1 ORDER BY 1""")
    assert [n for _, n in expected] == [66, 66, 66, 132, 132]
    summary = run_metric(con, find_metric("nvtx_summary"), {"run": name}).to_pylist()
    got = {}
    for row in summary:
        if row["domain"] == "NCCL":
            got[row["range"]] = got.get(row["range"], 0) + row["instances"]
    assert sorted(got.items()) == expected
    guessed = con.execute("SELECT count(*) FILTER (WHERE domain_guessed), count(*) FILTER (WHERE domain = 'NCCL') "
                          "FROM nvtx_ranges WHERE run_id = ?", [name]).fetchall()
    assert guessed == [(462, 462)]
