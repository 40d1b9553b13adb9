"""xla-diagonal-sums on batched masks (jnp.trace(axis1=1, axis2=2), einsum
"bii->b", "bii->bi": a 2-D mask broadcast over leading dims) and offset ones
(jnp.trace(offset=k): iota0 + k == iota1); the diagonal bit-identical to the
masked sum, the trace within rounding, what does not match left alone."""

from __future__ import annotations

import numpy as np
import pytest
from test_diagonal_sums import assert_diagonal_read, skip_unless_runnable

import xlac

_PASS = "xla-diagonal-sums"


def _masked_sum(shape, dims, k=0, iota="i32", compare_on_batch=False):
    t = f"tensor<{'x'.join(map(str, shape))}xf32>"
    square = shape[:2] if compare_on_batch else shape[-2:]
    m = f"tensor<{square[0]}x{square[1]}x{iota}>"
    b = f"tensor<{square[0]}x{square[1]}xi1>"
    kept = [shape[d] for d in range(len(shape)) if d not in dims]
    r = f"tensor<{'x'.join(map(str, kept))}{'x' if kept else ''}f32>"
    rank = len(shape)
    mask = "%2"
    lines = [f"func.func @main(%a: {t}) -> {r} {{",
             f"  %0 = stablehlo.iota dim = 0 : {m}",
             f"  %1 = stablehlo.iota dim = 1 : {m}",
             f"  %c = stablehlo.constant dense<{k}> : tensor<{iota}>",
             f"  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<{iota}>) -> {m}",
             f"  %rk = stablehlo.add %0, %cb : {m}",
             f"  %2 = stablehlo.compare EQ, %rk, %1 : ({m}, {m}) -> {b}"]
    if rank > 2:
        bdims = [0, 1] if compare_on_batch else [rank - 2, rank - 1]
        lines.append(f"  %mb = stablehlo.broadcast_in_dim %2, dims = {bdims} : ({b}) -> "
                     f"tensor<{'x'.join(map(str, shape))}xi1>")
        mask = "%mb"
    lines += ["  %z = stablehlo.constant dense<0.0> : tensor<f32>",
              f"  %3 = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> {t}",
              f"  %4 = stablehlo.select {mask}, %a, %3 : tensor<{'x'.join(map(str, shape))}xi1>, {t}",
              f"  %5 = stablehlo.reduce(%4 init: %z) applies stablehlo.add across dimensions = {dims}"
              f" : ({t}, tensor<f32>) -> {r}",
              f"  return %5 : {r}", "}"]
    return "\n".join(lines)


def _input(shape):
    a = np.random.default_rng(61).standard_normal(shape).astype(np.float32)
    a[..., 0, -1] = np.nan                           # off every diagonal tested: dropped by the mask
    a[..., 1, 1] = -0.0
    return a


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize(("shape", "dims"), [((4, 9, 9), [1]), ((4, 9, 9), [2]), ((3, 2, 40, 40), [3]),
                                             ((5, 9, 6), [1])])
def test_batched_diagonals_are_bit_identical(cpu, shape, dims):
    skip_unless_runnable(cpu)
    a = _input(shape)
    assert_diagonal_read(_masked_sum(shape, dims), cpu, a, np.diagonal(a, axis1=-2, axis2=-1))


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize(("shape", "dims", "k"), [((4, 300, 300), [1, 2], 0), ((4, 30, 50), [2, 1], 0),
                                                  ((4, 30, 50), [0, 1, 2], 0), ((3, 2, 17, 17), [2, 3], 0),
                                                  ((300, 300), [0, 1], 1), ((30, 50), [0, 1], 7),
                                                  ((50, 30), [0, 1], -4), ((4, 20, 20), [1, 2], -19),
                                                  ((20, 20), [0, 1], 3)])
def test_batched_and_offset_traces(cpu, shape, dims, k):
    skip_unless_runnable(cpu)
    text = _masked_sum(shape, dims, k)
    exe = xlac.compile(text, cpu=cpu, cache=False)
    assert "stablehlo.select" not in exe.as_text("stablehlo")
    a = _input(shape)
    traces = np.trace(a.astype(np.float64), offset=k, axis1=-2, axis2=-1)
    want = traces.sum() if 0 in dims and len(shape) == 3 else traces
    if k not in (-1, 1):                             # the NaN at [0, -1] is off these diagonals
        np.testing.assert_allclose(exe(a), want, rtol=1e-5, atol=1e-5)
    old = xlac.compile(text, cpu=cpu, cache=False, disable_passes=(_PASS,))
    np.testing.assert_allclose(exe(a), old(a), rtol=1e-5, atol=1e-5)


def test_signed_zeros_and_a_nan_on_an_offset_diagonal():
    exe = xlac.compile(_masked_sum((6, 6), [0, 1], 2), cpu="x86-64-v3", cache=False)
    a = np.full((6, 6), 5.0, np.float32)
    a[np.arange(4), np.arange(4) + 2] = -0.0
    total = exe(a)
    assert total == 0 and not np.signbit(total)      # sums from +0.0: +0.0
    a[1, 3] = np.nan
    assert np.isnan(exe(a))


@pytest.mark.parametrize(("shape", "dims", "k", "kwargs"), [
    ((4, 9, 9), [1], 1, {}),                         # an offset diagonal of "bii->bi": its rows differ
    ((9, 9, 4), [0, 1], 0, {"compare_on_batch": True}),   # the mask on the leading dims
    ((8, 8), [0, 1], 8, {}),                         # an empty diagonal
    ((300, 300), [0, 1], 100, {"iota": "i8"}),       # an offset that wraps its iota type
    ((6, 6), [0, 1], 2 ** 32 - 2, {"iota": "ui32"}),  # -2 on unsigned iotas: a wrapping add
    ((4, 9, 9), [0], 0, {}),                         # summed over the batch only
])
def test_what_does_not_match_is_left_alone(shape, dims, k, kwargs):
    text = _masked_sum(shape, dims, k, **kwargs)
    exe = xlac.compile(text, cpu="x86-64-v3", cache=False)
    assert "stablehlo.select" in exe.as_text("stablehlo")
    a = np.ones(shape, np.float32)
    old = xlac.compile(text, cpu="x86-64-v3", cache=False, disable_passes=(_PASS,))
    np.testing.assert_array_equal(exe(a), old(a))
