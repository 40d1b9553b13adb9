"""An elementwise kernel's lanes are counted in the arrays it streams, not in
a uniform input's type: jax's betainc reads its i64 trip counter (a
tensor<i64>, `n % 2`, `(n - 1) // 2`, converted to f32) beside f32 arrays,
and took 4 f32 lanes at AVX2 (one ymm of i64), half a register per value.
The code is inspected as compiled for x86-64-v3 and -v4, whatever this
machine is; results are run only at the levels it has."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

A = "tensor<64x160xf32>"
INT = "tensor<64x160xi64>"
PROGRAM = f"""func.func @main(%n: tensor<i64>, %x: {A}, %y: {A}) -> {A} {{
  %two = stablehlo.constant dense<2> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %nb = stablehlo.broadcast_in_dim %n, dims = [] : (tensor<i64>) -> {INT}
  %tb = stablehlo.broadcast_in_dim %two, dims = [] : (tensor<i64>) -> {INT}
  %ob = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<i64>) -> {INT}
  %m = stablehlo.subtract %nb, %ob : {INT}
  %h = stablehlo.divide %m, %tb : {INT}
  %r = stablehlo.remainder %nb, %tb : {INT}
  %f = stablehlo.convert %h : ({INT}) -> {A}
  %g = stablehlo.convert %r : ({INT}) -> {A}
  %p = stablehlo.multiply %x, %f : {A}
  %q = stablehlo.add %p, %y : {A}
  %s = stablehlo.divide %q, %y : {A}
  %t = stablehlo.subtract %s, %g : {A}
  return %t : {A}
}}"""


@pytest.mark.parametrize("cpu, lanes", [("x86-64-v3", 8), ("x86-64-v4", 16)])
def test_f32_lanes_fill_a_register_beside_a_uniform_i64(cpu, lanes):
    code = xlac.compile(PROGRAM, cpu=cpu, cache=False).as_text("bufferized")
    steps = {int(s) for s in re.findall(r"scf\.for %\w+ = %c0 to %c160 step %c(\d+) ", code)}
    assert steps == {lanes}, steps
    assert f"vector<{lanes}xf32>" in code and f"vector<{lanes // 2}xf32>" not in code


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
@pytest.mark.parametrize("n", [-7, 0, 1, 6, 2**40 + 3])
def test_uniform_i64_kernel_matches_numpy(cpu, n):
    rng = np.random.default_rng(3)
    x, y = (rng.uniform(0.5, 2.0, (64, 160)).astype(np.float32) for _ in range(2))
    got = xlac.compile(PROGRAM, cpu=cpu, cache=False)(np.int64(n), x, y)
    half, rem = np.int64(np.trunc((n - 1) / 2)), np.int64(np.fmod(n, 2))
    want = ((x * np.float32(half) + y) / y) - np.float32(rem)
    np.testing.assert_array_equal(got, want.astype(np.float32))
