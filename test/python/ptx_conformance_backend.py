"""A conformance backend for machines without a GPU: compile for cuda and
validate the PTX with ptxas, then return the CPU target's results.

So a test "passes" when its PTX is valid and the CPU numbers are right;
the numbers on a GPU are checked by tools/gpu_check.sh where one exists.
"""

import xlac
from xlac.cuda_ptx import ptxas


def run(mlir_text, inputs):
    ptxas(xlac.compile(mlir_text, target="cuda").as_text("ptx"))
    return xlac.compile(mlir_text, target="cpu").run(*inputs)
