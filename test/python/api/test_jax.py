"""JAX interop: xlac.compile of jax.jit(f).lower(x), and xlac.jit."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac.jax_jit import as_numpy

jax = pytest.importorskip("jax", reason="JAX is not installed (pip install 'xlac[bench]')")
jnp = jax.numpy

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 8)).astype(np.float32)
W = RNG.standard_normal((8, 3)).astype(np.float32)


def mlp(x, w):
    return jax.nn.gelu(x @ w)


def test_compile_a_jax_lowering():
    exe = xlac.compile(jax.jit(mlp).lower(X, W))
    np.testing.assert_allclose(exe(X, W), np.asarray(jax.jit(mlp)(X, W)), rtol=1e-5, atol=1e-6)


def test_jit_matches_jax_and_keeps_the_output_tree():
    def f(x, w):
        return {"y": jnp.tanh(x @ w), "stats": (x.sum(), w.max(axis=0))}
    got = xlac.jit(f)(X, W)
    want = jax.jit(f)(X, W)
    assert set(got) == {"y", "stats"} and isinstance(got["stats"], tuple)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert isinstance(g, np.ndarray)
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-5, atol=1e-5)


def test_jit_compiles_once_per_input_signature():
    f = xlac.jit(mlp)
    f(X, W)
    f(X + 1, W)                                   # same shapes: no new compile
    assert f.signatures == 1
    f(X[:2], W)
    assert f.signatures == 2


def test_jit_takes_jax_arrays_and_python_structures():
    f = xlac.jit(lambda xs, scale: [x * scale for x in xs])
    xs = [jnp.asarray(X), np.ones(3, np.float32)]
    out = f(xs, np.float32(2.0))
    np.testing.assert_allclose(out[0], 2 * X)
    np.testing.assert_allclose(out[1], np.full(3, 2, np.float32))


def test_jit_static_arguments_and_float64_inputs():
    f = xlac.jit(lambda x, power: x ** power, static_argnums=1)
    x64 = np.linspace(0, 1, 5)                    # float64, as JAX (without x64) sees f32
    np.testing.assert_allclose(f(x64, 3), (x64 ** 3).astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(f(x64, 2), (x64 ** 2).astype(np.float32), rtol=1e-6)
    assert f.signatures == 2


def test_jax_arrays_are_read_without_a_copy():
    array = jnp.arange(16, dtype=jnp.float32)
    view = as_numpy(array)
    assert view.__array_interface__["data"][0] == array.unsafe_buffer_pointer()
