"""Quantized programs (!quant.uniform) through xlac.compile, checked against numpy.

numpy models the StableHLO spec: quantize is clamp(round_half_even(x / scale + zp)),
dequantize is (q - zp) * scale, and integer dot products accumulate exactly.
"""

import numpy as np
import pytest

import xlac

Q8 = "!quant.uniform<i8:f32, 0.05:-3>"


def _quantize(x, scale, zero_point, lo=-128, hi=127):
    return np.clip(np.round(x / np.float32(scale) + zero_point), lo, hi).astype(np.int8)


def _inputs(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-4, 4, size=s).astype(np.float32) for s in shapes]


def test_quantize_to_storage():
    (x,) = _inputs((3, 5))
    text = f"""
func.func @main(%x: tensor<3x5xf32>) -> tensor<3x5xi8> {{
  %q = stablehlo.uniform_quantize %x : (tensor<3x5xf32>) -> tensor<3x5x{Q8}>
  %s = stablehlo.bitcast_convert %q : (tensor<3x5x{Q8}>) -> tensor<3x5xi8>
  return %s : tensor<3x5xi8>
}}"""
    (got,) = xlac.compile(text).run(x)
    np.testing.assert_array_equal(got, _quantize(x, 0.05, -3))


def test_per_axis_quantize_and_dequantize():
    """Per-axis types crashed stablehlo-refine-shapes: the ingest lowers them first."""
    (x,) = _inputs((4, 2))
    scales, zero_points = np.array([0.1, 0.5], np.float32), np.array([-30, -20])
    qtype = "!quant.uniform<i8:f32:1, {0.1:-30,0.5:-20}>"
    text = f"""
func.func @main(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {{
  %q = stablehlo.uniform_quantize %x : (tensor<4x2xf32>) -> tensor<4x2x{qtype}>
  %d = stablehlo.uniform_dequantize %q : (tensor<4x2x{qtype}>) -> tensor<4x2xf32>
  return %d : tensor<4x2xf32>
}}"""
    (got,) = xlac.compile(text).run(x)
    q = _quantize(x, scales, zero_points).astype(np.int32)
    np.testing.assert_allclose(got, (q - zero_points) * scales, rtol=1e-6)


def test_quantized_add_in_the_integer_domain():
    a, b = _inputs((6,), (6,), seed=1)
    text = f"""
func.func @main(%a: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<6xi8> {{
  %qa = stablehlo.uniform_quantize %a : (tensor<6xf32>) -> tensor<6x{Q8}>
  %qb = stablehlo.uniform_quantize %b : (tensor<6xf32>) -> tensor<6x{Q8}>
  %s = stablehlo.add %qa, %qb : tensor<6x{Q8}>
  %r = stablehlo.bitcast_convert %s : (tensor<6x{Q8}>) -> tensor<6xi8>
  return %r : tensor<6xi8>
}}"""
    (got,) = xlac.compile(text).run(a, b)
    qa, qb = (_quantize(v, 0.05, -3).astype(np.int32) for v in (a, b))
    np.testing.assert_array_equal(got, np.clip(qa + qb + 3, -128, 127))


@pytest.mark.parametrize("per_axis", [False, True])
def test_quantized_dot_general(per_axis):
    a, b = _inputs((2, 3), (3, 4), seed=2)
    rhs_scales = np.array([0.1, 0.2, 0.3, 0.4] if per_axis else [0.1] * 4, np.float32)
    if per_axis:
        rhs = "!quant.uniform<i8<-127:127>:f32:1, {0.1,0.2,0.3,0.4}>"
        out = "!quant.uniform<i32:f32:1, {0.005,0.01,0.015,0.02}>"
    else:
        rhs, out = "!quant.uniform<i8:f32, 0.1>", "!quant.uniform<i32:f32, 0.005>"
    text = f"""
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {{
  %qa = stablehlo.uniform_quantize %a : (tensor<2x3xf32>) -> tensor<2x3x{Q8}>
  %qb = stablehlo.uniform_quantize %b : (tensor<3x4xf32>) -> tensor<3x4x{rhs}>
  %d = stablehlo.dot_general %qa, %qb, contracting_dims = [1] x [0]
      : (tensor<2x3x{Q8}>, tensor<3x4x{rhs}>) -> tensor<2x4x{out}>
  %r = stablehlo.uniform_dequantize %d : (tensor<2x4x{out}>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}}"""
    (got,) = xlac.compile(text).run(a, b)
    qa = _quantize(a, 0.05, -3).astype(np.int32) + 3
    qb = _quantize(b, rhs_scales, 0, lo=-127 if per_axis else -128).astype(np.int32)
    want = (qa @ qb) * (np.float32(0.05) * rhs_scales)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_unlowerable_quantized_op_is_a_compile_error():
    text = f"""
func.func @main(%x: tensor<2x3xf32>) -> tensor<2xf32> {{
  %q = stablehlo.uniform_quantize %x : (tensor<2x3xf32>) -> tensor<2x3x{Q8}>
  %z = stablehlo.constant() {{value = dense<0> : tensor<i8>}} : () -> tensor<{Q8}>
  %r = stablehlo.reduce(%q init: %z) applies stablehlo.add across dimensions = [1]
      : (tensor<2x3x{Q8}>, tensor<{Q8}>) -> tensor<2x{Q8}>
  %d = stablehlo.uniform_dequantize %r : (tensor<2x{Q8}>) -> tensor<2xf32>
  return %d : tensor<2xf32>
}}"""
    with pytest.raises(xlac.CompileError, match="stablehlo.reduce"):
        xlac.compile(text)
