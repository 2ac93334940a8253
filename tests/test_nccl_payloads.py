"""NCCL's NVTX payloads in nsys exports (issue 34 items 2 and 5): an export made with
`nsys export --include-blobs=true` carries each NCCL call's communicator, message size,
reduction and root or peer, and each communicator's init (size, rank). nccl_ops then carries
sizes and communicators, one collective is matched across ranks by (communicator, its sequence
number there), and a process's rank comes from its world communicator's init payload.
Expected values come from the generator's truth (JobSpec.nccl_payloads), recomputed here."""

from __future__ import annotations

import dataclasses
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import ingest_paths
from tracewh.ingest import nvtx_payload
from tracewh.ingest.discover import parse_rank_map
from tracewh.ingest.nsys import read_export_info
from tracewh.metrics import find_metric, run_metric

SPEC = JobSpec(world_size=4, ranks_per_file=2, iterations=2, layers=2, seed=11, nccl_payloads=True)
P2P = ("Send", "Recv")
# nsys-ai 0.3.0's decoding of the same exports (tests/peer/nsysai_nccl_payloads.py)
PEER = json.loads((Path(__file__).parent / "peer" / "nsysai_nccl_payloads_0.3.0.json").read_text())


def _sizes(op) -> tuple[int, int, int]:
    """(in, out, nccl-tests) bytes of a truth op: NCCL's message size is one rank's share."""
    n, b = op.group_size, op.bytes
    in_b = b * n if op.collective in ("ReduceScatter", "AllToAll") else b
    out_b = b * n if op.collective in ("AllGather", "AllToAll") else b
    return in_b, out_b, max(in_b, out_b)


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    out = tmp_path_factory.mktemp("payloads")
    truth = generate_job(out / "job", SPEC)
    con = tracewh.connect(out / "wh.duckdb")
    results = ingest_paths(con, [out / "job"], run="job", jobs=1)
    assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    yield con, truth, out
    con.close()


def _rows(con):
    return con.execute(
        "SELECT rank, start_ns, collective, comm_id, seq, in_bytes, out_bytes, full_bytes, group_size, "
        "reduce_op, peer, op_key FROM nccl_ops WHERE run_id = 'job'").fetchall()


def test_nccl_ops_carry_the_payloads(job):
    con, truth, _ = job
    want = {}
    for rank, ops in truth.nccl_ops.items():
        for op in ops:
            key = (rank, op.start_ns, op.collective)
            assert key not in want  # each (rank, kernel start, kind) names one operation
            want[key] = (f"0x{op.comm:016x}", op.seq, *_sizes(op), op.group_size, op.reduce_op,
                         op.peer if op.collective in P2P else op.root)
    got = {(r[0], r[1], r[2]): r[3:11] for r in _rows(con)}
    assert got == want
    assert con.execute("SELECT count(*) FROM nccl_ops WHERE pg_name IS DISTINCT FROM comm_id").fetchone() == (0,)
    kinds = {op.collective for ops in truth.nccl_ops.values() for op in ops}
    assert kinds == {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "AllToAll",
                     "Send", "Recv"}
    assert len({op.comm for ops in truth.nccl_ops.values() for op in ops}) == 2
    assert any(op.comm > 2**63 - 1 for ops in truth.nccl_ops.values() for op in ops)


def test_collectives_match_by_communicator_and_sequence(job):
    """Rows share an op_key exactly when they are the same collective (communicator, sequence
    number) on different ranks; a send or receive is its own rank's (and its peer's) operation."""
    con, truth, _ = job
    which = {(rank, op.start_ns, op.collective): (op.comm, op.seq, op.collective in P2P and (rank, op.collective, op.peer))
             for rank, ops in truth.nccl_ops.items() for op in ops}
    by_key, by_truth = {}, {}
    for row in _rows(con):
        ident = which[(row[0], row[1], row[2])]
        by_key.setdefault(row[11], set()).add((row[0], ident))
        by_truth.setdefault(ident, set()).add((row[0], row[11]))
    collectives = [members for members in by_key.values() if not any(i[2] for _, i in members)]
    assert collectives and all(len(m) == SPEC.world_size for m in collectives)
    assert all(len({i for _, i in m}) == 1 for m in by_key.values())  # one truth op per key
    assert all(len({k for _, k in m}) == 1 for m in by_truth.values())  # one key per truth op


