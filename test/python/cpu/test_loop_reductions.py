"""A continued fraction's trip as XLA runs it (jax's betainc): the
convergence test's `or` as rows on the threads (xla-split-full-reductions),
and the ops reading the body kernel's values inside it (xla-fuse's reduction
readers); results as the reference's, bit for bit."""

from __future__ import annotations

import re

import numpy as np
import pytest
from reference_checks import check_against_reference
from test_merge_kernel_generics import _after_region

import xlac
from conftest import runnable_levels

# betainc's shape: an i64 counter broadcast and taken `% 2`, `(n - 1) / 2` and
# converted per element; a Lentz step; `1 / d` and the running product after it;
# `any(|c * d - 1| >= eps)` over 45 x 80 (3600 elements: 32 does not divide)
_LENTZ = """
func.func public @main(%x: tensor<45x80xf32>, %a: tensor<45x80xf32>) -> (tensor<45x80xf32>, tensor<i64>) {
  %one = stablehlo.constant dense<1.0> : tensor<45x80xf32>
  %n0 = stablehlo.constant dense<1> : tensor<i64>
  %t = stablehlo.constant dense<true> : tensor<i1>
  %r:6 = stablehlo.while(%n = %n0, %go = %t, %c = %one, %d = %one, %h = %one, %di = %one)
      : tensor<i64>, tensor<i1>, tensor<45x80xf32>, tensor<45x80xf32>, tensor<45x80xf32>, tensor<45x80xf32>
    cond {
      %lim = stablehlo.constant dense<60> : tensor<i64>
      %lt = stablehlo.compare LT, %n, %lim, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      %both = stablehlo.and %lt, %go : tensor<i1>
      stablehlo.return %both : tensor<i1>
    } do {
      %nb = stablehlo.broadcast_in_dim %n, dims = [] : (tensor<i64>) -> tensor<45x80xi64>
      %two = stablehlo.constant dense<2> : tensor<45x80xi64>
      %zero = stablehlo.constant dense<0> : tensor<45x80xi64>
      %ones = stablehlo.constant dense<1> : tensor<45x80xi64>
      %rem = stablehlo.remainder %nb, %two : tensor<45x80xi64>
      %even = stablehlo.compare EQ, %rem, %zero, SIGNED : (tensor<45x80xi64>, tensor<45x80xi64>) -> tensor<45x80xi1>
      %m = stablehlo.subtract %nb, %ones : tensor<45x80xi64>
      %half = stablehlo.divide %m, %two : tensor<45x80xi64>
      %hf = stablehlo.convert %half : (tensor<45x80xi64>) -> tensor<45x80xf32>
      %twof = stablehlo.constant dense<2.0> : tensor<45x80xf32>
      %k2 = stablehlo.multiply %twof, %hf : tensor<45x80xf32>
      %xk = stablehlo.add %x, %k2 : tensor<45x80xf32>
      %xk1 = stablehlo.add %xk, %one : tensor<45x80xf32>
      %den = stablehlo.multiply %xk, %xk1 : tensor<45x80xf32>
      %ah = stablehlo.multiply %a, %hf : tensor<45x80xf32>
      %apx = stablehlo.add %a, %hf : tensor<45x80xf32>
      %neg = stablehlo.negate %apx : tensor<45x80xf32>
      %top = stablehlo.select %even, %ah, %neg : tensor<45x80xi1>, tensor<45x80xf32>
      %num = stablehlo.divide %top, %den : tensor<45x80xf32>
      %nc = stablehlo.divide %num, %c : tensor<45x80xf32>
      %c2 = stablehlo.add %one, %nc : tensor<45x80xf32>
      %nd = stablehlo.multiply %num, %d : tensor<45x80xf32>
      %dd = stablehlo.add %one, %nd : tensor<45x80xf32>
      %d2 = stablehlo.divide %one, %dd : tensor<45x80xf32>
      %cd = stablehlo.multiply %c2, %d2 : tensor<45x80xf32>
      %h2 = stablehlo.multiply %h, %cd : tensor<45x80xf32>
      %di2 = stablehlo.divide %one, %dd : tensor<45x80xf32>
      %dev = stablehlo.subtract %cd, %one : tensor<45x80xf32>
      %abs = stablehlo.abs %dev : tensor<45x80xf32>
      %eps = stablehlo.constant dense<5.96046448E-8> : tensor<45x80xf32>
      %big = stablehlo.compare GE, %abs, %eps, FLOAT : (tensor<45x80xf32>, tensor<45x80xf32>) -> tensor<45x80xi1>
      %f = stablehlo.constant dense<false> : tensor<i1>
      %any = stablehlo.reduce(%big init: %f) applies stablehlo.or across dimensions = [0, 1]
          : (tensor<45x80xi1>, tensor<i1>) -> tensor<i1>
      %o = stablehlo.constant dense<1> : tensor<i64>
      %n2 = stablehlo.add %n, %o : tensor<i64>
      stablehlo.return %n2, %any, %c2, %d2, %h2, %di2
          : tensor<i64>, tensor<i1>, tensor<45x80xf32>, tensor<45x80xf32>, tensor<45x80xf32>, tensor<45x80xf32>
    }
  return %r#4, %r#0 : tensor<45x80xf32>, tensor<i64>
}
"""

