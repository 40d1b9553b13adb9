"""A conformance backend for machines without a GPU: compile for cuda and run
the kernels in the SIMT emulator (``xlac.runtime.simt``) on the CPU.

So a test passes when the CUDA schedule and kernels compute the right
numbers; kernels the emulator cannot run fail with an EmulationError naming
the op. PTX validity is ptx_conformance_backend.py's job.
"""

import xlac
from xlac.runtime.simt import run_emulated


def run(mlir_text, inputs):
    return run_emulated(xlac.compile(mlir_text, target="cuda"), *inputs)
