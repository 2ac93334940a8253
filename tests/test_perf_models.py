"""op_efficiency and mfu on a generated Kineto job whose shapes, kernel times and device (B200) are
known: FLOPs, bytes, TFLOP/s and MFU computed here by hand from the generator's truth."""

from __future__ import annotations

import pytest

import tracewh
from tracewh.generate.kineto import HIDDEN, TOKENS, KinetoJobSpec, generate_kineto_job
from tracewh.ingest import ingest_paths
from tracewh.metrics import find_metric, run_metric

LAYERS, ITERATIONS = 2, 3
M, K, N = TOKENS, HIDDEN, HIDDEN            # x (8192 x 4096) by w (4096 x 4096), bf16
ADDMM_FLOPS = 2 * M * N * K + M * N         # aten::addmm: bias adds m x n
MM_FLOPS = 2 * M * N * K
ADDMM_BYTES = (M * K + K * N + M * N + N) * 2
MM_BYTES = (M * K + K * N + M * N) * 2
X_ELEMS, W_ELEMS = M * K, K * N
B200_BF16, B200_TBPS = 2250.0, 8.0          # device_peaks: HGX B200, dense
# kernel name prefix -> FLOPs of the op that launched it (ADD: aten::add on x, aten::add_ on w,
# one of each per layer and iteration, told apart below by count)
FLOPS_BY_KERNEL = {"nvjet_tst_192x192": ADDMM_FLOPS, "nvjet_tst_192x208": MM_FLOPS,
                   "nvjet_tst_256x128": MM_FLOPS, "nvjet_tst_128x256": MM_FLOPS}


def _job(tmp_path_factory, record_shapes: bool):
    out = tmp_path_factory.mktemp("perf")
    truth = generate_kineto_job(out / "traces", KinetoJobSpec(
        world_size=2, iterations=ITERATIONS, layers=LAYERS, seed=5, record_shapes=record_shapes))
    con = tracewh.connect(out / "wh.duckdb")
    results = ingest_paths(con, [out / "traces"], jobs=1)
    assert {r.status for r in results} == {"ingested"}, [r.message for r in results]
    return con, truth


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    con, truth = _job(tmp_path_factory, True)
    yield con, truth
    con.close()


def _rows(con, metric: str, **params) -> list[dict]:
    return run_metric(con, find_metric(metric), params).to_pylist()


def _gpu_ns(truth, rank: int, prefixes: tuple[str, ...]) -> int:
    return sum(k.end_ns - k.start_ns for k in truth.kernels[rank] if k.name.startswith(prefixes))


def test_gemm_flops_bytes_and_tflops_per_shape(job):
    con, truth = job
    rows = {r["name"]: r for r in _rows(con, "op_efficiency", rank=0) if r["family"] == "GEMM"}
    assert set(rows) == {"aten::addmm", "aten::mm"}  # aten::linear launches nothing itself
    addmm, mm = rows["aten::addmm"], rows["aten::mm"]

    assert addmm["gflops"] == ADDMM_FLOPS / 1e9 and addmm["bytes"] == ADDMM_BYTES
    assert addmm["instances"] == LAYERS * ITERATIONS and addmm["dtype"] == "bf16"
    gpu_ns = _gpu_ns(truth, 0, ("nvjet_tst_192x192",))
    assert addmm["gpu_ns"] == gpu_ns
    assert addmm["tflops_per_s"] == pytest.approx(ADDMM_FLOPS * LAYERS * ITERATIONS / gpu_ns / 1e3, rel=1e-12)
    assert addmm["tb_per_s"] == pytest.approx(ADDMM_BYTES * LAYERS * ITERATIONS / gpu_ns / 1e3, rel=1e-12)
    assert addmm["intensity"] == pytest.approx(ADDMM_FLOPS / ADDMM_BYTES, rel=1e-12)
    # intensity (~1,500 FLOP/B) x 8 TB/s is far above 2,250 TFLOP/s: compute-bound
    assert addmm["device"] == "B200" and addmm["peak_tflops"] == B200_BF16 and addmm["peak_tbps"] == B200_TBPS
    assert addmm["bound"] == "compute"
    assert addmm["pct_of_bound"] == pytest.approx(100 * addmm["tflops_per_s"] / B200_BF16, rel=1e-12)
    assert addmm["reason"] is None

    # one shape for the forward mm and the four backward ones (dgrad, wgrad of mm and addmm)
    assert mm["gflops"] == MM_FLOPS / 1e9 and mm["bytes"] == MM_BYTES
    assert mm["instances"] == 5 * LAYERS * ITERATIONS
    mm_ns = _gpu_ns(truth, 0, ("nvjet_tst_192x208", "nvjet_tst_256x128", "nvjet_tst_128x256"))
    assert mm["gpu_ns"] == mm_ns
    assert mm["tflops_per_s"] == pytest.approx(MM_FLOPS * 5 * LAYERS * ITERATIONS / mm_ns / 1e3, rel=1e-12)


