"""Two SGD updates of weight gradients (w - lr * x^T . dy, the train step's
backward pass) write their results without a copy of the result through a
buffer of their own.

Before: CSE shared one tensor.empty between the epilogue's result and the
zero fill of the second gradient's matmul (the first matmul's fill got a
clone of its own, with its own empty; the one kept did not): the epilogue
read C's edge tiles from the buffer it wrote, and bufferization copied each
thread chunk of the 1024 x 1024 result out and back (2 x 4 MB a call)."""

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

_T = "tensor<64x128xf32>"
_W = "tensor<128x128xf32>"


def _two_updates() -> str:
    lines = [f"func.func @main(%w1: {_W}, %w2: {_W}, %x: {_T}, %h: {_T}, %dy: {_T}) -> ({_W}, {_W}) {{",
             "  %lr = stablehlo.constant dense<0.01> : tensor<f32>",
             f"  %lrb = stablehlo.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> {_W}"]
    for k, (w, a) in enumerate((("%w1", "%x"), ("%w2", "%h"))):
        lines += [f"  %g{k} = stablehlo.dot_general {a}, %dy, contracting_dims = [0] x [0] : ({_T}, {_T}) -> {_W}",
                  f"  %s{k} = stablehlo.multiply %lrb, %g{k} : {_W}",
                  f"  %u{k} = stablehlo.subtract {w}, %s{k} : {_W}"]
    lines += [f"  return %u0, %u1 : {_W}, {_W}", "}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
def test_weight_updates_are_written_in_place(cpu):
    exe = xlac.compile(_two_updates(), cpu=cpu, cache=False)
    assert "memref.copy" not in exe.as_text("bufferized")
    rng = np.random.default_rng(0)
    w1, w2 = (rng.standard_normal((128, 128)).astype(np.float32) for _ in range(2))
    x, h, dy = (rng.standard_normal((64, 128)).astype(np.float32) for _ in range(3))
    if cpu not in runnable_levels(cpu):
        return
    u1, u2 = exe(w1, w2, x, h, dy)
    np.testing.assert_allclose(u1, w1 - 0.01 * (x.T @ dy), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(u2, w2 - 0.01 * (h.T @ dy), rtol=1e-5, atol=1e-5)
