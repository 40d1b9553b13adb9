"""xla-fuse's producer kernels and xla-merge-kernel-generics: a continued
fraction's loop body (jax's igamma, betainc) is one loop nest a trip, not one
per shared value and result; results as the reference's, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from reference_checks import check_against_reference

import xlac
from conftest import runnable_levels

# the shape of jax's continued fractions: a mask of the elements still
# converging that the condition reduces, shared values (`s`, the ratio) read
# by several updates, every carry selected by the mask
_FRACTION = """
func.func public @main(%x: tensor<16x64xf32>, %y: tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>) {
  %t = stablehlo.constant dense<true> : tensor<16x64xi1>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %one = stablehlo.constant dense<1.0> : tensor<16x64xf32>
  %r:5 = stablehlo.while(%go = %t, %n = %zero, %p = %x, %q = %one, %a = %y)
      : tensor<16x64xi1>, tensor<f32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>
    cond {
      %f = stablehlo.constant dense<false> : tensor<i1>
      %any = stablehlo.reduce(%go init: %f) applies stablehlo.or across dimensions = [0, 1]
          : (tensor<16x64xi1>, tensor<i1>) -> tensor<i1>
      %lim = stablehlo.constant dense<40.0> : tensor<f32>
      %lt = stablehlo.compare LT, %n, %lim, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %c = stablehlo.and %lt, %any : tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %o = stablehlo.constant dense<1.0> : tensor<f32>
      %n1 = stablehlo.add %n, %o : tensor<f32>
      %nb = stablehlo.broadcast_in_dim %n1, dims = [] : (tensor<f32>) -> tensor<16x64xf32>
      %s = stablehlo.add %a, %nb : tensor<16x64xf32>
      %pn = stablehlo.multiply %p, %s : tensor<16x64xf32>
      %qs = stablehlo.multiply %q, %s : tensor<16x64xf32>
      %qn = stablehlo.add %qs, %x : tensor<16x64xf32>
      %ratio = stablehlo.divide %pn, %qn : tensor<16x64xf32>
      %more = stablehlo.compare NE, %ratio, %p, FLOAT : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xi1>
      %go2 = stablehlo.and %go, %more : tensor<16x64xi1>
      %qd = stablehlo.divide %qn, %s : tensor<16x64xf32>
      %p2 = stablehlo.select %go, %ratio, %p : tensor<16x64xi1>, tensor<16x64xf32>
      %q2 = stablehlo.select %go, %qd, %q : tensor<16x64xi1>, tensor<16x64xf32>
      %a2 = stablehlo.select %go, %s, %a : tensor<16x64xi1>, tensor<16x64xf32>
      stablehlo.return %go2, %n1, %p2, %q2, %a2
          : tensor<16x64xi1>, tensor<f32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>
    }
  return %r#2, %r#3 : tensor<16x64xf32>, tensor<16x64xf32>
}
"""


def _after_region(text: str) -> str:
    """The bufferized text of main's first scf.while's after region."""
    lines = text.split("func.func public @main", 1)[1].splitlines()
    start = next(n for n, line in enumerate(lines) if "scf.while" in line)
    indent = len(lines[start]) - len(lines[start].lstrip())
    after = next(n for n in range(start + 1, len(lines)) if lines[n].strip().startswith("} do {"))
    end = next(n for n in range(after + 1, len(lines)) if lines[n] == " " * indent + "}")
    return "\n".join(lines[after:end + 1])


def _args():
    rng = np.random.default_rng(39)
    return [rng.uniform(0.1, 4.0, (16, 64)).astype(np.float32),
            rng.uniform(0.1, 4.0, (16, 64)).astype(np.float32)]


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_a_continued_fraction_as_the_reference(cpu):
    check_against_reference(_FRACTION, _args(), cpu)


def test_the_loop_body_is_one_kernel_a_trip():
    """One kernel for the body's 13 ops (5 results, shared `s` and ratio), no
    copy: on main the body was 7 loop nests a trip (a kernel per value read
    twice and per result)."""
    body = _after_region(xlac.compile(_FRACTION, cpu="x86-64-v3", cache=False).as_text("bufferized"))
    assert body.count("call @xla_scheduled") == 1, body
    assert "memref.copy" not in body


def test_kernels_apart_when_the_passes_are_off():
    exe = xlac.compile(_FRACTION, cpu="x86-64-v3", cache=False,
                       disable_passes=("xla-merge-kernel-generics",))
    body = _after_region(exe.as_text("bufferized"))
    assert body.count("call @xla_scheduled") > 1
    got = exe.run(*_args())
    want = xlac.compile(_FRACTION, cpu="x86-64-v3", cache=False).run(*_args())
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
