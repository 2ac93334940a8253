"""Kernel kinds: tracewh's patterns (sql/kernel_kinds.csv) on real kernel names of every shared
trace and on the communication libraries beyond NCCL; the user's patterns (`tracewh kinds load`)
take precedence and classify stored kernels again."""

from __future__ import annotations

import gzip
import json
import sqlite3

import pytest
from typer.testing import CliRunner

import tracewh
from tracewh.cli import app
from tracewh.generate.nsys import JobSpec, generate_job
from tracewh.ingest import ingest_paths
from tracewh.kinds import load_user_patterns

runner = CliRunner()

# Names as the libraries' kernels are written (DESIGN section 6); all communication. On today's
# patterns before this change every one of them was compute.
OTHER_LIBRARIES = [
    "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*)",
    "void deep_ep::internode::combine<__nv_bfloat16, 8, 2, 4>(int4*, float*, bool*)",
    "dpsk::ep::internode::dispatch",
    "dpsk::ep::internode_ll::combine<7168>",
    "void nvshmemi_transfer_rma_nbi<(nvshmemi_op_t)0>(void*, void*, unsigned long, int)",
    "nvshmem_barrier_all_on_stream_kernel",
    "mscclKernel_Sum_half_LL128",
    "void mscclpp::allreduce7<__half>(__half*, mscclpp::DeviceHandle*, unsigned long)",
    "ucc_ec_cuda_reduce_kernel",
    "void ucc_tl_cuda_alltoallv_ce_kernel(int)",
    "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals)",
    "void tensorrt_llm::kernels::oneShotAllReduceKernel<__nv_bfloat16, 8>(AllReduceParams)",
    "void tensorrt_llm::kernels::twoShotAllReduceKernel<float, 4>(AllReduceParams)",
    "void sglang::custom_all_reduce<float>(float*)",
]
NOT_COMM = {
    "void at::native::reduce_kernel<512, 1>(at::native::ReduceOp<float>)": "compute",
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>": "compute",
    "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn": "compute",
    "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>(Flash_fwd_params)": "compute",
    "cuStreamWaitValue32": "sync",
    "void my::spin_wait(int*)": "sync",
    "": "other",
}


