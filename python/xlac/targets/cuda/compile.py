"""``xlac.compile(..., target="cuda")``: StableHLO -> PTX + host schedule.

Compiling needs no GPU: only running does (``xlac.targets.cuda.runtime``), and on
a machine without one ``run`` raises CudaUnavailable saying so.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from xlac.collectives import program_grid
from xlac.errors import CompileError, error
from xlac.executable import Executable
from xlac.pipeline import pipelines
from xlac.signature import entry_signature
from xlac.targets.cuda import pipeline as cuda_pipeline
from xlac.targets.cuda import serialize
from xlac.targets.cuda.ptx import kernel_modules, shared_kernels, to_ptx
from xlac.targets.cuda.runtime import CudaFunction
from xlac.targets.cuda.schedule import Launch, read_schedule

STAGES = ["input", "stablehlo", "fused", "linalg", "kernels", "gpu", "ptx"]


class CudaStages:
    """The CPU stages up to "linalg" (shared), then "kernels", "gpu" and "ptx" (kept)."""

    def __init__(self, shared, function: CudaFunction, remarks=()):
        self._shared = shared
        self._own = {"kernels": function.kernels, "gpu": function.gpu, "ptx": function.ptx}
        self.remarks = list(remarks)            # the GPU pipeline's own, from the compile

    def names(self) -> list[str]:
        return list(STAGES)

    def text(self, stage: str) -> str:
        if stage in self._own:
            return self._own[stage]
        if stage not in STAGES:
            raise CompileError(error(f"no stage '{stage}' on target cuda"),
                               f"stages: {', '.join(STAGES)}")
        return self._shared.text(stage)

    def module(self, stage: str):
        return self._shared.module(stage)


class CudaTarget:
    name = "cuda"

    def pipeline(self, entry: str, options) -> list[str]:
        return cuda_pipeline.cuda(entry, options.fusion_remarks)

    def stage_names(self) -> list[str]:
        return list(STAGES)

    def compile(self, module, stages, entry: str, runner) -> Executable:
        """``module`` (parsed input) -> an Executable whose function runs on the GPU."""
        options = runner.options
        grid = program_grid(module.operation)
        runner.run(module, "stablehlo", pipelines.ingest(entry, "cuda"))
        signature = entry_signature(module, entry)
        runner.run(module, "fused", pipelines.fuse(options.fusion_remarks))
        runner.run(module, "linalg", pipelines.lower_to_linalg())
        for stage, steps in cuda_pipeline.CUDA_STAGES.items():
            runner.run(module, stage, steps())
            if stage == "kernels":
                kernels = str(module)          # what the emulator runs (test/support)
        steps = read_schedule(module, entry)
        ptx, canonical = runner.machine_code(lambda: _ptx(module), "ptx (llvmlite NVPTX -O3)")
        schedule = [replace(step, kernel=canonical[step.kernel]) if isinstance(step, Launch)
                    else step for step in steps]       # identical kernels: one PTX entry
        function = function_for(ptx, schedule, signature, kernels, str(module), options, grid)
        return Executable(function, signature, CudaStages(stages, function, runner.remarks),
                          "cuda", entry=entry)

    def deserialize(self, blob: bytes, what: str, entry: str, stages, options) -> Executable:
        entry_data = serialize.read_entry(blob, entry, what)
        function = function_for(entry_data.ptx, entry_data.steps, entry_data.signature,
                                entry_data.kernels, entry_data.gpu, options, entry_data.grid)
        return Executable(function, entry_data.signature, CudaStages(stages, function),
                          "cuda", entry=entry)


def _ptx(module) -> tuple[str, dict[str, str]]:
    """PTX of the distinct kernels of ``module``, and each kernel's name -> its entry's."""
    distinct, canonical = shared_kernels(kernel_modules(module))
    return to_ptx(distinct), canonical


def function_for(ptx: str, steps: list, signature, kernels: str, gpu: str,
                 options, grid=None) -> CudaFunction:
    """The runtime function for a compiled (or cached) program."""
    return CudaFunction(ptx, steps, [_nbytes(s) for s in signature.inputs],
                        [_nbytes(s) for s in signature.outputs], kernels=kernels, gpu=gpu,
                        use_graphs=options.cuda_graphs, grid=grid, device=options.local_rank)


def _nbytes(spec) -> int:
    return math.prod(spec.shape) * np.dtype(spec.dtype).itemsize
