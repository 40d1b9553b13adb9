"""A process's first compile imports no generated op classes of the dialects xlac
only reads (``xlac.mlir``'s ``_OpViewsOnly.PLAIN``): their ops stay plain OpViews,
and the transform interpreter comes from its extension alone; nor the sort and
scatter builders of a program without sorts or scatters. Structure, not timing:
each of these modules cost 1-15 ms of a first compile's import time."""

from __future__ import annotations

import json
import subprocess
import sys

# a contraction with an epilogue: the schedules' transform script runs, and the
# passes read vector, scf, memref, affine, math and tensor ops
PROGRAM = """
func.func public @main(%a: tensor<32x64xf32>, %b: tensor<64x48xf32>) -> tensor<32x48xf32> {
  %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
         : (tensor<32x64xf32>, tensor<64x48xf32>) -> tensor<32x48xf32>
  %e = stablehlo.exponential %d : tensor<32x48xf32>
  return %e : tensor<32x48xf32>
}
"""

PROBE = f"""
import json, sys
import numpy as np
import xlac
program = xlac.compile({PROGRAM!r}, cpu="x86-64-v3", cache=False)
a, b = np.ones((32, 64), np.float32), np.ones((64, 48), np.float32) / 64
print(json.dumps({{"result": float(np.asarray(program(a, b)).ravel()[0]),
                   "modules": sorted(m for m in sys.modules
                                     if m.startswith(("torch_mlir.dialects", "xlac.passes.lower")))}}))
"""


def test_a_first_compile_imports_no_op_classes_of_read_only_dialects():
    from xlac.mlir import _OpViewsOnly
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert abs(seen["result"] - 2.718281828) < 1e-5
    imported = set(seen["modules"])
    for name in _OpViewsOnly.PLAIN:
        assert f"torch_mlir.dialects.{name}" not in imported
        assert f"torch_mlir.dialects._{name}_ops_gen" not in imported
    assert "torch_mlir.dialects.transform.interpreter" not in imported
    assert "xlac.passes.lower.lower_sort" in imported        # the passes are there, not their builders
    assert not imported & {f"xlac.passes.lower.builders.{name}" for name in BUILDERS}


BUILDERS = ("sort_kernel", "sort_radix", "sort_rows", "scatter_region", "scatter_rows",
            "scatter_text", "scatter_updates")


def test_building_through_dialect_still_gets_the_generated_classes():
    from xlac.mlir import dialect
    assert hasattr(dialect("vector"), "BroadcastOp")
    assert hasattr(dialect("scf"), "ForOp")
