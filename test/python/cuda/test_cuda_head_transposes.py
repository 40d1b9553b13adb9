"""Attention heads split from biased projections (BERT's, ViT's): the transposes that
make each head's K^T and V for the batch matmuls are written by the bias add's kernel,
not kernels of their own, on both matmul paths (generated kernels, cuBLASLt), and the
values stay the cpu target's."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlac
from xlac.targets.cuda.ptx import ptxas
from xlac_emulator.simt import run_emulated

pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")

# batch 2, 8 tokens, 2 heads of 4: x [2,8,8] -> q, k, v with bias -> [2,8,2,4] each; the
# bias broadcast from [1,1,8] as jax exports it (a map with constants: (d0, d1, d2) -> (0, 0, d2))
ATTENTION = """
func.func @main(%x: tensor<2x8x8xf32>, %wq: tensor<8x8xf32>, %wk: tensor<8x8xf32>,
                %wv: tensor<8x8xf32>, %bq: tensor<8xf32>, %bk: tensor<8xf32>,
                %bv: tensor<8xf32>) -> tensor<2x8x8xf32> {
  %q0 = stablehlo.dot_general %x, %wq, contracting_dims = [2] x [0] : (tensor<2x8x8xf32>, tensor<8x8xf32>) -> tensor<2x8x8xf32>
  %k0 = stablehlo.dot_general %x, %wk, contracting_dims = [2] x [0] : (tensor<2x8x8xf32>, tensor<8x8xf32>) -> tensor<2x8x8xf32>
  %v0 = stablehlo.dot_general %x, %wv, contracting_dims = [2] x [0] : (tensor<2x8x8xf32>, tensor<8x8xf32>) -> tensor<2x8x8xf32>
  %bqr = stablehlo.reshape %bq : (tensor<8xf32>) -> tensor<1x1x8xf32>
  %bqb = stablehlo.broadcast_in_dim %bqr, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x8x8xf32>
  %bkr = stablehlo.reshape %bk : (tensor<8xf32>) -> tensor<1x1x8xf32>
  %bkb = stablehlo.broadcast_in_dim %bkr, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x8x8xf32>
  %bvr = stablehlo.reshape %bv : (tensor<8xf32>) -> tensor<1x1x8xf32>
  %bvb = stablehlo.broadcast_in_dim %bvr, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x8x8xf32>
  %q1 = stablehlo.add %q0, %bqb : tensor<2x8x8xf32>
  %k1 = stablehlo.add %k0, %bkb : tensor<2x8x8xf32>
  %v1 = stablehlo.add %v0, %bvb : tensor<2x8x8xf32>
  %q = stablehlo.reshape %q1 : (tensor<2x8x8xf32>) -> tensor<2x8x2x4xf32>
  %k = stablehlo.reshape %k1 : (tensor<2x8x8xf32>) -> tensor<2x8x2x4xf32>
  %v = stablehlo.reshape %v1 : (tensor<2x8x8xf32>) -> tensor<2x8x2x4xf32>
  %s = stablehlo.dot_general %q, %k, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3] : (tensor<2x8x2x4xf32>, tensor<2x8x2x4xf32>) -> tensor<2x2x8x8xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%s init: %ninf) applies stablehlo.maximum across dimensions = [3] : (tensor<2x2x8x8xf32>, tensor<f32>) -> tensor<2x2x8xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x2x8xf32>) -> tensor<2x2x8x8xf32>
  %d = stablehlo.subtract %s, %mb : tensor<2x2x8x8xf32>
  %e = stablehlo.exponential %d : tensor<2x2x8x8xf32>
  %z = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [3] : (tensor<2x2x8x8xf32>, tensor<f32>) -> tensor<2x2x8xf32>
  %zb = stablehlo.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x2x8xf32>) -> tensor<2x2x8x8xf32>
  %p = stablehlo.divide %e, %zb : tensor<2x2x8x8xf32>
  %c = stablehlo.dot_general %p, %v, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1] : (tensor<2x2x8x8xf32>, tensor<2x8x2x4xf32>) -> tensor<2x2x8x4xf32>
  %ct = stablehlo.transpose %c, dims = [0, 2, 1, 3] : (tensor<2x2x8x4xf32>) -> tensor<2x8x2x4xf32>
  %r = stablehlo.reshape %ct : (tensor<2x8x2x4xf32>) -> tensor<2x8x8xf32>
  return %r : tensor<2x8x8xf32>
}"""

SHAPES = [(2, 8, 8), (8, 8), (8, 8), (8, 8), (8,), (8,), (8,)]


def _groups(exe) -> int:
    fused, alone = re.match(r"(\d+) fusion\(s\), (\d+) op\(s\)", exe.fusion_report()).groups()
    return int(fused) + int(alone)


def _launches_and_calls(exe) -> int:
    gpu = exe.as_text("gpu")
    return gpu.count("gpu.launch_func") + len(re.findall(r"call @xla_gemm_\d+\(", gpu))


def _compiled(contractions: str, disable=()):
    options = xlac.Options.from_env().replace(cuda_contractions=contractions, cache_dir="",
                                              disable_passes=disable)
    return xlac.compile(ATTENTION, target="cuda", options=options)


# kernels side by side run as one launch (the three projections, the three bias adds);
# on cuBLASLt the projections are three calls, and since a call is known to write its
# C alone, the bias adds after them are one launch: 5 calls + 3 launches
SIDE_BY_SIDE = {"generated": 6, "cublaslt": 8}


@pytest.mark.parametrize("contractions", ["generated", "cublaslt"])
def test_head_transposes_are_written_by_the_bias_add(contractions):
    apart = _compiled(contractions, ("xla-gpu-horizontal-launches",))
    # 3 projections, 3 bias adds writing Q, K^T and V per head, 2 batch matmuls, the
    # softmax's 2 kernels, the heads merged: the plan's 8 groups + 2 (13 when each
    # head transpose was a kernel of its own), each its own launch
    assert _launches_and_calls(apart) == _groups(apart) + 2 == 10
    exe = _compiled(contractions)
    assert _launches_and_calls(exe) == SIDE_BY_SIDE[contractions]
    ptxas(exe.as_text("ptx"))           # the kernels that write transposed heads: valid sm_90


# the generated matmuls run slowly in the SIMT emulator (7 s): with the heaviest checks
@pytest.mark.parametrize("contractions", [pytest.param("generated", marks=pytest.mark.heavy), "cublaslt"])
def test_heads_written_transposed_keep_the_cpu_values(contractions):
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(shape).astype(np.float32) for shape in SHAPES]
    got = run_emulated(_compiled(contractions), *args)[0]
    want = xlac.compile(ATTENTION).run(*args)[0]
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
