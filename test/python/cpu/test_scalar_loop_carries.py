"""xla-scalar-loop-carries: a while loop's 0-d carries (a scan's counter, its
scalar carry) as scalars, its one-element ops as scalar ops; results as the
reference's, the same bits (the same f32 operations in the same order)."""

from __future__ import annotations

import numpy as np
import pytest
from reference_checks import check_against_reference

import xlac
from conftest import runnable_levels

N = 64

# jax.jit(lambda v: lax.scan(lambda c, e: (c + e, c * e), 0.0, v)).lower(v).as_text(), inlined
_SCAN = f"""
func.func @main(%v: tensor<{N}xf32>) -> (tensor<f32>, tensor<{N}xf32>) {{
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %ys0 = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<{N}xf32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:4 = stablehlo.while(%x = %v, %i = %c0, %c = %zero, %ys = %ys0)
      : tensor<{N}xf32>, tensor<i32>, tensor<f32>, tensor<{N}xf32>
    cond {{
      %n = stablehlo.constant dense<{N}> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    }} do {{
      %s = stablehlo.dynamic_slice %x, %i, sizes = [1] : (tensor<{N}xf32>, tensor<i32>) -> tensor<1xf32>
      %e = stablehlo.reshape %s : (tensor<1xf32>) -> tensor<f32>
      %sum = stablehlo.add %c, %e : tensor<f32>
      %product = stablehlo.multiply %c, %e : tensor<f32>
      %p = stablehlo.broadcast_in_dim %product, dims = [] : (tensor<f32>) -> tensor<1xf32>
      %w = stablehlo.dynamic_update_slice %ys, %p, %i : (tensor<{N}xf32>, tensor<1xf32>, tensor<i32>) -> tensor<{N}xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %x, %next, %sum, %w : tensor<{N}xf32>, tensor<i32>, tensor<f32>, tensor<{N}xf32>
    }}
  return %r#2, %r#3 : tensor<f32>, tensor<{N}xf32>
}}
"""

# a scalar carry a conditional inside the loop updates (lax.cond in a fori_loop)
# and a counter the condition reads twice: the carries' other uses
_BRANCHY = """
func.func @main(%x0: tensor<f32>, %a: tensor<8xf32>) -> (tensor<f32>, tensor<i32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %x = %x0) : tensor<i32>, tensor<f32>
    cond {
      %n = stablehlo.constant dense<8> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %big = stablehlo.constant dense<1.0e6> : tensor<f32>
      %small = stablehlo.compare LT, %x, %big : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %go = stablehlo.and %lt, %small : tensor<i1>
      stablehlo.return %go : tensor<i1>
    } do {
      %s = stablehlo.dynamic_slice %a, %i, sizes = [1] : (tensor<8xf32>, tensor<i32>) -> tensor<1xf32>
      %e = stablehlo.reshape %s : (tensor<1xf32>) -> tensor<f32>
      %zero = stablehlo.constant dense<0.0> : tensor<f32>
      %positive = stablehlo.compare GT, %e, %zero : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %y = "stablehlo.if"(%positive) ({
        %m = stablehlo.multiply %x, %e : tensor<f32>
        stablehlo.return %m : tensor<f32>
      }, {
        %d = stablehlo.subtract %x, %e : tensor<f32>
        stablehlo.return %d : tensor<f32>
      }) : (tensor<i1>) -> tensor<f32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %next, %y : tensor<i32>, tensor<f32>
    }
  return %r#1, %r#0 : tensor<f32>, tensor<i32>
}
"""


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_scan_of_a_vector_as_the_reference(cpu):
    v = np.random.default_rng(3).standard_normal(N, dtype=np.float32)
    check_against_reference(_SCAN, [v], cpu)


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_branches_in_the_loop_as_the_reference(cpu):
    a = np.random.default_rng(5).standard_normal(8, dtype=np.float32) * 3
    check_against_reference(_BRANCHY, [np.float32(1.5), a], cpu)


def test_the_scan_carries_scalars_and_allocates_nothing_per_trip():
    text = xlac.compile(_SCAN, cpu="x86-64-v3", cache=False).as_text("bufferized")
    loop = text.split("scf.while", 1)[1].split("return", 1)[0]
    assert "(i32, f32) -> (i32, f32)" in loop
    assert "memref.alloc" not in loop and "memref.copy" not in loop and "linalg.generic" not in loop
