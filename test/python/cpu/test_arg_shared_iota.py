"""Argmaxes and argmins that share one iota (xla-duplicate-index-producers):
jnp.argmax and jnp.argmin of one array, two arrays of one shape, an iota also
returned; indices equal to jax's and numpy's, bit for bit, at host and
x86-64-v3 (run where the CPU can), and vector loops: no "not scheduled"
remark, where one shared iota array left the reductions scalar."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

jax = pytest.importorskip("jax")
jnp = jax.numpy

_PASS = "xla-duplicate-index-producers"
_CASES = [((37, 45), 0, "int8"), ((37, 45), 1, "float32"), ((6, 33, 19), 1, "bool"),
          ((64, 96), 1, "float32"), ((5, 7, 40), 2, "int32"), ((300,), 0, "float32"), ((8, 50), 1, "uint16")]


def _values(shape, name: str, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name == "bool":
        return rng.random(shape) < 0.1
    x = rng.integers(-4, 5, size=shape)
    if name == "uint16":
        return (x % 7).astype(np.uint16)
    x = x.astype(name)
    if name == "float32":
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, max(1, flat.size // 30))] = np.nan
        flat[rng.integers(0, flat.size, max(1, flat.size // 30))] = -0.0
    return x


def _both(axis):
    return lambda v: (jnp.argmax(v, axis=axis), jnp.argmin(v, axis=axis))


@pytest.mark.parametrize("level", ["host", "x86-64-v3"])
@pytest.mark.parametrize("shape,axis,name", _CASES)
def test_argmax_and_argmin_of_one_array(level, shape, axis, name):
    x = _values(shape, name)
    program = _both(axis)
    exe = xlac.compile(jax.jit(program).lower(x).as_text(), cpu=level, cache=False)
    assert "not scheduled" not in exe.fusion_report(), exe.fusion_report()
    if level not in runnable_levels(level):
        return
    got, want = exe(x), jax.jit(program)(x)
    for g, w, ref in zip(got, want, (np.argmax(x, axis=axis), np.argmin(x, axis=axis))):
        g = np.asarray(g)
        assert g.dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, np.asarray(w))
        np.testing.assert_array_equal(g, ref)


@pytest.mark.parametrize("level", ["host", "x86-64-v3"])
def test_two_arrays_and_a_returned_iota(level):
    """Two arrays' argmaxes (one iota) and, in another program, the iota also
    returned (it stays an array: it is written anyway) with its argmax."""
    a, b = _values((40, 70), "float32", 1), _values((40, 70), "float32", 2)

    def two(u, v):
        return jnp.argmax(u, axis=1), jnp.argmax(v, axis=1), jnp.argmin(u + v, axis=1)

    def returned(u):
        index = jax.lax.broadcasted_iota(jnp.int32, u.shape, 1)
        return jnp.argmax(u, axis=1), jnp.argmin(u, axis=1), index * 2
    for program, args in ((two, (a, b)), (returned, (a,))):
        exe = xlac.compile(jax.jit(program).lower(*args).as_text(), cpu=level, cache=False)
        if level not in runnable_levels(level):
            continue
        for g, w in zip(exe(*args), jax.jit(program)(*args)):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert "not scheduled" not in xlac.compile(jax.jit(two).lower(a, b).as_text(), cpu=level,
                                               cache=False).fusion_report()


def test_without_the_pass():
    """Disabled, the shared iota is an array again and the reductions scalar loops, named so."""
    x = _values((37, 45), "int8")
    text = jax.jit(_both(0)).lower(x).as_text()
    exe = xlac.compile(text, cache=False, disable_passes=(_PASS,))
    assert "not scheduled" in exe.fusion_report()
    for g, w in zip(exe(x), (np.argmax(x, axis=0), np.argmin(x, axis=0))):
        np.testing.assert_array_equal(np.asarray(g), w)
