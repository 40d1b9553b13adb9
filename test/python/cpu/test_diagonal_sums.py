"""xla-diagonal-sums: a sum of a matrix masked to its diagonal (jnp.trace,
einsum "ii->", "ii->i") reads only the diagonal; the diagonal bit-identical
to the masked sum, -0.0 and NaNs included, the trace within rounding."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

_PASS = "xla-diagonal-sums"


def _masked_sum(shape: tuple[int, int], dims: list[int], dtype: str = "f32", iota: str = "ui32") -> str:
    t = f"tensor<{shape[0]}x{shape[1]}x{dtype}>"
    m = f"tensor<{shape[0]}x{shape[1]}x{iota}>"
    kept = [shape[d] for d in range(2) if d not in dims]
    r = f"tensor<{'x'.join(map(str, kept))}{'x' if kept else ''}{dtype}>"
    return (f"func.func @main(%a: {t}) -> {r} {{\n"
            f"  %0 = stablehlo.iota dim = 0 : {m}\n"
            f"  %1 = stablehlo.iota dim = 1 : {m}\n"
            f"  %2 = stablehlo.compare EQ, %0, %1 : ({m}, {m}) -> tensor<{shape[0]}x{shape[1]}xi1>\n"
            f"  %z = stablehlo.constant dense<0.0> : tensor<{dtype}>\n"
            f"  %3 = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<{dtype}>) -> {t}\n"
            f"  %4 = stablehlo.select %2, %a, %3 : tensor<{shape[0]}x{shape[1]}xi1>, {t}\n"
            f"  %5 = stablehlo.reduce(%4 init: %z) applies stablehlo.add across dimensions = {dims}"
            f" : ({t}, tensor<{dtype}>) -> {r}\n"
            f"  return %5 : {r}\n}}")


def _input(shape, dtype=np.float32):
    a = np.random.default_rng(61).standard_normal(shape).astype(dtype)
    k = min(shape)
    a[0, 1 % shape[1]] = np.nan                      # off the diagonal: dropped by the mask
    a[k - 1, k - 1] = -0.0
    return a


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize("shape", [(2000, 2000), (77, 77), (5, 5), (1, 1)])
@pytest.mark.parametrize("dims", [[0], [1]])
def test_the_diagonal_is_bit_identical(cpu, shape, dims):
    skip_unless_runnable(cpu)
    a = _input(shape)
    assert_diagonal_read(_masked_sum(shape, dims), cpu, a, np.diag(a))


def skip_unless_runnable(cpu: str) -> None:
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"{cpu} code does not run on this CPU")


def assert_diagonal_read(text: str, cpu: str, a: np.ndarray, diagonal: np.ndarray) -> None:
    """``text`` compiles to no select and no reduce, and gives ``0.0 + diagonal``
    (-0.0 as +0.0, as the masked sum from +0.0) bit for bit, as with the pass disabled."""
    exe = xlac.compile(text, cpu=cpu, cache=False)
    stablehlo = exe.as_text("stablehlo")
    assert "stablehlo.select" not in stablehlo and "stablehlo.reduce" not in stablehlo
    got = exe(a)
    want = np.float32(0.0) + diagonal
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    old = xlac.compile(text, cpu=cpu, cache=False, disable_passes=(_PASS,))
    np.testing.assert_array_equal(got.view(np.uint32), old(a).view(np.uint32))


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize(("shape", "dtype"), [((2000, 2000), "f32"), ((300, 500), "f32"), ((500, 300), "f32"),
                                              ((33, 17), "f64"), ((1, 9), "f32")])
def test_the_trace_sums_the_diagonal(cpu, shape, dtype):
    skip_unless_runnable(cpu)
    text = _masked_sum(shape, [0, 1], dtype)
    exe = xlac.compile(text, cpu=cpu, cache=False)
    stablehlo = exe.as_text("stablehlo")
    assert "stablehlo.select" not in stablehlo and "stablehlo.slice" in stablehlo
    a = _input(shape, np.float64 if dtype == "f64" else np.float32)
    got = exe(a)
    np.testing.assert_allclose(got, np.trace(a.astype(np.float64)), rtol=1e-5, atol=1e-5)
    assert not np.isnan(got)                           # the NaN off the diagonal is masked off


def test_a_nan_on_the_diagonal_and_negative_zeros():
    text = _masked_sum((6, 6), [0, 1])
    exe = xlac.compile(text, cpu="x86-64-v3", cache=False)
    a = np.full((6, 6), 5.0, np.float32)
    np.fill_diagonal(a, -0.0)
    total = exe(a)
    assert total == 0 and not np.signbit(total)        # sums from +0.0: +0.0
    a[3, 3] = np.nan
    assert np.isnan(exe(a))


def test_a_narrow_iota_that_wraps_is_left_alone():
    # i8 iotas on 300 rows: row 256 equals column 0 as well; the masked sum stays
    text = _masked_sum((300, 300), [0, 1], iota="i8")
    exe = xlac.compile(text, cpu="x86-64-v3", cache=False)
    assert "stablehlo.select" in exe.as_text("stablehlo")
    a = np.ones((300, 300), np.float32)
    assert exe(a) == 300 + 44 + 44


def test_a_complex_sum_is_left_alone():
    # complex constants are no dense float attributes: the pass passes over them
    text = ("func.func @main(%a: tensor<2x3xcomplex<f32>>) -> tensor<complex<f32>> {\n"
            "  %z = stablehlo.constant dense<(0.0, 0.0)> : tensor<complex<f32>>\n"
            "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0, 1]"
            " : (tensor<2x3xcomplex<f32>>, tensor<complex<f32>>) -> tensor<complex<f32>>\n"
            "  return %0 : tensor<complex<f32>>\n}")
    a = (np.arange(6) + 1j * np.arange(6)).astype(np.complex64).reshape(2, 3)
    assert xlac.compile(text, cpu="x86-64-v3", cache=False)(a) == a.sum()