def test_collective_bandwidth_from_payload_sizes(job):
    """algbw = full_bytes / the shortest duration over the ranks; busbw by nccl-tests' factor."""
    con, truth, _ = job
    ops = {}
    for rank, rank_ops in truth.nccl_ops.items():
        for op in rank_ops:
            if op.collective not in P2P:
                ops.setdefault((op.comm, op.seq), []).append(op)
    factor = {"AllReduce": lambda n: 2 * (n - 1) / n, "AllGather": lambda n: (n - 1) / n,
              "ReduceScatter": lambda n: (n - 1) / n, "AllToAll": lambda n: (n - 1) / n}
    want = {}
    for (comm, seq), same in ops.items():
        t = min(o.end_ns - o.start_ns for o in same)
        full = _sizes(same[0])[2]
        n = same[0].group_size
        want[f"comm 0x{comm:016x} seq {seq}"] = (
            same[0].collective, full, t, pytest.approx(full / t * factor.get(same[0].collective, lambda n: 1.0)(n)))
    got = {r["op_key"]: (r["collective"], r["full_bytes"], r["t_ns"], r["busbw_gbps"])
           for r in run_metric(con, find_metric("collective_bandwidth"), {"run": "job"}).to_pylist()
           if "@" not in r["op_key"]}
    assert got == want


def test_ranks_from_the_nccl_init_payload(job, tmp_path):
    """node1 alone holds ranks 2 and 3: process order would number them 0 and 1; its processes'
    init payloads say 2 and 3. --rank-map still wins."""
    _, truth, out = job
    node1 = next(p for p, ranks in truth.file_ranks.items() if ranks == [2, 3])
    con = tracewh.connect(tmp_path / "one.duckdb")
    ingest_paths(con, [node1], run="one", jobs=1)
    pid_rank = {pid: r for r, pid in truth.rank_pid.items() if r in (2, 3)}
    got = con.execute("SELECT pid, rank, rank_source FROM ranks ORDER BY pid").fetchall()
    assert got == [(pid, pid_rank[pid], "nccl") for pid in sorted(pid_rank)]
    pid = min(pid_rank)
    con.close()
    con = tracewh.connect(tmp_path / "mapped.duckdb")
    ingest_paths(con, [node1], run="mapped", jobs=1, rank_rules=parse_rank_map([f"{node1.name}:{pid}=7"]))
    assert con.execute("SELECT rank, rank_source FROM ranks WHERE pid = ?", [pid]).fetchall() == [(7, "rank-map")]
    con.close()


def test_malformed_payloads_are_a_warning_naming_the_file(job, tmp_path):
    """One blob cut short, one of a schema the export does not describe: the file still loads,
    those two operations have no communicator, the others do, and the warning names the file."""
    _, truth, out = job
    path = tmp_path / "rank0.sqlite"
    shutil.copy(next(p for p, ranks in truth.file_ranks.items() if ranks == [0, 1]), path)
    db = sqlite3.connect(path)
    ids = [r for (r,) in db.execute("SELECT e.rowid FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId "
                                    "WHERE s.value = 'ncclAllReduce' ORDER BY e.start LIMIT 2")]
    db.execute("UPDATE NVTX_EVENTS SET binaryData = substr(binaryData, 1, 40) WHERE rowid = ?", [ids[0]])
    db.execute("UPDATE NVTX_EVENTS SET binaryData = zeroblob(56) WHERE rowid = ?", [ids[1]])
    db.commit()
    db.close()
    result = CliRunner().invoke(app, ["ingest", str(path), "--db", str(tmp_path / "w.duckdb"),
                                      "--run", "bad"])
    assert result.exit_code == 0, result.output
    assert (f"warning: {path}: NVTX payloads: 2 of " in result.output.replace("\n", "")
            and "1 cut short of their payload" in result.output
            and "1 of a schema the export does not describe" in result.output), result.output
    con = tracewh.connect(tmp_path / "w.duckdb")
    blank, known = con.execute("SELECT count(*) FILTER (WHERE comm_id IS NULL), count(comm_id) FROM nccl_ops "
                               "WHERE collective = 'AllReduce'").fetchone()
    con.close()
    assert (blank, known) == (2, 2 * SPEC.iterations - 2)  # ranks 0 and 1's first AllReduce