def kernel_names_of_shared_traces(root) -> dict[str, set[str]]:
    """Every kernel name of every shared nsys export and Kineto trace, read from the files."""
    names = {}
    for path in sorted(root.glob("nsys/**/*.sqlite")):
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = con.execute("SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                               "JOIN StringIds s ON s.id = k.demangledName").fetchall()
        except sqlite3.OperationalError:  # an export without kernels (nsys-2024.1)
            rows = []
        finally:
            con.close()
        names[str(path.relative_to(root))] = {r[0] for r in rows}
    for path in sorted([*root.glob("kineto/**/*.json"), *root.glob("kineto/**/*.json.gz")]):
        with (gzip.open(path, "rt") if path.suffix == ".gz" else open(path)) as handle:
            trace = json.load(handle)
        events = trace["traceEvents"] if isinstance(trace, dict) else trace
        names[str(path.relative_to(root))] = {
            e["name"] for e in events if str(e.get("cat", "")).lower() == "kernel" and "name" in e}
    return names


def kinds(con, names) -> dict[str, str]:
    return dict(con.execute("SELECT name, kernel_kind(name) FROM unnest(?) t(name)", [list(names)]).fetchall())


def test_real_kernel_names_of_every_shared_trace(con, shared_data):
    per_trace = kernel_names_of_shared_traces(shared_data)
    every = set().union(*per_trace.values())
    assert len(every) == 627
    # By hand, for these traces: NCCL and RCCL kernels (ncclKernel_*, ncclDevKernel_*) and
    # PyTorch's symmetric-memory all-reduce are communication; nothing else is.
    expected = {n: "comm" if "nccl" in n.lower() or "multimem_all_reduce" in n else "compute"
                for n in every}
    assert kinds(con, every) == expected
    assert sum(kind == "comm" for kind in expected.values()) == 8


def test_communication_libraries_beyond_nccl(con):
    assert kinds(con, OTHER_LIBRARIES) == {name: "comm" for name in OTHER_LIBRARIES}
    assert kinds(con, NOT_COMM) == NOT_COMM


@pytest.fixture
def generated(tmp_path, db_path):
    generate_job(tmp_path / "traces", JobSpec(world_size=2, iterations=2, layers=1, seed=3))
    con = tracewh.connect(db_path)
    results = ingest_paths(con, [tmp_path / "traces"], run="job")
    assert {r.status for r in results} == {"ingested"}
    before = dict(con.execute("SELECT name::VARCHAR, min(kind::VARCHAR) FROM kernels GROUP BY 1").fetchall())
    con.close()
    return db_path, before


def cli_kinds(db_path, *args):
    return runner.invoke(app, ["kinds", *args, "--db", str(db_path)])


def test_user_patterns_come_first_and_classify_stored_kernels_again(generated, tmp_path):
    db_path, before = generated
    compute = sorted(n for n, kind in before.items() if kind == "compute")
    nccl = sorted(n for n, kind in before.items() if kind == "comm")
    assert compute and nccl
    mine = tmp_path / "my_kinds.csv"
    # a compute kernel taken as communication, and a kernel tracewh calls comm taken as other:
    # the user's line wins over tracewh's
    mine.write_text("kind,pattern,note\n"
                    f"comm,^{compute[0][:12]},our fused all-to-all\n"
                    f"other,^{nccl[0][:12]}\n")
    result = cli_kinds(db_path, "load", str(mine))
    assert result.exit_code == 0, result.output
    con = tracewh.connect(db_path, read_only=True)
    after = dict(con.execute("SELECT name::VARCHAR, min(kind::VARCHAR) FROM kernels GROUP BY 1").fetchall())
    gpu_ops = dict(con.execute("SELECT name::VARCHAR, min(kind::VARCHAR) FROM gpu_ops WHERE op = 'kernel' "
                               "GROUP BY 1").fetchall())
    con.close()
    changed = {n: (before[n], after[n]) for n in before if before[n] != after[n]}
    assert changed == {**{n: ("compute", "comm") for n in compute if n.startswith(compute[0][:12])},
                       **{n: ("comm", "other") for n in nccl if n.startswith(nccl[0][:12])}}
    assert gpu_ops == after
    listed = cli_kinds(db_path, "list", "--format", "csv")
    assert listed.exit_code == 0
    lines = listed.stdout.splitlines()
    assert lines[0] == "precedence,kind,pattern,origin,note"
    assert lines[1].startswith("1,comm,^") and lines[1].endswith(",user,our fused all-to-all")
    assert lines[3].startswith("3,comm,^(void )?(nccl") and ",tracewh," in lines[3]
    # --clear gives tracewh's kinds back
    assert cli_kinds(db_path, "load", "--clear").exit_code == 0
    con = tracewh.connect(db_path, read_only=True)
    assert dict(con.execute("SELECT name::VARCHAR, min(kind::VARCHAR) FROM kernels GROUP BY 1").fetchall()) == before
    con.close()


@pytest.mark.parametrize("text, problem", [
    ("kind,pattern\ncommunication,^x\n", "my_kinds.csv:2: kind 'communication' is not one of"),
    ("kind,pattern\ncomm,(unclosed\n", "my_kinds.csv:2: pattern '(unclosed' is not a regular expression"),
    ("name,regex\ncomm,^x\n", "my_kinds.csv:1: a kernel kinds file starts with the header"),
])
def test_a_bad_kinds_file_says_where_and_changes_nothing(generated, tmp_path, text, problem):
    db_path, before = generated
    good = tmp_path / "good.csv"
    good.write_text("kind,pattern\nsync,^nothing_matches_this\n")
    assert cli_kinds(db_path, "load", str(good)).exit_code == 0
    bad = tmp_path / "my_kinds.csv"
    bad.write_text(text)
    result = cli_kinds(db_path, "load", str(bad))
    assert result.exit_code == 1
    assert problem in " ".join(result.stderr.split())
    con = tracewh.connect(db_path, read_only=True)
    assert con.execute("SELECT pattern FROM store.kernel_kinds WHERE origin = 'user'").fetchall() == [
        ("^nothing_matches_this",)]
    con.close()


def test_the_compiled_macro_answers_as_the_table_lookup(con, tmp_path):
    # tracewh makes kernel_kind() a CASE of constant patterns; it must agree with the reference
    # definition, a lookup in store.kernel_kinds in precedence order (quotes in patterns too)
    mine = tmp_path / "kinds.csv"
    mine.write_text("kind,pattern\nsync,it's_a_wait\nother,^ncclDevKernel_Generic\n")
    load_user_patterns(con, mine)
    names = [*OTHER_LIBRARIES, *NOT_COMM, "void it's_a_wait()", "ncclDevKernel_Generic(x)",
             "ncclDevKernel_SendRecv(x)", None]
    reference = con.execute("""
        SELECT name, CASE WHEN name IS NULL OR name = '' THEN 'other'
                          ELSE coalesce((SELECT p.kind FROM store.kernel_kinds p
                                         WHERE regexp_matches(name, p.pattern)
                                         ORDER BY p.origin <> 'user', p.position LIMIT 1), 'compute')
                     END
        FROM unnest(?) t(name)""", [names]).fetchall()
    assert kinds(con, names) == dict(reference)
    assert dict(reference)["void it's_a_wait()"] == "sync"
    assert dict(reference)["ncclDevKernel_Generic(x)"] == "other"
