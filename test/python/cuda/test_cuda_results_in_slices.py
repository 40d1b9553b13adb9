"""A result concatenated with others is written in its slice of the larger buffer
(xla-gpu-results-in-slices): no copy kernel after it, on both matmul paths, and the
values stay the cpu target's. (A result padded for a convolution was too; the
padding is now the convolution's im2col bounds check, test_cuda_conv_gemm.py.)"""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlac
from xlac.targets.cuda.ptx import ptxas
from xlac_emulator.simt import run_emulated

pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")

# relu, padded by the convolution; two matmuls concatenated (a weight gradient's taps)
PROGRAM = """
func.func @main(%x: tensor<2x8x8x4xf32>, %w: tensor<3x3x4x8xf32>, %a: tensor<4x16xf32>,
                %b: tensor<16x8xf32>, %c: tensor<4x16xf32>) -> (tensor<2x8x8x8xf32>, tensor<8x8xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<2x8x8x4xf32>
  %r = stablehlo.maximum %x, %zero : tensor<2x8x8x4xf32>
  %y = stablehlo.convolution(%r, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<2x8x8x4xf32>, tensor<3x3x4x8xf32>) -> tensor<2x8x8x8xf32>
  %d1 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %d2 = stablehlo.dot_general %c, %b, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %cat = stablehlo.concatenate %d1, %d2, dim = 0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %y, %cat : tensor<2x8x8x8xf32>, tensor<8x8xf32>
}"""

SHAPES = [(2, 8, 8, 4), (3, 3, 4, 8), (4, 16), (16, 8), (4, 16)]


def _launches_and_copies(exe) -> int:
    """Kernels, cuBLASLt calls and device-to-device copies (a copy to offset 0 is a
    memcpy, not a kernel)."""
    gpu = exe.as_text("gpu")
    return (gpu.count("gpu.launch_func") + len(re.findall(r"call @xla_gemm_\d+\(", gpu))
            + gpu.count("memref.copy"))


def _compiled(contractions: str, disable=()):
    options = xlac.Options.from_env().replace(cuda_contractions=contractions, cache_dir="",
                                              disable_passes=disable)
    return xlac.compile(PROGRAM, target="cuda", options=options)


@pytest.mark.parametrize("contractions", ["generated", "cublaslt"])
def test_padded_and_concatenated_results_are_written_in_place(contractions):
    # each kernel its own launch (independent ones run as one otherwise)
    exe = _compiled(contractions, ("xla-gpu-horizontal-launches",))
    copied = _compiled(contractions, ("xla-gpu-results-in-slices", "xla-gpu-horizontal-launches"))
    # relu, im2col (the padding is its bounds check: xla-gpu-convolutions-as-matmuls),
    # 3 matmuls; without the pass each matmul result was copied into the concatenation
    assert _launches_and_copies(exe) == _launches_and_copies(copied) - 2 == 5
    assert "memref.copy" not in exe.as_text("gpu")
    ptxas(exe.as_text("ptx"))


@pytest.mark.parametrize("contractions", [pytest.param("generated", marks=pytest.mark.heavy), "cublaslt"])
def test_results_written_in_slices_keep_the_cpu_values(contractions):
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(shape).astype(np.float32) for shape in SHAPES]
    got = run_emulated(_compiled(contractions), *args)
    want = xlac.compile(PROGRAM).run(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)


# a convolution, batch norm's scaling and relu (its epilogue), padded by a second one
NORMALIZED = """
func.func @main(%x: tensor<2x8x8x4xf32>, %w: tensor<3x3x4x8xf32>, %v: tensor<8xf32>,
                %w2: tensor<3x3x8x8xf32>) -> tensor<2x8x8x8xf32> {
  %y = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<2x8x8x4xf32>, tensor<3x3x4x8xf32>) -> tensor<2x8x8x8xf32>
  %s = stablehlo.rsqrt %v : tensor<8xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<8xf32>) -> tensor<2x8x8x8xf32>
  %n = stablehlo.multiply %y, %sb : tensor<2x8x8x8xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<2x8x8x8xf32>
  %r = stablehlo.maximum %n, %zero : tensor<2x8x8x8xf32>
  %z = stablehlo.convolution(%r, %w2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<2x8x8x8xf32>, tensor<3x3x8x8xf32>) -> tensor<2x8x8x8xf32>
  return %z : tensor<2x8x8x8xf32>
}"""


def test_an_epilogue_cublaslt_leaves_is_read_unpadded_by_the_next_im2col():
    """On cuBLASLt the batch norm is a kernel after the call anyway; the second
    convolution's padding is its im2col's bounds check (it was a fill and the batch
    norm writing the padded buffer's interior): per convolution an im2col and a
    call, and the epilogue, nothing else."""
    options = xlac.Options.from_env().replace(cuda_contractions="cublaslt", cache_dir="")
    exe = xlac.compile(NORMALIZED, target="cuda", options=options)
    assert _launches_and_copies(exe) == 2 * 2 + 1
    assert "memref.copy" not in exe.as_text("gpu")
    rng = np.random.default_rng(1)
    args = [rng.standard_normal((2, 8, 8, 4)), rng.standard_normal((3, 3, 4, 8)),
            rng.uniform(0.5, 2.0, 8), rng.standard_normal((3, 3, 8, 8))]
    args = [a.astype(np.float32) for a in args]
    got = run_emulated(exe, *args)[0]
    want = xlac.compile(NORMALIZED).run(*args)[0]
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
