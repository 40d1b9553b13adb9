"""``xlac.compile(..., target="cuda")``: StableHLO -> PTX + host schedule.

Compiling needs no GPU: only running does (``xlac.runtime.cuda``), and on
a machine without one ``run`` raises CudaUnavailable saying so.
"""

from __future__ import annotations

from xlac import cuda_pipeline, pipelines
from xlac.cuda_ptx import kernel_modules, to_ptx
from xlac.cuda_schedule import read_schedule
from xlac.executable import Executable
from xlac.pass_manager import run_passes
from xlac.runtime.cuda import CudaFunction
from xlac.signature import entry_signature


class CudaStages:
    """The CPU stages up to "linalg" (shared), then "gpu" and "ptx" (kept from the compile)."""

    def __init__(self, shared, gpu_text: str, ptx: str):
        self._shared = shared
        self._own = {"gpu": gpu_text, "ptx": ptx}

    def names(self) -> list[str]:
        return ["input", "stablehlo", "fused", "linalg", "gpu", "ptx"]

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


def compile_cuda(module, stages, entry: str, disabled: frozenset[str]) -> Executable:
    """``module`` (parsed input) -> an Executable whose function runs on the GPU."""
    run_passes(module, pipelines.ingest(entry, "cuda"), disabled=disabled)
    signature = entry_signature(module, entry)
    steps = pipelines.fuse() + pipelines.lower_to_linalg()
    run_passes(module, steps + cuda_pipeline.bufferize() + cuda_pipeline.to_gpu(), disabled=disabled)
    schedule = read_schedule(module, entry)
    ptx = to_ptx(kernel_modules(module))
    function = CudaFunction(ptx, schedule, [_nbytes(s) for s in signature.inputs],
                            [_nbytes(s) for s in signature.outputs])
    return Executable(function, signature, CudaStages(stages, str(module), ptx), "cuda", entry=entry)


def _nbytes(spec) -> int:
    import numpy as np
    return int(np.prod(spec.shape, dtype=np.int64)) * np.dtype(spec.dtype).itemsize
