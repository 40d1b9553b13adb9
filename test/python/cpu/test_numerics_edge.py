"""Numerics edge cases through xlac.compile, checked against numpy: log1p of
tiny values, complex max/min ordering, bitcast_convert of complex values."""

import numpy as np
import pytest

import xlac


def _unary(op: str, shape: str, element: str) -> str:
    t = f"tensor<{shape}x{element}>"
    return f"""
func.func @main(%x: {t}) -> {t} {{
  %y = "{op}"(%x) : ({t}) -> {t}
  return %y : {t}
}}"""


def _ulps(got, want):
    """Distance in units of the last place of ``want``."""
    return np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want).astype(got.dtype))


@pytest.mark.parametrize("dtype,element", [(np.float32, "f32"), (np.float64, "f64")])
def test_log1p_keeps_digits_of_tiny_values(dtype, element):
    x = np.array([1e-10, -3e-8, 2.5e-5, 1e-3, 0.5, -0.25], dtype=dtype)
    (got,) = xlac.compile(_unary("stablehlo.log_plus_one", "6", element)).run(x)
    assert _ulps(got, np.log1p(x.astype(np.float64))).max() <= 2


def test_asinh_small_values_f32():
    x = np.linspace(-0.2, 0.2, 41, dtype=np.float32)
    (got,) = xlac.compile(_unary("chlo.asinh", "41", "f32")).run(x)
    want = np.arcsinh(x.astype(np.float64))
    nonzero = want != 0
    assert _ulps(got[nonzero], want[nonzero]).max() <= 3


@pytest.mark.parametrize("op,pick", [("maximum", max), ("minimum", min)])
def test_complex_max_min_are_lexicographic(op, pick):
    a = np.array([1.5 + 2.5j, 1.5 + 7.5j, 0.0 + 1.5j, 3 - 1j], dtype=np.complex64)
    b = np.array([7.5 + 1.5j, 1.5 + 2.5j, -0.0 + 2.5j, 2 + 9j], dtype=np.complex64)
    t = "tensor<4xcomplex<f32>>"
    text = f"""
func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %m = stablehlo.{op} %a, %b : {t}
  return %m : {t}
}}"""
    (got,) = xlac.compile(text).run(a, b)
    want = [pick(x, y, key=lambda z: (z.real, z.imag)) for x, y in zip(a, b)]
    np.testing.assert_array_equal(got, np.array(want, dtype=np.complex64))


def _bitcast(x_type: str, y_type: str) -> str:
    return f"""
func.func @main(%x: {x_type}) -> {y_type} {{
  %y = stablehlo.bitcast_convert %x : ({x_type}) -> {y_type}
  return %y : {y_type}
}}"""


def test_bitcast_convert_complex_to_itself():
    x = (np.arange(6) - 2 + 1j * np.arange(6)[::-1]).astype(np.complex64).reshape(2, 3)
    t = "tensor<2x3xcomplex<f32>>"
    (got,) = xlac.compile(_bitcast(t, t)).run(x)
    np.testing.assert_array_equal(got, x)


def test_bitcast_convert_complex128_to_complex64_pairs_and_back():
    x = (np.linspace(-3, 7, 6) + 1j / np.arange(1, 7)).astype(np.complex128).reshape(2, 3)
    wide, pairs = "tensor<2x3xcomplex<f64>>", "tensor<2x3x2xcomplex<f32>>"
    (split,) = xlac.compile(_bitcast(wide, pairs)).run(x)
    np.testing.assert_array_equal(split.view(np.uint32), x.view(np.uint32).reshape(2, 3, 4))
    (joined,) = xlac.compile(_bitcast(pairs, wide)).run(split)
    np.testing.assert_array_equal(joined, x)