_NEW = ("xla-split-full-reductions",)


def _args():
    rng = np.random.default_rng(39)
    return [rng.uniform(1.0, 5.0, (45, 80)).astype(np.float32),
            rng.uniform(0.1, 0.9, (45, 80)).astype(np.float32)]


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_the_fraction_as_the_reference(cpu):
    check_against_reference(_LENTZ, _args(), cpu)


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_the_same_bits_with_the_passes_off(cpu):
    on = xlac.compile(_LENTZ, cpu=cpu, cache=False).run(*_args())
    off = xlac.compile(_LENTZ, cpu=cpu, cache=False, disable_passes=_NEW).run(*_args())
    assert 2 < int(on[1]) < 60                          # it converged, after some trips
    for g, w in zip(on, off):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
def test_two_kernels_a_trip(cpu):
    """The body kernel (the update, `1 / d`, the product and the mask) and the
    rows' `or` (the 45 rows' results are a loop in place): on main 1 / d and
    the product were two more kernels and the `or` one serial loop."""
    text = xlac.compile(_LENTZ, cpu=cpu, cache=False).as_text("bufferized")
    body = _after_region(text)
    assert len(re.findall(r"call @xla_scheduled_\d+", body)) == 2, body
    assert "memref<45xi1>" in text                 # the rows' results
    apart = xlac.compile(_LENTZ, cpu=cpu, cache=False, disable_passes=_NEW).as_text("bufferized")
    assert "memref<45xi1>" not in apart            # one serial loop over 3600


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
@pytest.mark.parametrize("shape", [(405, 648), (3, 5, 48), (7, 16)])
def test_whole_array_any_all_min_max(cpu, shape):
    """Integer and boolean reductions of a whole array 32 does not divide
    (split into rows), the deciding element last, as numpy."""
    rng = np.random.default_rng(5)
    x = rng.integers(-1000, 1000, shape).astype(np.int32)
    x.reshape(-1)[-1] = 5000
    n = "x".join(map(str, shape))
    dims = ", ".join(str(d) for d in range(len(shape)))
    text = f"""
func.func public @main(%x: tensor<{n}xi32>) -> (tensor<i1>, tensor<i1>, tensor<i32>, tensor<i32>) {{
  %k = stablehlo.constant dense<4999> : tensor<{n}xi32>
  %big = stablehlo.compare GT, %x, %k, SIGNED : (tensor<{n}xi32>, tensor<{n}xi32>) -> tensor<{n}xi1>
  %small = stablehlo.compare LT, %x, %k, SIGNED : (tensor<{n}xi32>, tensor<{n}xi32>) -> tensor<{n}xi1>
  %f = stablehlo.constant dense<false> : tensor<i1>
  %t = stablehlo.constant dense<true> : tensor<i1>
  %lo = stablehlo.constant dense<-2147483648> : tensor<i32>
  %hi = stablehlo.constant dense<2147483647> : tensor<i32>
  %any = stablehlo.reduce(%big init: %f) applies stablehlo.or across dimensions = [{dims}] : (tensor<{n}xi1>, tensor<i1>) -> tensor<i1>
  %all = stablehlo.reduce(%small init: %t) applies stablehlo.and across dimensions = [{dims}] : (tensor<{n}xi1>, tensor<i1>) -> tensor<i1>
  %max = stablehlo.reduce(%x init: %lo) applies stablehlo.maximum across dimensions = [{dims}] : (tensor<{n}xi32>, tensor<i32>) -> tensor<i32>
  %min = stablehlo.reduce(%x init: %hi) applies stablehlo.minimum across dimensions = [{dims}] : (tensor<{n}xi32>, tensor<i32>) -> tensor<i32>
  return %any, %all, %max, %min : tensor<i1>, tensor<i1>, tensor<i32>, tensor<i32>
}}
"""
    got = xlac.compile(text, cpu=cpu, cache=False).run(x)
    assert [bool(got[0]), bool(got[1]), int(got[2]), int(got[3])] == [True, False, 5000, int(x.min())]
    off = xlac.compile(text, cpu=cpu, cache=False, disable_passes=_NEW).run(x)
    for g, w in zip(got, off):
        np.testing.assert_array_equal(g, w)
