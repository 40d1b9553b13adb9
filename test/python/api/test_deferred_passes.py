"""A pass with ops to act on and no options is added to its pass manager without
importing its module (``xlac.passes.deferred``): the module is imported where
the program holds one of those ops, and the pass then runs as before.
Structure and results, not timing."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from xlac.context import new_context
from xlac.frontend.parse import parse_module
from xlac.passes.deferred import DeferredPass, deferred
from xlac.pipeline.pass_manager import run_passes

ADD = ("func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
       "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")
CONVOLUTION = """
func.func public @main(%x: tensor<1x3x6x6xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1],
         window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
         : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}
"""

PROBE = """
import json, sys
import numpy as np
import xlac
program = xlac.compile({program!r}, cache=False)
inputs = [np.arange(np.prod(s), dtype=np.float32).reshape(s) / 10 for s in {shapes!r}]
print(json.dumps({{"result": np.asarray(program(*inputs)).ravel().tolist(),
                   "modules": sorted(m for m in sys.modules if m.startswith("xlac.passes."))}}))
"""


def _compiled_in_a_fresh_process(program: str, shapes: list) -> tuple[np.ndarray, set[str]]:
    out = subprocess.run([sys.executable, "-c", PROBE.format(program=program, shapes=shapes)],
                         capture_output=True, text=True, check=True)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    return np.array(seen["result"], np.float32), set(seen["modules"])


def test_a_program_without_the_ops_imports_none_of_those_passes():
    result, imported = _compiled_in_a_fresh_process(ADD, [(4,)])
    np.testing.assert_allclose(result, np.arange(4, dtype=np.float32) / 5)
    for module in ("lower.lower_fft", "lower.canonicalize_convolutions", "lower.lower_collectives",
                   "lower.builders.convolution_text", "ingest.outline_top_k", "cpu.micro_kernel_calls"):
        assert f"xlac.passes.{module}" not in imported, module
    assert "xlac.passes.ingest.check_support" in imported          # acts on every program


def test_a_program_with_the_ops_imports_and_runs_the_pass():
    result, imported = _compiled_in_a_fresh_process(CONVOLUTION, [(1, 3, 6, 6), (4, 3, 3, 3)])
    assert "xlac.passes.lower.canonicalize_convolutions" in imported
    x = np.arange(108, dtype=np.float32).reshape(1, 3, 6, 6) / 10
    w = np.arange(108, dtype=np.float32).reshape(4, 3, 3, 3) / 10
    expected = np.zeros((1, 4, 4, 4), np.float32)
    for i in range(4):
        for j in range(4):
            expected[0, :, i, j] = np.einsum("chw,ochw->o", x[0, :, i:i + 3, j:j + 3], w)
    np.testing.assert_allclose(result, expected.ravel(), rtol=1e-5)


def test_only_passes_with_ops_and_without_options_are_deferred():
    assert isinstance(deferred("xla-lower-fft", {}), DeferredPass)
    assert deferred("xla-lower-fft", {}).acts_on == frozenset({"stablehlo.fft"})
    assert deferred("xla-check-support", {}) is None                 # no ops named: every program
    assert deferred("xla-lower-sort", {"parallel-rows": "true"}) is None   # options checked at once


def test_a_deferred_pass_runs_in_a_pass_manager_where_its_ops_are():
    module = parse_module(new_context(), CONVOLUTION.encode(), "deferred.mlir")
    run_passes(module, ["xla-canonicalize-convolutions"])
    assert "xla_conv" in str(module)                                 # NCHW: the helper made
    plain = parse_module(new_context(), ADD.encode(), "deferred.mlir")
    before = str(plain)
    run_passes(plain, ["xla-canonicalize-convolutions"])
    assert str(plain) == before
