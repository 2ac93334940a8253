"""Two runs of one generated nsys job, the second with known kernel changes: what a diff must find.

``generate_pair(out_dir, spec)`` writes ``out_dir/base/`` (the job as ``generate_job`` makes it)
and ``out_dir/test/`` (the same spec and seed with ``CHANGES`` applied), so ``tracewh ingest
out_dir`` gives runs ``base`` and ``test``. The default changes, per rank and iteration:

    slowed     the weight-gradient GEMM (backward, once per layer) takes 2x as long: the
               largest change in step time
    sped up    flash attention forward (once per layer) takes half as long
    removed    the neg kernel (backward, once per layer)
    added      a dropout kernel after GELU (forward, once per layer)
    renamed    layer norm compiled with another template argument: a new demangled name with the
               same short name ``vectorized_layer_norm_kernel`` (a library upgrade)

Durations are random around each kernel type's mean (as in ``nsys.py``), and a removed kernel
shifts the random sequence of everything after it: the exact totals of both runs are in the two
``JobTruth`` returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from .nsys import (BACKWARD, FLASH_FWD, FORWARD, GELU, GEMM_WGRAD, LAYER_NORM, NEG, PHASES,
                   JobSpec, JobTruth, KernelType, _aten, generate_job)

DROPOUT = _aten(
    "void at::native::<unnamed>::fused_dropout_kernel_vec<c10::BFloat16, float, unsigned int, (int)1, "
    "(int)8, bool>(at::cuda::detail::TensorInfo<const T1, T3>, at::cuda::detail::TensorInfo<T1, T3>, "
    "at::cuda::detail::TensorInfo<T5, T3>, T3, T2, at::PhiloxCudaState)",
    "fused_dropout_kernel_vec",
    "_ZN2at6native12_GLOBAL__N_124fused_dropout_kernel_vecIN3c108BFloat16EfjLi1ELi8EbEEvNS_4cuda6"
    "detail10TensorInfoIKT_T1_EENS7_IS8_SA_EENS7_IT4_SA_EESA_T0_NS_15PhiloxCudaStateE",
    32, (46800, 1, 1), (128, 1, 1), 35_000)
LAYER_NORM_V2 = LAYER_NORM._replace(name=LAYER_NORM.name.replace("(bool)0>", "(bool)1>"))


@dataclass(frozen=True)
class KernelChanges:
    """What the test run does differently, by demangled kernel name."""

    scaled: dict[str, float] = field(default_factory=dict)  # name -> factor on its mean duration
    removed: frozenset[str] = frozenset()
    added: dict[str, KernelType] = field(default_factory=dict)  # name of the kernel it follows -> new
    renamed: dict[str, str] = field(default_factory=dict)  # old name -> new name

    def phases(self) -> tuple[tuple[str, tuple[KernelType, ...]], ...]:
        """The kernels of each phase with these changes, for ``JobSpec.phases``."""
        out = []
        for phase, kernels in PHASES.items():
            changed: list[KernelType] = []
            for kt in kernels:
                if kt.name not in self.removed:
                    changed.append(kt._replace(
                        name=self.renamed.get(kt.name, kt.name),
                        base_ns=round(kt.base_ns * self.scaled.get(kt.name, 1.0))))
                if kt.name in self.added:
                    changed.append(self.added[kt.name])
            out.append((phase, tuple(changed)))
        return tuple(out)


CHANGES = KernelChanges(
    scaled={GEMM_WGRAD.name: 2.0, FLASH_FWD.name: 0.5},
    removed=frozenset({NEG.name}),
    added={GELU.name: DROPOUT},
    renamed={LAYER_NORM.name: LAYER_NORM_V2.name},
)
assert {GEMM_WGRAD, NEG} <= set(BACKWARD) and {FLASH_FWD, GELU, LAYER_NORM} <= set(FORWARD)


def generate_pair(out_dir: str | Path, spec: JobSpec = JobSpec(),
                  changes: KernelChanges = CHANGES) -> tuple[JobTruth, JobTruth]:
    """Write out_dir/base and out_dir/test; return what each holds (base, test)."""
    out_dir = Path(out_dir)
    base = generate_job(out_dir / "base", spec)
    test = generate_job(out_dir / "test", replace(spec, phases=changes.phases()))
    return base, test
