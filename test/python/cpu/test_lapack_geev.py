"""jnp.linalg.eig / eigvals (`custom_call @lapack_?geev_ffi`, refused before): XLA's
numbers bit for bit (the same LAPACK, the same workspace), real eigenvectors
unpacked into complex ones as jaxlib does, batched, left vectors too.

The reference interpreter cannot run a LAPACK call: the checks are XLA's
results (jax.jit) and A v = lambda v."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

jax = pytest.importorskip("jax", reason="JAX is not installed (pip install 'xlac[bench]')")
pytest.importorskip("scipy", reason="LAPACK comes from SciPy: pip install 'xlac[lapack]'")
jnp, lax = jax.numpy, jax.lax

RNG = np.random.default_rng(39)
REAL = RNG.standard_normal((2, 6, 6)).astype(np.float32)       # complex conjugate pairs among the eigenvalues
COMPLEX = (RNG.standard_normal((5, 5)) + 1j * RNG.standard_normal((5, 5))).astype(np.complex64)


def _both(fn, x, cpu):
    text = jax.jit(fn).lower(x).as_text()
    assert "geev_ffi" in text
    got = xlac.compile(text, cpu=cpu, cache=False).run(x)
    return got, [np.asarray(v) for v in jax.tree.leaves(jax.jit(fn)(x))]


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_eig_of_real_matrices_is_xlas_and_unpacks_conjugate_pairs(cpu):
    (values, vectors), want = _both(jax.vmap(jnp.linalg.eig), REAL, cpu)
    assert np.iscomplex(values).any(), "the case needs a conjugate pair"
    np.testing.assert_array_equal(values, want[0])
    np.testing.assert_array_equal(vectors, want[1])
    residual = REAL.astype(np.complex64) @ vectors - vectors * values[:, None, :]
    assert np.abs(residual).max() < 1e-4


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_eigvals_and_left_vectors(cpu):
    got, want = _both(jnp.linalg.eigvals, REAL[0], cpu)
    np.testing.assert_array_equal(got[0], want[0])
    left = lambda a: lax.linalg.eig(a, compute_left_eigenvectors=True)  # noqa: E731
    got, want = _both(left, REAL[1], cpu)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_eig_of_a_complex_matrix():
    got, want = _both(jnp.linalg.eig, COMPLEX, "x86-64-v3")
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
