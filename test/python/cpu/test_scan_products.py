"""xla-hoist-scan-products: an RNN's input projection made for all steps
before the loop; the same bits as the product made step by step."""

from __future__ import annotations

import numpy as np

import xlac
from conftest import runnable_levels

STEPS, BATCH, FEATURES, HIDDEN = 16, 8, 32, 64

_SCAN = f"""
func.func @main(%xs: tensor<{STEPS}x{BATCH}x{FEATURES}xf32>, %w: tensor<{FEATURES}x{HIDDEN}xf32>,
                %u: tensor<{HIDDEN}x{HIDDEN}xf32>, %h0: tensor<{BATCH}x{HIDDEN}xf32>) -> tensor<{BATCH}x{HIDDEN}xf32> {{
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %steps = stablehlo.constant dense<{STEPS}> : tensor<i32>
  %r:4 = stablehlo.while(%i = %zero, %x = %xs, %wt = %w, %h = %h0)
      : tensor<i32>, tensor<{STEPS}x{BATCH}x{FEATURES}xf32>, tensor<{FEATURES}x{HIDDEN}xf32>, tensor<{BATCH}x{HIDDEN}xf32>
    cond {{
      %lt = stablehlo.compare LT, %i, %steps, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    }} do {{
      %s = stablehlo.dynamic_slice %x, %i, %zero, %zero, sizes = [1, {BATCH}, {FEATURES}]
          : (tensor<{STEPS}x{BATCH}x{FEATURES}xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x{BATCH}x{FEATURES}xf32>
      %xt = stablehlo.reshape %s : (tensor<1x{BATCH}x{FEATURES}xf32>) -> tensor<{BATCH}x{FEATURES}xf32>
      %xw = stablehlo.dot_general %xt, %wt, contracting_dims = [1] x [0]
          : (tensor<{BATCH}x{FEATURES}xf32>, tensor<{FEATURES}x{HIDDEN}xf32>) -> tensor<{BATCH}x{HIDDEN}xf32>
      %hu = stablehlo.dot_general %h, %u, contracting_dims = [1] x [0]
          : (tensor<{BATCH}x{HIDDEN}xf32>, tensor<{HIDDEN}x{HIDDEN}xf32>) -> tensor<{BATCH}x{HIDDEN}xf32>
      %sum = stablehlo.add %xw, %hu : tensor<{BATCH}x{HIDDEN}xf32>
      %next = stablehlo.tanh %sum : tensor<{BATCH}x{HIDDEN}xf32>
      %n = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %n, %x, %wt, %next
          : tensor<i32>, tensor<{STEPS}x{BATCH}x{FEATURES}xf32>, tensor<{FEATURES}x{HIDDEN}xf32>, tensor<{BATCH}x{HIDDEN}xf32>
    }}
  return %r#3 : tensor<{BATCH}x{HIDDEN}xf32>
}}
"""


def test_the_input_projection_leaves_the_loop():
    from xlac.context import new_context
    from xlac.mlir import ir
    from xlac.passes.ingest.hoist_scan_products import HoistScanProducts

    with new_context():
        module = ir.Module.parse(_SCAN)
        HoistScanProducts().run(module.operation)
        text = str(module)
    before_loop, loop = text.split("stablehlo.while", 1)
    assert f"-> tensor<{STEPS}x{BATCH}x{HIDDEN}xf32>" in before_loop and "dot_general" in before_loop
    assert loop.count("stablehlo.dot_general") == 1            # h . u: it depends on the state


def test_same_bits_as_step_by_step():
    rng = np.random.default_rng(7)
    xs, w, u, h0 = (rng.standard_normal(shape, dtype=np.float32) * 0.3 for shape in
                    ((STEPS, BATCH, FEATURES), (FEATURES, HIDDEN), (HIDDEN, HIDDEN), (BATCH, HIDDEN)))
    h = h0
    for step in range(STEPS):
        h = np.tanh(xs[step] @ w + h @ u)
    for cpu in ("host", "x86-64-v2", "x86-64-v4"):
        hoisted = xlac.compile(_SCAN, cpu=cpu, cache=False)
        stepwise = xlac.compile(_SCAN, cpu=cpu, cache=False, disable_passes=("xla-hoist-scan-products",))
        if cpu not in runnable_levels(cpu):
            continue                          # AVX-512 code on an AVX2-only host: compiled only
        got = np.asarray(hoisted(xs, w, u, h0))
        np.testing.assert_array_equal(got, np.asarray(stepwise(xs, w, u, h0)))
        np.testing.assert_allclose(got, h, rtol=1e-4, atol=1e-4)   # 16 steps of float32 recurrence
