"""The CUDA target's machine code: the host schedule read from the "gpu"
stage, PTX made from its gpu.modules, and the runtime function that runs them.

Compiling needs no GPU: only running does (``xlac.targets.cuda.runtime``),
and on a machine without one a call raises CudaUnavailable saying so.
"""

from __future__ import annotations

from dataclasses import replace

from xlac.targets.cuda.control_flow import map_steps
from xlac.targets.cuda.ptx import kernel_modules, shared_kernels, to_ptx
from xlac.targets.cuda.ptx_isolation import start_worker
from xlac.targets.cuda.runtime import function_for
from xlac.targets.cuda.schedule import Launch, read_schedule


class CudaCompiler:
    """Machine code for one compile (``Target.compile`` drives it)."""

    def __init__(self, options, grid):
        from xlac.mlir import op_classes
        op_classes("linalg")               # the GPU passes were written with linalg's op classes
        self.options = options
        self.grid = grid                   # an SPMD program's device grid (None: one device)

    def ingested(self, module, entry: str, signature, runner) -> None:
        start_worker()                     # the NVPTX worker starts while the passes run
        from xlac.signature import entry_donations
        self.donations = entry_donations(module, entry, signature)   # later stages drop them

    def machine_code(self, module, entry: str, signature, kept: dict, runner):
        """``module`` at the "gpu" stage -> a CudaFunction; ``kept``: the texts of
        the stages that go with it ("kernels" is what the emulator runs)."""
        steps = read_schedule(module, entry)
        ptx, canonical = runner.machine_code(lambda: _ptx(module), "ptx (llvmlite NVPTX -O3)")
        schedule = map_steps(steps, lambda step: replace(step, kernel=canonical[step.kernel])
                             if isinstance(step, Launch) else step)   # identical kernels: one PTX entry
        return function_for(ptx, schedule, signature, kept["kernels"], kept["gpu"], self.options,
                            self.grid, getattr(self, "donations", None))


def _ptx(module) -> tuple[str, dict[str, str]]:
    """PTX of the distinct kernels of ``module``, and each kernel's name -> its entry's."""
    distinct, canonical = shared_kernels(kernel_modules(module))
    return to_ptx(distinct), canonical
