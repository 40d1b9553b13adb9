"""A conformance backend for machines without a GPU: compile for cuda once,
validate the PTX with ptxas (sm_90), then run the kernels in the SIMT
emulator (``xlac.runtime.simt``) on the CPU and return their results.

So a test passes when its PTX is valid and the CUDA schedule and kernels
compute the right numbers; kernels the emulator cannot run fail with an
EmulationError naming the op. The numbers on a real GPU (NVPTX code, libdevice)
are checked by tools/gpu_check.sh where one exists.
"""

import xlac
from xlac.cuda_ptx import ptxas
from xlac.runtime.simt import run_emulated


def run(mlir_text, inputs):
    exe = xlac.compile(mlir_text, target="cuda")
    ptxas(exe.as_text("ptx"))
    return run_emulated(exe, *inputs)
