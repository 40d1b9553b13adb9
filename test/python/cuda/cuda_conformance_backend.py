"""A conformance backend for machines without a GPU: compile for cuda once,
validate the PTX with ptxas (sm_90), then run the kernels in the SIMT
emulator (``xlac_emulator.simt``) on the CPU and return their results.

So a test passes when its PTX is valid and the CUDA schedule and kernels
compute the right numbers; kernels the emulator cannot run fail with an
EmulationError naming the op. The numbers on a real GPU (NVPTX code, libdevice)
are checked by test/support/gpu_check.sh where one exists.
"""

import sys
from pathlib import Path

import xlac
from xlac.targets.cuda.ptx import ptxas

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))   # the runner's workers
from xlac_emulator.simt import run_emulated  # noqa: E402


def run(mlir_text, inputs):
    exe = xlac.compile(mlir_text, target="cuda")
    ptxas(exe.as_text("ptx"))
    return run_emulated(exe, *inputs)
