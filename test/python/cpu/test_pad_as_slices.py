"""A pad alone in its kernel as slices of its result (xla-concatenate-as-slices:
its border blocks and its operand, each element written once): the values of
numpy's pad, bit for bit, for floats, complex, bytes in 3 dims, a non-zero
value, and a negative edge (a pad that stays a pad)."""

from __future__ import annotations

import numpy as np
import pytest

import xlac

PROGRAM = """func.func @main(%a: tensor<37x300xf64>, %c: tensor<20x33xcomplex<f64>>,
                 %b: tensor<3x5x70xi8>, %n: tensor<9x40xf32>)
    -> (tensor<39x316xf64>, tensor<23x34xcomplex<f64>>, tensor<4x9x73xi8>, tensor<10x42xf32>) {
  %z = stablehlo.constant dense<0> : tensor<i64>
  %zf = stablehlo.convert %z : (tensor<i64>) -> tensor<f64>
  %0 = stablehlo.pad %a, %zf, low = [1, 8], high = [1, 8], interior = [0, 0]
      : (tensor<37x300xf64>, tensor<f64>) -> tensor<39x316xf64>
  %zc = stablehlo.convert %z : (tensor<i64>) -> tensor<complex<f64>>
  %1 = stablehlo.pad %c, %zc, low = [2, 0], high = [1, 1], interior = [0, 0]
      : (tensor<20x33xcomplex<f64>>, tensor<complex<f64>>) -> tensor<23x34xcomplex<f64>>
  %seven = stablehlo.constant dense<7> : tensor<i8>
  %2 = stablehlo.pad %b, %seven, low = [1, 0, 3], high = [0, 4, 0], interior = [0, 0, 0]
      : (tensor<3x5x70xi8>, tensor<i8>) -> tensor<4x9x73xi8>
  %half = stablehlo.constant dense<0.5> : tensor<f32>
  %3 = stablehlo.pad %n, %half, low = [1, -1], high = [0, 3], interior = [0, 0]
      : (tensor<9x40xf32>, tensor<f32>) -> tensor<10x42xf32>
  return %0, %1, %2, %3 : tensor<39x316xf64>, tensor<23x34xcomplex<f64>>, tensor<4x9x73xi8>, tensor<10x42xf32>
}"""


@pytest.mark.parametrize("cpu", ["x86-64-v2", "x86-64-v3"])
def test_pads_as_slices_match_numpy(cpu):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((37, 300))
    c = rng.standard_normal((20, 33)) + 1j * rng.standard_normal((20, 33))
    b = rng.integers(-100, 100, (3, 5, 70)).astype(np.int8)
    n = rng.standard_normal((9, 40)).astype(np.float32)
    got = xlac.compile(PROGRAM, cache=False, cpu=cpu)(a, c, b, n)
    want = [np.pad(a, ((1, 1), (8, 8))), np.pad(c, ((2, 1), (0, 1))),
            np.pad(b, ((1, 0), (0, 4), (3, 0)), constant_values=7),
            np.pad(n[:, 1:], ((1, 0), (0, 3)), constant_values=0.5)]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert np.array_equal(g.view(np.uint8), w.view(np.uint8))
