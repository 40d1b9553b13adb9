"""select_and_scatter (max-pooling's gradient) as elementwise ops over window
positions (xla-lower-select-and-scatter{windows=true}, the CPU's): jax's
values bit for bit (ties to the first element, padding never picked, each
output combining its windows in the source's order) for overlapping and
disjoint windows, SAME and explicit padding, f32, bf16 and f16, min-pooling
(select LE), at host and x86-64-v3; vector loops (no "not scheduled" remark)
where the loops had one, NHWC and NCHW (the minor dim strided) alike."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

jax = pytest.importorskip("jax")
jnp = jax.numpy
lax = jax.lax
ml_dtypes = pytest.importorskip("ml_dtypes")

_CASES = [((1, 8, 8, 4), (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
          ((2, 9, 7, 3), (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
          ((2, 11, 11, 5), (1, 3, 3, 1), (1, 2, 2, 1), "VALID"),
          ((2, 10, 9, 3), (1, 3, 3, 1), (1, 1, 1, 1), "SAME"),
          ((1, 6, 6, 2), (1, 2, 3, 1), (1, 3, 2, 1), ((0, 0), (1, 2), (2, 0), (0, 0))),
          ((3, 7, 17), (1, 4, 1), (1, 3, 1), "SAME"),
          ((2, 12, 12, 20), (1, 5, 5, 1), (1, 2, 2, 1), "SAME")]


def _grad(window, stride, padding, init=-jnp.inf, op=lax.max):
    def pool(u):
        return lax.reduce_window(u, init, op, window, stride, padding)

    def grad(v, g):
        return jax.vjp(pool, v)[1](g)[0]
    return pool, grad


def _inputs(shape, dtype, window, stride, padding, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, shape).astype(np.float32)             # ties in every window
    x.reshape(-1)[::7] = -np.inf
    x = x.astype(dtype)
    pool, _ = _grad(window, stride, padding)
    out = jax.eval_shape(pool, x).shape
    g = rng.integers(-8, 9, out).astype(dtype)                    # exact sums
    return x, g


def _check(fn, args, level, scheduled=True):
    text = jax.jit(fn).lower(*args).as_text()
    assert "select_and_scatter" in text
    exe = xlac.compile(text, cpu=level, cache=False)
    assert ("not scheduled" not in (exe.fusion_report() or "")) == scheduled, exe.fusion_report()
    if level in runnable_levels(level):
        got, want = np.asarray(exe(*args)), np.asarray(jax.jit(fn)(*args))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("level", ["host", "x86-64-v3"])
@pytest.mark.parametrize("shape,window,stride,padding", _CASES)
def test_max_pool_gradient_as_jax(level, shape, window, stride, padding):
    x, g = _inputs(shape, np.float32, window, stride, padding)
    _check(_grad(window, stride, padding)[1], (x, g), level)


@pytest.mark.parametrize("level", ["host", "x86-64-v3"])
@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16])
@pytest.mark.parametrize("shape,window,stride,seed", [((2, 9, 10, 16), (1, 3, 3, 1), (1, 2, 2, 1), 1),
                                                      ((2, 4, 18, 20), (1, 1, 3, 3), (1, 1, 2, 2), 4)],
                         ids=["nhwc", "nchw"])
def test_other_types(level, dtype, shape, window, stride, seed):
    x, g = _inputs(shape, dtype, window, stride, "SAME", seed=seed)
    _check(_grad(window, stride, "SAME")[1], (x, g), level)


@pytest.mark.parametrize("level", ["host", "x86-64-v3"])
def test_min_pool_gradient(level):
    """select LE: the first minimum of each window."""
    window, stride, padding = (1, 2, 2, 1), (1, 2, 2, 1), "VALID"
    x, g = _inputs((2, 8, 6, 16), np.float32, window, stride, padding, seed=2)
    _check(_grad(window, stride, padding, jnp.inf, lax.min)[1], (x, g), level)


_NCHW = [((2, 3, 16, 32), (1, 1, 2, 2), (1, 1, 2, 2), "VALID"),
         ((2, 3, 14, 14), (1, 1, 2, 2), (1, 1, 2, 2), "VALID"),          # q extent 7: rounded up
         ((2, 4, 17, 15), (1, 1, 3, 3), (1, 1, 2, 2), "SAME"),
         ((2, 4, 17, 15), (1, 1, 3, 3), (1, 1, 2, 2), "VALID"),
         ((1, 5, 12, 20), (1, 1, 3, 3), (1, 1, 1, 1), "SAME"),
         ((2, 3, 11, 13), (1, 1, 2, 3), (1, 1, 3, 2), ((0, 0), (0, 0), (1, 2), (2, 0)))]


@pytest.mark.parametrize("level", ["host", "x86-64-v3"])
@pytest.mark.parametrize("shape,window,stride,padding", _NCHW)
def test_nchw_vectorized(level, shape, window, stride, padding):
    """Windows over the minor dims (NCHW): vector loops along the output's
    [w, 2] rows, jax's values bit for bit (ties, -inf)."""
    x, g = _inputs(shape, np.float32, window, stride, padding, seed=3)
    _check(_grad(window, stride, padding)[1], (x, g), level)


def test_nchw_nan():
    """NaN in a window: jax's pick (GE against NaN is false: the later element)."""
    window, stride, padding = (1, 1, 2, 2), (1, 1, 2, 2), "VALID"
    x, g = _inputs((1, 2, 8, 32), np.float32, window, stride, padding, seed=5)
    x.reshape(-1)[3::11] = np.nan
    _check(_grad(window, stride, padding)[1], (x, g), "host")


def test_windows_option_off():
    """{windows=false} (the CUDA pipeline's): the loops of the scalar lowering."""
    from xlac.passes.lower.lower_select_and_scatter import LowerSelectAndScatter
    assert LowerSelectAndScatter().windows is False
    assert LowerSelectAndScatter.from_options({"windows": "true"}).windows is True