def test_roofline_gemm_family_and_roof_from_the_truth(job):
    """roofline: the GEMM family of the run (both ranks, every shape) summed from the kernels
    the generator wrote, and the B200 bf16 roof."""
    con, truth = job
    rows = _rows(con, "roofline")
    gemm = next(r for r in rows if r["family"] == "GEMM")
    kernels = [k for ranks in truth.kernels.values() for k in ranks
               if k.name[:17] in FLOPS_BY_KERNEL]
    flops = sum(FLOPS_BY_KERNEL[k.name[:17]] for k in kernels)
    nbytes = sum(ADDMM_BYTES if FLOPS_BY_KERNEL[k.name[:17]] == ADDMM_FLOPS else MM_BYTES
                 for k in kernels)
    gpu_ns = sum(k.end_ns - k.start_ns for k in kernels)
    assert len(kernels) == 2 * 6 * LAYERS * ITERATIONS  # per rank and layer: addmm and 5 mm
    assert (gemm["flops"], gemm["bytes"], gemm["gpu_ns"]) == (flops, nbytes, gpu_ns)
    assert gemm["intensity"] == pytest.approx(flops / nbytes, rel=1e-12)
    assert gemm["tflops_per_s"] == pytest.approx(flops / gpu_ns / 1e3, rel=1e-12)
    families = [r for r in rows if r["family"] is not None]
    assert sum(r["gpu_pct"] for r in families) == pytest.approx(100, rel=1e-12)
    assert gemm["gpu_pct"] == pytest.approx(100 * gpu_ns / sum(r["gpu_ns"] for r in families))
    roofs = [r for r in rows if r["family"] is None]
    assert [(r["device"], r["dtype"], r["peak_tflops"], r["peak_tbps"], r["ridge_intensity"],
             r["reason"]) for r in roofs] == [("B200", "bf16", B200_BF16, B200_TBPS,
                                               B200_BF16 / B200_TBPS, None)]


def test_roofline_without_a_known_device_says_why(job):
    con, _ = job
    roofs = [r for r in _rows(con, "roofline", device="Imaginary GPU 9000") if r["family"] is None]
    assert roofs and all(r["peak_tflops"] is None and r["reason"] for r in roofs)


def test_elementwise_and_reduction_models(job):
    con, _ = job
    rows = {r["name"]: r for r in _rows(con, "op_efficiency", rank=1)}
    assert rows["aten::gelu"]["gflops"] * 1e9 == X_ELEMS                   # one FLOP per element
    assert rows["aten::gelu"]["bytes"] == 2 * X_ELEMS * 2                 # read x, write y (bf16)
    assert rows["aten::add"]["bytes"] == 3 * X_ELEMS * 2                  # two inputs, one output
    assert rows["aten::add_"]["gflops"] * 1e9 == W_ELEMS
    assert rows["aten::sum"]["family"] == "reduce" and rows["aten::sum"]["gflops"] * 1e9 == X_ELEMS
    assert rows["aten::gelu"]["bound"] == "memory"


def test_per_instance_rows_add_up_to_the_shape_row(job):
    con, _ = job
    shape = [r for r in _rows(con, "op_efficiency", rank=0) if r["name"] == "aten::mm"]
    inst = [r for r in _rows(con, "op_efficiency", rank=0, per="instance") if r["name"] == "aten::mm"]
    assert len(shape) == 1 and shape[0]["external_id"] is None
    assert len(inst) == shape[0]["instances"] and len({r["external_id"] for r in inst}) == len(inst)
    assert sum(r["gpu_ns"] for r in inst) == shape[0]["gpu_ns"]


def _iteration_flops(truth, rank: int, n: int) -> int:
    """FLOPs of the modelled ops whose kernels ran in iteration n, from the kernels' names."""
    kernels = [k for k in truth.kernels[rank] if k.iteration == n]
    flops = sum(FLOPS_BY_KERNEL.get(k.name[:17], 0) for k in kernels)
    flops += sum(1 for k in kernels if "Gelu" in k.name) * X_ELEMS          # gelu and gelu_backward
    assert sum(1 for k in kernels if "CUDAFunctor_add" in k.name) == 2 * LAYERS
    flops += LAYERS * (X_ELEMS + W_ELEMS)                                  # add (x) and add_ (w)
    flops += sum(1 for k in kernels if "reduce_kernel" in k.name) * X_ELEMS  # aten::sum
    return flops


