"""A matmul in a loop whose B the loop never writes reads B from panels packed
once before the loop (xla-pack-invariant-panels): bit for bit the sums read in
place, and only where B is invariant."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

STEPS = 9           # past xla-unroll-short-loops' 8: a loop


def _scan(b_carried_changed: bool = False) -> str:
    """An LSTM-like scan: g = h . w + bias (8 x 128 . 128 x 512, four gates),
    h <- tanh(g0 + g1 g2 - g3) for STEPS steps; ``b_carried_changed``: the loop also doubles
    w each step, so w is not invariant."""
    w_next = "%w2" if b_carried_changed else "%w"
    doubled = "    %w2 = stablehlo.add %w, %w : tensor<128x512xf32>\n" if b_carried_changed else ""
    return f"""
func.func @main(%h0: tensor<8x128xf32>, %w0: tensor<128x512xf32>, %b: tensor<512xf32>) -> tensor<8x128xf32> {{
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %zero, %h = %h0, %w = %w0) : tensor<i32>, tensor<8x128xf32>, tensor<128x512xf32>
  cond {{
    %n = stablehlo.constant dense<{STEPS}> : tensor<i32>
    %c = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    %d = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0] : (tensor<8x128xf32>, tensor<128x512xf32>) -> tensor<8x512xf32>
    %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<512xf32>) -> tensor<8x512xf32>
    %g = stablehlo.add %d, %bb : tensor<8x512xf32>
    %g0 = stablehlo.slice %g [0:8, 0:128] : (tensor<8x512xf32>) -> tensor<8x128xf32>
    %g1 = stablehlo.slice %g [0:8, 128:256] : (tensor<8x512xf32>) -> tensor<8x128xf32>
    %g2 = stablehlo.slice %g [0:8, 256:384] : (tensor<8x512xf32>) -> tensor<8x128xf32>
    %g3 = stablehlo.slice %g [0:8, 384:512] : (tensor<8x512xf32>) -> tensor<8x128xf32>
    %p = stablehlo.multiply %g1, %g2 : tensor<8x128xf32>
    %a = stablehlo.add %g0, %p : tensor<8x128xf32>
    %m = stablehlo.subtract %a, %g3 : tensor<8x128xf32>
    %s = stablehlo.tanh %m : tensor<8x128xf32>
{doubled}    stablehlo.return %j, %s, {w_next} : tensor<i32>, tensor<8x128xf32>, tensor<128x512xf32>
  }}
  return %r#1 : tensor<8x128xf32>
}}"""


def _inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    return [rng.standard_normal((8, 128), dtype=np.float32),
            rng.standard_normal((128, 512), dtype=np.float32) / 12,
            rng.standard_normal(512, dtype=np.float32)]


@pytest.mark.parametrize("cpu", ["x86-64-v4", "x86-64-v3"])
def test_invariant_b_is_packed_once_before_the_loop(cpu):
    exe = xlac.compile(_scan(), cache=False, cpu=cpu)
    text = exe.as_text("bufferized")
    width = 32 if cpu == "x86-64-v4" else 8
    assert f"call @xla_scheduled_panels_128x512x{width}(" in text
    packing = text.index("call @xla_scheduled_panels_")
    assert packing < text.index("scf.while") < text.index("_panels(")     # before the loop; read in it
    off = xlac.compile(_scan(), cache=False, cpu=cpu,
                       options=xlac.Options(disable_passes=("xla-pack-invariant-panels",)))
    assert "_panels" not in off.as_text("bufferized")
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this CPU cannot run {cpu} code (compiled: checked)")
    got, want = (np.asarray(e(*_inputs())) for e in (exe, off))
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    h, w, b = (i.astype(np.float64) for i in _inputs())
    for _ in range(STEPS):
        g = h @ w + b
        h = np.tanh(g[:, :128] + g[:, 128:256] * g[:, 256:384] - g[:, 384:])
    np.testing.assert_allclose(got, h, rtol=1e-4, atol=1e-4)


def test_b_the_loop_changes_is_read_in_place():
    text = xlac.compile(_scan(b_carried_changed=True), cache=False, cpu="x86-64-v4").as_text("bufferized")
    assert "_panels" not in text