def test_an_export_without_blobs_keeps_sizes_null(tmp_path):
    """The same job exported without --include-blobs (nsys export's default; payload schemas
    written, no blob, as the real mfu export): no size, no communicator, the ordinal cross-rank
    key, ranks from process order, and collective_bandwidth says why its bandwidths are NULL."""
    generate_job(tmp_path / "plain", JobSpec(**{**SPEC.__dict__, "include_blobs": False}))
    con = tracewh.connect(tmp_path / "w.duckdb")
    ingest_paths(con, [tmp_path / "plain"], run="plain", jobs=1)
    n = SPEC.world_size * SPEC.iterations
    assert con.execute("SELECT count(*), count(full_bytes), count(comm_id), min(op_key) FROM nccl_ops "
                       "WHERE collective = 'AllReduce'").fetchone() == (n, 0, 0, "AllReduce:1")
    assert {s for (s,) in con.execute("SELECT rank_source FROM ranks").fetchall()} == {"process-order"}
    notes = {r["note"] for r in run_metric(con, find_metric("collective_bandwidth"), {"run": "plain"}).to_pylist()}
    assert notes == {"message size unknown: full_bytes is NULL (nsys exports carry NCCL sizes only with "
                     "--include-blobs)"}
    con.close()


def _low32(value):
    """A 4-byte int field as nsys-ai reads it: up to the next field, padding included."""
    return None if value is None else (value & 0xFFFFFFFF) - ((value & 0x80000000) << 1)


def _same_exports(recorded: str, spec: JobSpec) -> bool:
    """Was `recorded` (a JobSpec's repr) made with `spec`? Every field it names has the value
    `spec` has; a field added to JobSpec since is at its default (defaults change no export)."""
    for field in dataclasses.fields(spec):
        value = getattr(spec, field.name)
        if f"{field.name}={value!r}" not in recorded and (
                f"{field.name}=" in recorded or value != field.default):
            return False
    return True


def test_the_decoder_agrees_with_nsys_ai(job):
    """Every blob of the generated exports, decoded by tracewh and by nsys-ai 0.3.0: the same
    events, communicators, message sizes, communicator sizes and ranks; reduction and root equal
    in their 4 bytes (nsys-ai reads the struct's 4 padding bytes after them too)."""
    _, truth, _ = job
    assert _same_exports(PEER["spec"], SPEC)  # the recorded numbers are of these exports
    for path in truth.files:
        db = sqlite3.connect(path)
        mine = nvtx_payload.read(db, warnings := []).to_pylist()
        db.close()
        assert not warnings
        got = {(r["pid"], r["start"]): (r["comm"], r["bytes"], r["nranks"], r["comm_rank"], r["reduce_op"], r["root"])
               for r in mine}
        want = {(pid, start): (comm, size, nranks, rank, _low32(redop), _low32(root))
                for _, pid, start, comm, size, nranks, rank, redop, root in PEER["files"][path.name]["events"]}
        assert len(want) == 36 and got == want


