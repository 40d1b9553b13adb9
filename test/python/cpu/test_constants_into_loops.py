"""A loop body's splat constants (here written outside it, as jax's betainc
reaches xla-fuse), hoisted out of it by canonicalize, are
copied back in (xla-constants-into-loops) and fused into its kernel as
constants: jax's betainc body kernel read four filled 200 x 320 splat arrays
from memory on every trip."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

A = "tensor<64x160xf32>"
PROGRAM = f"""func.func @main(%x: {A}, %y: {A}) -> {A} {{
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %eps = stablehlo.constant dense<5.96046448E-8> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> {A}
  %e = stablehlo.broadcast_in_dim %eps, dims = [] : (tensor<f32>) -> {A}
  %n0 = stablehlo.constant dense<0> : tensor<i64>
  %limit = stablehlo.constant dense<20> : tensor<i64>
  %r:2 = stablehlo.while(%n = %n0, %v = %x) : tensor<i64>, {A}
    cond {{
      %c = stablehlo.compare LT, %n, %limit, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    }} do {{
      %a = stablehlo.add %v, %b : {A}
      %q = stablehlo.divide %b, %a : {A}
      %s = stablehlo.add %q, %e : {A}
      %m = stablehlo.multiply %s, %y : {A}
      %step = stablehlo.constant dense<1> : tensor<i64>
      %n1 = stablehlo.add %n, %step : tensor<i64>
      stablehlo.return %n1, %m : tensor<i64>, {A}
    }}
  return %r#1 : {A}
}}"""


def test_loop_kernel_reads_no_splat_array():
    code = xlac.compile(PROGRAM, cache=False).as_text("fused")
    body = code[code.index("do {"):]
    arguments = re.search(r"\^bb0\(([^)]*)\)", body)             # the body kernel's
    assert arguments is not None and arguments.group(1).count("tensor<64x160xf32>") == 2, body  # carry, %y


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_loop_with_splats_matches_numpy(cpu):
    rng = np.random.default_rng(5)
    x, y = (rng.uniform(0.5, 2.0, (64, 160)).astype(np.float32) for _ in range(2))
    got = xlac.compile(PROGRAM, cpu=cpu, cache=False)(x, y)
    v = x
    for _ in range(20):
        v = ((np.float32(1) / (v + np.float32(1))) + np.float32(5.96046448e-8)) * y
    np.testing.assert_array_equal(got, v)


COMPLEX = """func.func @main(%x: tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>> {
  %half = stablehlo.constant dense<(0.5, 0.25)> : tensor<8xcomplex<f32>>
  %n0 = stablehlo.constant dense<0> : tensor<i64>
  %limit = stablehlo.constant dense<4> : tensor<i64>
  %r:2 = stablehlo.while(%n = %n0, %v = %x) : tensor<i64>, tensor<8xcomplex<f32>>
    cond {
      %c = stablehlo.compare LT, %n, %limit, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %m = stablehlo.multiply %v, %half : tensor<8xcomplex<f32>>
      %step = stablehlo.constant dense<1> : tensor<i64>
      %n1 = stablehlo.add %n, %step : tensor<i64>
      stablehlo.return %n1, %m : tensor<i64>, tensor<8xcomplex<f32>>
    }
  return %r#1 : tensor<8xcomplex<f32>>
}"""


def test_a_complex_splat_in_a_loop_compiles_and_keeps_its_numbers():
    """scipy.linalg.funm's loop has a complex splat: read as text, not an error."""
    x = (np.arange(8) + 1j * np.arange(8, 16)).astype(np.complex64)
    got = np.asarray(xlac.compile(COMPLEX, cache=False)(x))
    np.testing.assert_allclose(got, x * np.complex64(0.5 + 0.25j) ** 4, rtol=1e-6)
