"""xla-diagonal-gathers: jnp.diagonal(a, k) and jnp.diag (any offset,
non-square, batched over leading dims, with axes moved by a transpose) read
the diagonal as a strided slice, no gather left, jax's values bit for bit;
a gather whose indices leave the matrix (clamped) stays a gather."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

jax = pytest.importorskip("jax")
jnp = jax.numpy

_PASS = "xla-diagonal-gathers"
_CASES = [
    ("k3", lambda a: jnp.diagonal(a, 3), (40, 40)),
    ("k-3.tall", lambda a: jnp.diagonal(a, -3), (40, 30)),
    ("k7.wide", lambda a: jnp.diagonal(a, 7), (20, 50)),
    ("k0.tall", lambda a: jnp.diagonal(a), (30, 20)),
    ("k39.last", lambda a: jnp.diagonal(a, 39), (40, 40)),
    ("k-39.last", lambda a: jnp.diagonal(a, -39), (40, 40)),
    ("diag.slice", lambda a: jnp.diag(a[:, :30]), (50, 50)),
    ("diag.rows", lambda a: jnp.diag(a[3:, :]), (50, 50)),
    ("batched.k2", lambda a: jnp.diagonal(a, 2, 1, 2), (4, 9, 11)),
    ("batched2.k-1", lambda a: jnp.diagonal(a, -1, 2, 3), (3, 2, 9, 11)),
    ("axes02", lambda a: jnp.diagonal(a, 0, 0, 2), (9, 4, 9)),
    ("axes01.k1", lambda a: jnp.diagonal(a, 1, 0, 1), (9, 12, 5)),
    ("fused", lambda a: jnp.diagonal(a, 1) * 2 + 1, (40, 40)),
]


def _input(shape, dtype):
    a = np.random.default_rng(62).standard_normal(shape).astype(np.float32)
    a.reshape(-1)[::7] = np.nan
    a.reshape(-1)[::11] = -0.0
    return (a * 50).astype(dtype) if dtype in (np.int8, np.int16) else a.astype(dtype)


@pytest.mark.parametrize("level", ["host", "x86-64-v3"])
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.int16])
def test_diagonals_as_jax(level, dtype):
    if level not in runnable_levels(level):
        pytest.skip(f"{level} does not run here")
    for name, fn, shape in _CASES:
        x = _input(shape, dtype)
        exe = xlac.compile(jax.jit(fn).lower(x).as_text(), cpu=level, cache=False)
        assert "stablehlo.gather" not in exe.as_text("stablehlo"), name
        got, want = np.asarray(exe(x)), np.asarray(jax.jit(fn)(x))
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=name)


def test_without_the_pass_a_gather():
    """The pass is what removes the gather (and its "not scheduled" remark)."""
    fn = lambda a: jnp.diag(a[:, :300])                       # noqa: E731
    x = _input((512, 512), np.float32)
    text = jax.jit(fn).lower(x).as_text()
    before = xlac.compile(text, cache=False, disable_passes=(_PASS,))
    after = xlac.compile(text, cache=False)
    assert "stablehlo.gather" in before.as_text("stablehlo")
    assert "not scheduled" in before.fusion_report() and "not scheduled" not in after.fusion_report()
    assert "memref.subview" in after.as_text("bufferized")
    np.testing.assert_array_equal(np.asarray(after(x)), np.asarray(before(x)))