def test_a_real_export_without_blobs(shared_data):
    """The real 2-rank export has NCCL ranges and payload schemas, but was exported without
    --include-blobs: nsys-ai decodes nothing, and neither does tracewh."""
    info = read_export_info(shared_data / "nsys" / "nsys-ai" / "mfu_2gpu_before.sqlite")
    assert PEER["real"]["events"] == 0
    assert not info.include_blobs and info.payloads is None


def test_payload_schemas_of_another_layout_are_a_warning(job, tmp_path):
    """A schema table without the column the decoder needs: the file loads as one without
    blobs (no communicator, ranks from process order), with a warning saying why."""
    _, truth, _ = job
    path = tmp_path / "node0.sqlite"
    shutil.copy(next(p for p, ranks in truth.file_ranks.items() if ranks == [0, 1]), path)
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE NVTX_PAYLOAD_SCHEMAS RENAME COLUMN payloadSize TO size")
    db.commit()
    db.close()
    con = tracewh.connect(tmp_path / "w.duckdb")
    (result,) = ingest_paths(con, [path], run="odd", jobs=1)
    assert result.status == "ingested"
    assert [w for w in result.warnings if w.startswith("NVTX payloads not read (no such column: payloadSize)")]
    assert con.execute("SELECT count(comm_id) FROM nccl_ops").fetchone() == (0,)
    assert {s for (s,) in con.execute("SELECT rank_source FROM ranks").fetchall()} == {"process-order"}
    con.close()


def test_a_capture_that_missed_the_communicators_init(job, tmp_path):
    """Without the init payloads (the capture started after ncclCommInitRank): communicators and
    sizes are still known, the communicator's size is not, so a gathered size is unknown (NULL,
    never the one rank's share) and the ranks come from process order."""
    _, truth, _ = job
    path = tmp_path / "node1.sqlite"
    shutil.copy(next(p for p, ranks in truth.file_ranks.items() if ranks == [2, 3]), path)
    db = sqlite3.connect(path)
    db.execute("UPDATE NVTX_EVENTS SET binaryData = NULL WHERE textId = "
               "(SELECT id FROM StringIds WHERE value = 'ncclCommInitRankConfig')")
    db.commit()
    db.close()
    con = tracewh.connect(tmp_path / "w.duckdb")
    ingest_paths(con, [path], run="late", jobs=1)
    got = dict(((c, b) for c, *b in con.execute(
        "SELECT collective, count(comm_id), count(group_size), min(full_bytes), max(full_bytes) "
        "FROM nccl_ops GROUP BY collective").fetchall()))
    n = 2 * SPEC.iterations  # operations of each kind in the file (2 ranks)
    assert got["AllReduce"] == [n, 0, 25 << 20, 25 << 20]
    assert got["AllGather"] == [n, 0, None, None]
    assert got["ReduceScatter"] == [n, 0, None, None]
    assert got["Send"][:2] == [n, 0]
    assert {s for (s,) in con.execute("SELECT rank_source FROM ranks").fetchall()} == {"process-order"}
    con.close()


def test_a_big_export_streamed_alone_carries_its_payloads(job, tmp_path, monkeypatch):
    """An export above SMALL_FILE_BYTES is streamed into temp tables and written alone, not in a
    batch: the same payloads, the same ranks."""
    from tracewh.ingest import nsys

    con, truth, _ = job
    node1 = next(p for p, ranks in truth.file_ranks.items() if ranks == [2, 3])
    monkeypatch.setattr(nsys, "SMALL_FILE_BYTES", 0)
    alone = tracewh.connect(tmp_path / "w.duckdb")
    ingest_paths(alone, [node1], run="job", jobs=1)
    query = ("SELECT rank, start_ns, collective, comm_id, full_bytes, op_key FROM nccl_ops "
             "WHERE rank >= 2 ORDER BY ALL")
    got = alone.execute(query).fetchall()
    alone.close()
    assert got == con.execute(query).fetchall() and len(got) > 0
