"""Programs too big for the machine: a clear compile error, never a crash;
big splat constants compile as fills, not as gigabytes of data."""

from __future__ import annotations

import time

import numpy as np
import pytest

import xlac

HUGE = 100_000     # 100000 x 100000 f32: 37 GiB


def test_a_temporary_past_memory_is_refused_with_its_size():
    text = f"""func.func @main(%x: tensor<f32>) -> tensor<f32> {{
  %b = stablehlo.broadcast_in_dim %x, dims = [] : (tensor<f32>) -> tensor<{HUGE}x{HUGE}xf32>
  %e = stablehlo.exponential %b : tensor<{HUGE}x{HUGE}xf32>
  %t = stablehlo.transpose %e, dims = [1, 0] : (tensor<{HUGE}x{HUGE}xf32>) -> tensor<{HUGE}x{HUGE}xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%t init: %z) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<{HUGE}x{HUGE}xf32>, tensor<f32>) -> tensor<f32>
  return %s : tensor<f32>
}}"""
    with pytest.raises(xlac.ResourceLimitError) as caught:
        xlac.compile(text.encode(), cache=False)
    message = str(caught.value)
    assert "needs at least 37.3 GiB of memory" in message and "this machine has" in message
    assert "reproducer" not in message      # not a compiler bug


def test_a_result_past_memory_is_refused():
    text = f"""func.func @main(%x: tensor<f32>) -> tensor<{HUGE}x{HUGE}xf32> {{
  %b = stablehlo.broadcast_in_dim %x, dims = [] : (tensor<f32>) -> tensor<{HUGE}x{HUGE}xf32>
  return %b : tensor<{HUGE}x{HUGE}xf32>
}}"""
    with pytest.raises(xlac.ResourceLimitError, match="arguments and results: 37.3 GiB"):
        xlac.compile(text.encode(), cache=False)


def test_a_large_splat_constant_compiles_as_a_fill():
    # 2.5e7 elements: was a 100 MB global built at compile time
    text = b"""func.func @main() -> tensor<5000x5000xf32> {
  %c = stablehlo.constant dense<1.5> : tensor<5000x5000xf32>
  return %c : tensor<5000x5000xf32>
}"""
    start = time.perf_counter()
    exe = xlac.compile(text, cache=False)
    assert time.perf_counter() - start < 20
    out = exe.run()[0]
    assert out.shape == (5000, 5000) and np.all(out[::499, ::497] == np.float32(1.5))
