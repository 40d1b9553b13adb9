"""The CUDA target, as a newcomer reads it: its stages in order, then its
capabilities. The stages up to "linalg" are every target's; the CUDA passes
after them are listed in ``xlac.targets.cuda.pipeline`` and written in
``passes/gpu``. Machine code: ``xlac.targets.cuda.compile`` (the host schedule
read from the "gpu" stage, PTX by ``xlac.targets.cuda.ptx``); running it, and
reading it back from bytes: ``xlac.targets.cuda.runtime``. Compiling needs no GPU, running does.
"""

from __future__ import annotations

from xlac.targets.cuda.pipeline import gpu_loops_stage, gpu_stage, kernels_stage, library_contractions
from xlac.targets.target import Stage, Target, front_stages

CUDA = Target(
    name="cuda",
    summary="NVIDIA GPUs (sm_90): PTX through llvmlite's NVPTX, a host schedule run by the driver",
    stages=(
        # input, stablehlo, fused, linalg: every target's (complex dots kept
        # complex: the fma of the matmul kernel would drift from the interpreter)
        # (matmuls on cuBLASLt keep bf16/f16 operands narrow: cuda_contractions)
        *front_stages("cuda", complex_as_real=False, parallel_rows=False,
                      library_contractions=library_contractions),
        Stage("gpu-loops", "memrefs; every loop nest an scf.parallel on tiles, matmuls (and convolutions "
              "as matmuls) as cuBLASLt calls or shared-memory kernels", gpu_loops_stage),
        Stage("kernels", "each kernel a gpu.func in a gpu.module; the host function a straight "
              "line of allocations, copies and launches", kernels_stage, kept=True),
        Stage("gpu", "the gpu.modules in the LLVM and NVVM dialects", gpu_stage, kept=True),
        Stage("ptx", "PTX for sm_90: one entry per distinct kernel, libdevice linked",
              code="xlac.targets.cuda.ptx:module_ptx", kept=True),
    ),
    compiler="xlac.targets.cuda.compile:CudaCompiler",
    loader="xlac.targets.cuda.runtime:load_function",
    device_kind="gpu",
    profiles=True,                 # CUDA events around each launch (runtime.CudaFunction.profiled)
    input_keyed=True,              # a hit loads the PTX and schedule: no MLIR
)


def whole_pipeline(entry: str = "main", remarks=None, cuda_contractions=None, matmul_precision=None,
                   collective_bucket_bytes=None, disable_passes=None) -> list[str]:
    """``xla-cuda-pipeline``: every pass stage of ``CUDA`` in a row, up to the
    gpu.modules (PTX is made from them in Python), from the Options the
    compiler would have: ``remarks`` (``fusion_remarks``) and the Options
    fields of the other names; one not given keeps Options' default, as in a
    compile (``cuda_contractions`` auto: matmuls on cuBLASLt where it is found)."""
    return CUDA.pipeline_of(entry, fusion_remarks=remarks, cuda_contractions=cuda_contractions,
                            matmul_precision=matmul_precision,
                            collective_bucket_bytes=collective_bucket_bytes, disable_passes=disable_passes)
