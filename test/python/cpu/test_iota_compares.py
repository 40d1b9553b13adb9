"""Compares of iotas (jax.jacfwd's diagonal `iota_i == iota_j`, tril/triu
masks, a diagonal's pick) run on i32 lanes where the indices fit i32
(xla-narrow-index-vectors), and a row's invariant values (x[i], cos(x[i]), the
row's index) are computed once per row, not per vector of the inner loop
(xla-hoist-loop-invariants). The same bits as without both passes, and as numpy
where the program is exact."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlac

_PASSES = ("xla-narrow-index-vectors", "xla-hoist-loop-invariants")

# jax.jacfwd(jnp.sin) on n floats, as jax lowers it (i64 iotas)
_JACOBIAN = """func.func @main(%arg0: tensor<{n}xf32>) -> tensor<{n}x{n}xf32> {{
  %0 = stablehlo.iota dim = 0 : tensor<{n}x{n}xi64>
  %1 = stablehlo.iota dim = 1 : tensor<{n}x{n}xi64>
  %2 = stablehlo.compare EQ, %0, %1, SIGNED : (tensor<{n}x{n}xi64>, tensor<{n}x{n}xi64>) -> tensor<{n}x{n}xi1>
  %3 = stablehlo.convert %2 : (tensor<{n}x{n}xi1>) -> tensor<{n}x{n}xf32>
  %4 = stablehlo.cosine %arg0 : tensor<{n}xf32>
  %5 = stablehlo.broadcast_in_dim %4, dims = [1] : (tensor<{n}xf32>) -> tensor<{n}x{n}xf32>
  %6 = stablehlo.multiply %3, %5 : tensor<{n}x{n}xf32>
  %7 = stablehlo.transpose %6, dims = [1, 0] : (tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  return %7 : tensor<{n}x{n}xf32>
}}"""

# jnp.tril(v) with an i64 iota, and the columns below 7 (an unsigned compare to a constant)
_MASKS = """func.func @main(%arg0: tensor<{n}x{m}xf32>) -> (tensor<{n}x{m}xf32>, tensor<{n}x{m}xi1>) {{
  %0 = stablehlo.iota dim = 0 : tensor<{n}x{m}xi64>
  %1 = stablehlo.iota dim = 1 : tensor<{n}x{m}xi64>
  %2 = stablehlo.compare GE, %0, %1, SIGNED : (tensor<{n}x{m}xi64>, tensor<{n}x{m}xi64>) -> tensor<{n}x{m}xi1>
  %z = stablehlo.constant dense<0.0> : tensor<{n}x{m}xf32>
  %3 = stablehlo.select %2, %arg0, %z : tensor<{n}x{m}xi1>, tensor<{n}x{m}xf32>
  %4 = stablehlo.iota dim = 1 : tensor<{n}x{m}xui64>
  %c = stablehlo.constant dense<7> : tensor<{n}x{m}xui64>
  %5 = stablehlo.compare LT, %4, %c, UNSIGNED : (tensor<{n}x{m}xui64>, tensor<{n}x{m}xui64>) -> tensor<{n}x{m}xi1>
  return %3, %5 : tensor<{n}x{m}xf32>, tensor<{n}x{m}xi1>
}}"""


def _depth(text: str, pattern: str) -> int:
    """The indentation of the first line matching ``pattern``."""
    line = next(line for line in text.splitlines() if re.search(pattern, line))
    return len(line) - len(line.lstrip())


@pytest.mark.parametrize("cpu", ["x86-64-v3", None])
def test_jacobian_compares_i32_lanes_and_takes_cos_once_per_row(cpu):
    text = _JACOBIAN.format(n=300)
    exe = xlac.compile(text, cache=False, cpu=cpu)
    bufferized = exe.as_text("bufferized")
    assert not re.search(r"arith\.cmpi \w+, .* : vector<\d+xi64>", bufferized), bufferized
    assert re.search(r"arith\.cmpi eq, .* : vector<\d+xi32>", bufferized), bufferized
    # the cosine sits outside the loop over a row's vectors, with the row's index
    assert _depth(bufferized, r"math\.cos") < _depth(bufferized, r"arith\.cmpi eq"), bufferized
    x = np.random.default_rng(0).normal(size=300).astype(np.float32)
    (got,) = exe.run(x)
    (before,) = xlac.compile(text, cache=False, cpu=cpu, disable_passes=_PASSES).run(x)
    np.testing.assert_array_equal(got.view(np.uint32), before.view(np.uint32))
    np.testing.assert_array_equal(got != 0, np.eye(300, dtype=bool) & (np.cos(x) != 0))


@pytest.mark.parametrize("cpu", ["x86-64-v3", None])
def test_triangle_and_constant_masks_compare_i32_lanes(cpu):
    n, m = 70, 90
    text = _MASKS.format(n=n, m=m)
    exe = xlac.compile(text, cache=False, cpu=cpu)
    bufferized = exe.as_text("bufferized")
    assert not re.search(r"arith\.cmpi \w+, .* : vector<\d+xi64>", bufferized), bufferized
    assert re.search(r"arith\.cmpi (sge|sle), .* : vector<\d+xi32>", bufferized), bufferized
    assert re.search(r"arith\.cmpi (ult|ugt), .* : vector<\d+xi32>", bufferized), bufferized
    v = np.random.default_rng(1).normal(size=(n, m)).astype(np.float32)
    tril, below7 = exe.run(v)
    np.testing.assert_array_equal(tril, np.tril(v))
    np.testing.assert_array_equal(below7, np.broadcast_to(np.arange(m) < 7, (n, m)))
