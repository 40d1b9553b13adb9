"""A called register tile's epilogue (GELU's erf after a micro-kernel call)
as a rolled loop over the tile's rows (passes/cpu/epilogue_rows.py): one
row's code per tile, the masked edge tile's loop over its kept rows only,
results bit for bit those of the epilogue on the whole tile."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

# ViT's first MLP dot in small: 197-row images (24 x 8 + 5 rows at AVX-512,
# 32 x 6 + 5 at AVX2: an edge tile at both), bias and erf-GELU in the tiles
_PROGRAM = """
func.func @main(%x: tensor<2x197x128xf32>, %w: tensor<128x128xf32>, %b: tensor<128xf32>) -> tensor<2x197x128xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [2] x [0] : (tensor<2x197x128xf32>, tensor<128x128xf32>) -> tensor<2x197x128xf32>
  %1 = stablehlo.broadcast_in_dim %b, dims = [2] : (tensor<128xf32>) -> tensor<2x197x128xf32>
  %2 = stablehlo.add %0, %1 : tensor<2x197x128xf32>
  %s = stablehlo.constant dense<0.707106769> : tensor<2x197x128xf32>
  %h = stablehlo.constant dense<0.5> : tensor<2x197x128xf32>
  %o = stablehlo.constant dense<1.0> : tensor<2x197x128xf32>
  %3 = stablehlo.multiply %2, %s : tensor<2x197x128xf32>
  %4 = chlo.erf %3 : tensor<2x197x128xf32> -> tensor<2x197x128xf32>
  %5 = stablehlo.add %4, %o : tensor<2x197x128xf32>
  %6 = stablehlo.multiply %2, %h : tensor<2x197x128xf32>
  %7 = stablehlo.multiply %6, %5 : tensor<2x197x128xf32>
  return %7 : tensor<2x197x128xf32>
}
"""


def _compile(cpu: str, threads: int, disabled: tuple[str, ...] = ()):
    options = xlac.Options.from_env().replace(micro_kernels=True, cpu=cpu, num_threads=threads)
    return xlac.compile(_PROGRAM, options=options, cache=False, disable_passes=disabled)


@pytest.mark.parametrize("cpu", ["x86-64-v4", "x86-64-v3"])
@pytest.mark.parametrize("threads", [1, 2])
def test_gelu_after_calls_as_row_loops_with_the_same_results(cpu, threads):
    rows = _compile(cpu, threads)
    whole = _compile(cpu, threads, ("xla-epilogue-rows",))
    text, before = rows.as_text("llvm"), whole.as_text("llvm")
    assert "xlac_ukernel_f32_5x" in text                      # the edge tile is a call
    # the erf polynomial's FMAs once per tile kind, on one row's vectors
    fmas, fmas_before = text.count("llvm.intr.fma"), before.count("llvm.intr.fma")
    assert 0 < fmas < fmas_before / 2, (fmas, fmas_before)
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this host cannot run {cpu} code (compiled and checked)")
    rng = np.random.default_rng(3)
    args = tuple(rng.standard_normal(shape, dtype=np.float32) * np.float32(scale)
                 for shape, scale in (((2, 197, 128), 0.1), ((128, 128), 0.1), (128, 1.0)))
    got, expected = np.asarray(rows(*args)), np.asarray(whole(*args))
    np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))
    x, w, b = (a.astype(np.float64) for a in args)
    s = x @ w + b
    from math import erf
    want = 0.5 * s * (1 + np.vectorize(erf)(s / np.sqrt(2)))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
