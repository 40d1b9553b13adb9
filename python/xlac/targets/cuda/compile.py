"""``xlac.compile(..., target="cuda")``: StableHLO -> PTX + host schedule.

Compiling needs no GPU: only running does (``xlac.targets.cuda.runtime``), and on
a machine without one ``run`` raises CudaUnavailable saying so.
"""

from __future__ import annotations

from xlac.targets.cuda import pipeline as cuda_pipeline
from xlac.pipeline import pipelines
from xlac.targets.cuda.ptx import kernel_modules, to_ptx
from xlac.targets.cuda.schedule import read_schedule
from xlac.executable import Executable
from xlac.targets.cuda.runtime import CudaFunction
from xlac.signature import entry_signature


class CudaStages:
    """The CPU stages up to "linalg" (shared), then "gpu" and "ptx" (kept from the compile)."""

    def __init__(self, shared, kernels_text: str, gpu_text: str, ptx: str):
        self._shared = shared
        self._own = {"kernels": kernels_text, "gpu": gpu_text, "ptx": ptx}

    def names(self) -> list[str]:
        return ["input", "stablehlo", "fused", "linalg", "kernels", "gpu", "ptx"]

    def text(self, stage: str) -> str:
        if stage in self._own:
            return self._own[stage]
        if stage not in self.names():
            from xlac.errors import CompileError
            raise CompileError(f"<unknown>: error: no stage '{stage}' on target cuda",
                               f"stages: {', '.join(self.names())}")
        return self._shared.text(stage)

    def module(self, stage: str):
        return self._shared.module(stage)


def compile_cuda(module, stages, entry: str, session) -> Executable:
    """``module`` (parsed input) -> an Executable whose function runs on the GPU.

    ``session`` (xlac.debug.dump.CompileSession) runs each stage, so XLAC_DUMP_TO,
    --mlir-timing and reproducers work as on the CPU.
    """
    session.run(module, "stablehlo", pipelines.ingest(entry, "cuda"))
    signature = entry_signature(module, entry)
    session.run(module, "fused", pipelines.fuse())
    session.run(module, "linalg", pipelines.lower_to_linalg())
    for stage, steps in cuda_pipeline.CUDA_STAGES.items():
        session.run(module, stage, steps())
        if stage == "kernels":
            kernels_text = str(module)          # what the emulator runs (xlac_emulator.simt)
    schedule = read_schedule(module, entry)
    ptx = session.jit(lambda: to_ptx(kernel_modules(module)), "ptx (llvmlite NVPTX -O3)")
    function = function_for(ptx, schedule, signature, kernels_text)
    return Executable(function, signature, CudaStages(stages, kernels_text, str(module), ptx),
                      "cuda", entry=entry)


def function_for(ptx: str, steps: list, signature, kernels: str) -> CudaFunction:
    """The runtime function for a compiled (or cached) program."""
    return CudaFunction(ptx, steps, [_nbytes(s) for s in signature.inputs],
                        [_nbytes(s) for s in signature.outputs], kernels=kernels)


def _nbytes(spec) -> int:
    import numpy as np
    return int(np.prod(spec.shape, dtype=np.int64)) * np.dtype(spec.dtype).itemsize
