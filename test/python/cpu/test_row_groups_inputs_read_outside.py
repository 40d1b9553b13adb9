"""A layer norm of a residual stream fuses into one row loop though the
stream ``x`` it normalizes is read again by the next residual add
(xla-apply-schedules' row groups read such an op's result as an input).

Before: ``x`` (the dot's bias + residual add, an elementwise op over the
same rows) was found among the layer norm's producers, and its second
reader refused the whole group: each layer norm ran as three kernels (the
two row sums, the normalize), three passes over ``x`` (hf_vit: 12 of its
13 layer norms; BERT's and GPT-2's pre-LN ones alike)."""

import re

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

_X = "tensor<2x8x64xf32>"
_R = "tensor<2x8xf32>"
_R1 = "tensor<2x8x1xf32>"


def _layer_norm(k: int, x: str) -> list[str]:
    """HF's layer norm as torch exports it: mean and mean of squares, var =
    max(E[x^2] - mean^2, 0), (x - mean) * rsqrt(var + eps) * g + b."""
    return [
        f"  %sq{k} = chlo.square {x} : {_X} -> {_X}",
        f"  %s{k} = stablehlo.reduce({x} init: %zero) applies stablehlo.add across dimensions = [2] : ({_X}, tensor<f32>) -> {_R}",
        f"  %m{k} = stablehlo.divide %s{k}, %n : {_R}",
        f"  %q{k} = stablehlo.reduce(%sq{k} init: %zero) applies stablehlo.add across dimensions = [2] : ({_X}, tensor<f32>) -> {_R}",
        f"  %mq{k} = stablehlo.divide %q{k}, %n : {_R}",
        f"  %mm{k} = chlo.square %m{k} : {_R} -> {_R}",
        f"  %v0{k} = stablehlo.subtract %mq{k}, %mm{k} : {_R}",
        f"  %v{k} = stablehlo.maximum %zeros, %v0{k} : {_R}",
        f"  %mb{k} = stablehlo.broadcast_in_dim %m{k}, dims = [0, 1] : ({_R}) -> {_X}",
        f"  %c{k} = stablehlo.subtract {x}, %mb{k} : {_X}",
        f"  %ve{k} = stablehlo.add %v{k}, %eps : {_R}",
        f"  %r{k} = stablehlo.rsqrt %ve{k} : {_R}",
        f"  %rb{k} = stablehlo.broadcast_in_dim %r{k}, dims = [0, 1] : ({_R}) -> {_X}",
        f"  %gb{k} = stablehlo.broadcast_in_dim %g, dims = [2] : (tensor<64xf32>) -> {_X}",
        f"  %gr{k} = stablehlo.multiply %rb{k}, %gb{k} : {_X}",
        f"  %ln{k} = stablehlo.multiply %c{k}, %gr{k} : {_X}",
    ]


def _pre_ln_blocks(blocks: int) -> str:
    """``blocks`` times x = x + dot(layer_norm(x), w) + b: each x read by its
    layer norm and by the next residual add."""
    lines = [f"func.func @main(%x0: {_X}, %w: tensor<64x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> {_X} {{",
             "  %zero = stablehlo.constant dense<0.0> : tensor<f32>",
             f"  %n = stablehlo.constant dense<64.0> : {_R}",
             f"  %zeros = stablehlo.constant dense<0.0> : {_R}",
             f"  %eps = stablehlo.constant dense<1.0e-05> : {_R}",
             f"  %bb = stablehlo.broadcast_in_dim %b, dims = [2] : (tensor<64xf32>) -> {_X}"]
    for k in range(blocks):
        x, y = f"%x{k}", f"%x{k + 1}"
        lines += _layer_norm(k, x)
        lines += [f"  %h{k} = stablehlo.dot_general %ln{k}, %w, contracting_dims = [2] x [0] : ({_X}, tensor<64x64xf32>) -> {_X}",
                  f"  %hb{k} = stablehlo.add %h{k}, %bb : {_X}",
                  f"  {y} = stablehlo.add %hb{k}, {x} : {_X}"]
    lines += [f"  return %x{blocks} : {_X}", "}"]
    return "\n".join(lines) + "\n"


def _expected(x, w, g, b, blocks: int) -> np.ndarray:
    x, w, g, b = (a.astype(np.float64) for a in (x, w, g, b))
    for _ in range(blocks):
        mean = x.mean(axis=2, keepdims=True)
        var = np.maximum((x * x).mean(axis=2, keepdims=True) - mean * mean, 0)
        x = x + ((x - mean) / np.sqrt(var + 1e-5) * g) @ w + b
    return x


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
def test_each_layer_norm_of_a_residual_stream_is_one_row_kernel(cpu):
    blocks = 3
    exe = xlac.compile(_pre_ln_blocks(blocks), cpu=cpu, cache=False)
    kernels = re.findall(r"call @(xla_scheduled_\w+)", exe.as_text("bufferized"))
    # 8 (x86-64-v3) or 5 (x86-64-v4) calls: one row kernel per layer norm; before:
    # 12 or 9, the row sums and the normalize apart
    assert len(kernels) <= 8, kernels
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this host cannot run {cpu} code")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 8, 64)).astype(np.float32)
    w = (rng.standard_normal((64, 64)) / 8).astype(np.float32)
    g, b = (rng.standard_normal(64).astype(np.float32) for _ in range(2))
    np.testing.assert_allclose(exe(x, w, g, b), _expected(x, w, g, b, blocks), rtol=2e-4, atol=2e-4)
