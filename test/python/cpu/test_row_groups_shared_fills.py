"""A transformer's softmaxes each fuse into one row loop though CSE shares
their reductions' fills (xla-apply-schedules gives each row reduction its own).

Before: the layers' -inf and 0 fills were one op each, read by every layer's
reductions, so no row group formed and each softmax ran as four kernels, four
passes over its scores (hf_vit at x86-64-v3 on a Zen 4: 15% of the model's
time; one row loop each: the model 10% faster, bits unchanged)."""

import re

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

# two attention layers' scores and softmax, as jax exports them (q @ k^T, softmax,
# @ k, @ k^T, softmax): each softmax is max, exp(x - max), sum, divide
TWO_SOFTMAXES = """
func.func @main(%arg0: tensor<2x3x16x64xf32>, %arg1: tensor<2x3x16x64xf32>) -> (tensor<2x3x16x16xf32>) {
  %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<2x3x16x64xf32>, tensor<2x3x16x64xf32>) -> tensor<2x3x16x16xf32>
  %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.maximum across dimensions = [3] : (tensor<2x3x16x16xf32>, tensor<f32>) -> tensor<2x3x16xf32>
  %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2] : (tensor<2x3x16xf32>) -> tensor<2x3x16x1xf32>
  %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1, 2, 3] : (tensor<2x3x16x1xf32>) -> tensor<2x3x16x16xf32>
  %4 = stablehlo.subtract %0, %3 : tensor<2x3x16x16xf32>
  %5 = stablehlo.exponential %4 : tensor<2x3x16x16xf32>
  %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %6 = stablehlo.reduce(%5 init: %cst_0) applies stablehlo.add across dimensions = [3] : (tensor<2x3x16x16xf32>, tensor<f32>) -> tensor<2x3x16xf32>
  %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1, 2] : (tensor<2x3x16xf32>) -> tensor<2x3x16x1xf32>
  %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1, 2, 3] : (tensor<2x3x16x1xf32>) -> tensor<2x3x16x16xf32>
  %9 = stablehlo.divide %5, %8 : tensor<2x3x16x16xf32>
  %10 = stablehlo.dot_general %9, %arg1, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x3x16x16xf32>, tensor<2x3x16x64xf32>) -> tensor<2x3x16x64xf32>
  %11 = stablehlo.transpose %arg1, dims = [0, 1, 3, 2] : (tensor<2x3x16x64xf32>) -> tensor<2x3x64x16xf32>
  %12 = stablehlo.dot_general %10, %11, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x3x16x64xf32>, tensor<2x3x64x16xf32>) -> tensor<2x3x16x16xf32>
  %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %13 = stablehlo.reduce(%12 init: %cst_1) applies stablehlo.maximum across dimensions = [3] : (tensor<2x3x16x16xf32>, tensor<f32>) -> tensor<2x3x16xf32>
  %14 = stablehlo.broadcast_in_dim %13, dims = [0, 1, 2] : (tensor<2x3x16xf32>) -> tensor<2x3x16x1xf32>
  %15 = stablehlo.broadcast_in_dim %14, dims = [0, 1, 2, 3] : (tensor<2x3x16x1xf32>) -> tensor<2x3x16x16xf32>
  %16 = stablehlo.subtract %12, %15 : tensor<2x3x16x16xf32>
  %17 = stablehlo.exponential %16 : tensor<2x3x16x16xf32>
  %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %18 = stablehlo.reduce(%17 init: %cst_2) applies stablehlo.add across dimensions = [3] : (tensor<2x3x16x16xf32>, tensor<f32>) -> tensor<2x3x16xf32>
  %19 = stablehlo.broadcast_in_dim %18, dims = [0, 1, 2] : (tensor<2x3x16xf32>) -> tensor<2x3x16x1xf32>
  %20 = stablehlo.broadcast_in_dim %19, dims = [0, 1, 2, 3] : (tensor<2x3x16x1xf32>) -> tensor<2x3x16x16xf32>
  %21 = stablehlo.divide %17, %20 : tensor<2x3x16x16xf32>
  return %21 : tensor<2x3x16x16xf32>
}
"""


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=3, keepdims=True))
    return e / e.sum(axis=3, keepdims=True)


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
def test_each_softmax_is_one_row_kernel(cpu):
    exe = xlac.compile(TWO_SOFTMAXES, cpu=cpu, cache=False)
    kernels = re.findall(r"call @(xla_scheduled_\w+)", exe.as_text("bufferized"))
    # 3 dots (+ k's transpose) and a row kernel per softmax; before: 4 kernels a softmax
    assert len(kernels) <= 6, kernels
    if cpu not in runnable_levels(cpu):             # AVX-512 code on an AVX2-only CPU: structure only
        return
    rng = np.random.default_rng(0)
    q, k = (rng.standard_normal((2, 3, 16, 64)).astype(np.float32) for _ in range(2))
    k64 = k.astype(np.float64)
    p1 = _softmax(q.astype(np.float64) @ k64.swapaxes(2, 3))
    expected = _softmax(p1 @ k64 @ k64.swapaxes(2, 3))
    np.testing.assert_allclose(exe(q, k), expected, rtol=2e-4, atol=1e-6)


def test_each_row_nest_found_once(monkeypatch):
    """xla-apply-schedules asks each op's row nest once: the test for a row
    reduction (whose fill it gives its own) and the row groups' search share
    what they found. Two are asked again: the first softmax's reductions, given
    fills of their own (CSE shared them with the second's), which changes their
    operands and with them their hash in the bindings (the key)."""
    import xlac.passes.cpu.apply_schedules as apply_schedules
    import xlac.passes.cpu.plans.fused_rows_plan as fused_rows_plan

    asked, generics = [], []
    row_nest, plans = fused_rows_plan._row_nest, apply_schedules._plans

    def counted_row_nest(op):
        asked.append(op.name)
        return row_nest(op)

    def counted_plans(ops, machine):
        generics.append(sum(op.name == "linalg.generic" for op in ops))
        return plans(ops, machine)

    monkeypatch.setattr(fused_rows_plan, "_row_nest", counted_row_nest)
    monkeypatch.setattr(apply_schedules, "_plans", counted_plans)
    xlac.compile(TWO_SOFTMAXES, cache=False)
    assert generics and generics[0] > 0
    assert asked.count("linalg.generic") <= sum(generics) + 2, (asked, generics)
