"""xla-strided-reads-as-shuffles: a 64-lane read of every second element (the
parts of c64 pairs at AVX-512's widths) as one load and a shuffle, results as before."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

_N = 4099                 # odd: the last chunk's wide read is masked past the last element


def _exp_c64() -> str:
    c64 = f"tensor<{_N}xcomplex<f32>>"
    return (f"func.func @main(%x: {c64}) -> {c64} {{\n"
            f"  %0 = stablehlo.exponential %x : {c64}\n  return %0 : {c64}\n}}")


def _every_second() -> str:
    """Both parts of f32 pairs, each its own elementwise kernel's strided input."""
    return (f"func.func @main(%x: tensor<{_N}x2xf32>) -> tensor<{_N}xf32> {{\n"
            f"  %a = stablehlo.slice %x [0:{_N}, 0:1] : (tensor<{_N}x2xf32>) -> tensor<{_N}x1xf32>\n"
            f"  %b = stablehlo.slice %x [0:{_N}, 1:2] : (tensor<{_N}x2xf32>) -> tensor<{_N}x1xf32>\n"
            f"  %ra = stablehlo.reshape %a : (tensor<{_N}x1xf32>) -> tensor<{_N}xf32>\n"
            f"  %rb = stablehlo.reshape %b : (tensor<{_N}x1xf32>) -> tensor<{_N}xf32>\n"
            f"  %e = stablehlo.exponential %ra : tensor<{_N}xf32>\n"
            f"  %s = stablehlo.sine %rb : tensor<{_N}xf32>\n"
            f"  %r = stablehlo.multiply %e, %s : tensor<{_N}xf32>\n"
            f"  return %r : tensor<{_N}xf32>\n}}")


def test_wide_strided_reads_become_shuffles_at_avx512_widths_only():
    """At x86-64-v4 (64-lane reads) the parts are shuffled out of contiguous
    loads; at x86-64-v3 (32 lanes) the lane loop LLVM unrolls stays."""
    wide = xlac.compile(_exp_c64(), cpu="x86-64-v4", cache=False).as_text("llvm")
    narrow = xlac.compile(_exp_c64(), cpu="x86-64-v3", cache=False).as_text("llvm")
    assert "llvm.shufflevector" in wide and "llvm.intr.masked.load" in wide
    assert "llvm.shufflevector" not in narrow


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_strided_reads_give_the_same_numbers(cpu):
    rng = np.random.default_rng(3)
    z = (rng.standard_normal(_N) + 1j * rng.standard_normal(_N)).astype(np.complex64)
    got = np.asarray(xlac.compile(_exp_c64(), cpu=cpu, cache=False)(z))
    want = np.exp(z.astype(np.complex128))
    assert (np.abs(got - want) / np.abs(want)).max() < 2e-6
    x = rng.standard_normal((_N, 2)).astype(np.float32)
    got = np.asarray(xlac.compile(_every_second(), cpu=cpu, cache=False)(x))
    want = np.exp(x[:, 0].astype(np.float64)) * np.sin(x[:, 1].astype(np.float64))
    assert np.allclose(got, want, rtol=2e-6, atol=1e-7)