def test_mfu_per_iteration(job):
    con, truth = job
    rows = {(r["rank"], r["iteration"]): r for r in _rows(con, "mfu")}
    assert len(rows) == 2 * ITERATIONS
    for rank in (0, 1):
        for n, start, end in truth.iterations[rank]:
            kernels = [k for k in truth.kernels[rank] if k.iteration == n]
            flops = _iteration_flops(truth, rank, n)
            step_ns = end - start
            row = rows[(rank, n)]
            assert row["step_ns"] == step_ns
            assert row["counted_tflop"] == pytest.approx(flops / 1e12, rel=1e-12)
            assert row["dtype"] == "bf16" and row["peak_tflops"] == B200_BF16
            assert row["counted_mfu_pct"] == pytest.approx(100 * flops / step_ns / 1e3 / B200_BF16, rel=1e-12)
            modelled_ns = sum(k.end_ns - k.start_ns for k in kernels
                              if not k.name.startswith(("ncclDevKernel", "void at::native::(anonymous"))
                              and "multi_tensor_apply" not in k.name)
            all_ns = sum(k.end_ns - k.start_ns for k in kernels)
            assert row["modelled_gpu_ns"] == modelled_ns and row["kernel_ns"] == all_ns
            assert row["covered_gpu_pct"] == pytest.approx(100 * modelled_ns / all_ns, rel=1e-12)
            assert row["model_mfu_pct"] is None and "no parameter count" in row["reason"]


def test_mfu_from_the_parameters_and_a_device_override(job):
    con, truth = job
    params = 1.5e9
    con.execute("UPDATE store.runs SET batch_size = 16, seq_len = 4096")
    try:
        rows = _rows(con, "mfu", rank=0, parameters=params, device="NVIDIA H100 80GB HBM3")
    finally:
        con.execute("UPDATE store.runs SET batch_size = NULL, seq_len = NULL")
    n, start, end = truth.iterations[0][0]
    row = [r for r in rows if r["iteration"] == n][0]
    tokens_per_s = 16 * 4096 / 2 * 1e9 / (end - start)                    # world size 2
    assert row["device"] == "H100 SXM" and row["peak_tflops"] == 989.5
    assert row["model_mfu_pct"] == pytest.approx(100 * 6 * params * tokens_per_s / 989.5e12, rel=1e-12)


def test_throughput_tflops_per_gpu(job):
    con, truth = job
    params = 1.5e9
    con.execute("UPDATE store.runs SET batch_size = 16, seq_len = 4096")
    try:
        (row,) = _rows(con, "throughput", parameters=params)
    finally:
        con.execute("UPDATE store.runs SET batch_size = NULL, seq_len = NULL")
    middle = truth.iterations[0][1][0]       # first and last iterations are left out
    assert row["iterations"] == 1
    flops = (_iteration_flops(truth, 0, middle) + _iteration_flops(truth, 1, middle)) / 2
    assert row["tflops_per_gpu"] == pytest.approx(flops / row["median_iteration_ns"] / 1e3, rel=1e-12)
    assert row["model_tflops_per_gpu"] == pytest.approx(
        6 * params * (16 * 4096 * 1e9 / row["median_iteration_ns"]) / 2 / 1e12, rel=1e-12)


def test_unknown_device_gives_null_peaks_and_says_why(job):
    con, _ = job
    rows = _rows(con, "op_efficiency", rank=0, device="Imaginary GPU 9000")
    assert all(r["peak_tflops"] is None and r["pct_of_bound"] is None for r in rows)
    assert {r["reason"] for r in rows} == {"device 'Imaginary GPU 9000' is not in device_peaks (version 2)"}
    assert all(r["tflops_per_s"] > 0 for r in rows)


def test_a_trace_without_shapes_says_so_once_per_rank(tmp_path_factory):
    con, _ = _job(tmp_path_factory, False)
    try:
        rows = _rows(con, "op_efficiency")
        assert [(r["rank"], r["name"], r["gflops"]) for r in rows] == [(0, None, None), (1, None, None)]
        assert all("record_shapes=False" in r["reason"] for r in rows)
        mfu = _rows(con, "mfu", rank=0)
        assert all(r["counted_tflop"] is None and "record_shapes=False" in r["reason"] for r in mfu)
    finally:
        con.close()


def test_an_mi250x_rank_gets_one_gcds_peaks(job):
    """ROCm shows each of an MI250X's two dies (GCDs) as a GPU and a rank runs on one: the
    datasheet's module figures (383 TFLOP/s FP16/BF16, 3.2768 TB/s) halved."""
    con, _ = job
    row = [r for r in _rows(con, "op_efficiency", rank=0, device="AMD Instinct MI250X")
           if r["name"] == "aten::addmm"][0]
    assert (row["device"], row["peak_tflops"], row["peak_tbps"]) == ("MI250X", 383 / 2, 3.2768 / 2)
