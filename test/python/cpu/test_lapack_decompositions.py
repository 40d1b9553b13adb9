"""Schur, Hessenberg, tridiagonal reduction, tridiagonal solve and pivoted QR
(`custom_call @lapack_?gees_ffi`, `?gehrd`, `?sytrd`/`?hetrd`, `?gtsv`, `?geqp3`;
refused before): in f32, f64, c64 and c128, XLA's numbers bit for bit (the same
LAPACK, the same workspace: docs/lapack.md), and the factors are factors (Schur
and Hessenberg forms are not unique: A = Q T Q^H and Q unitary are what hold).

The reference interpreter cannot run a LAPACK call: the checks are XLA's
results (jax.jit) and the factorizations' own identities."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

jax = pytest.importorskip("jax", reason="JAX is not installed (pip install 'xlac[bench]')")
pytest.importorskip("scipy", reason="LAPACK comes from SciPy: pip install 'xlac[lapack]'")
jnp, lax, sp = jax.numpy, jax.lax, jax.scipy.linalg

RNG = np.random.default_rng(58)
DTYPES = ["float32", "float64", "complex64", "complex128"]
LETTER = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}
TOL = {"float32": 1e-4, "float64": 1e-12, "complex64": 1e-4, "complex128": 1e-12}


def matrix(*shape, dtype):
    a = RNG.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


def xla_and_xlac(fn, args, target, cpu="x86-64-v3"):
    """``fn``'s results under XLA (jax.jit) and under xlac, as numpy arrays."""
    with jax.enable_x64(True):
        text = jax.jit(fn).lower(*args).as_text()
        want = [np.asarray(v) for v in jax.tree.leaves(jax.jit(fn)(*args))]
    assert f"@lapack_{target}_ffi" in text
    got = [np.asarray(v) for v in xlac.compile(text, cpu=cpu, cache=False).run(*args)]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    return got


def hermitian_transpose(q):
    return np.conj(np.swapaxes(q, -1, -2))


def assert_unitary(q, tol):
    eye = np.eye(q.shape[-1])
    assert np.abs(hermitian_transpose(q) @ q - eye).max() < tol


@pytest.mark.parametrize("dtype", DTYPES)
def test_schur_is_xlas_and_a_schur_form(dtype):
    a = matrix(2, 6, 6, dtype=dtype)                    # batched; real ones have 2x2 blocks
    t, q = xla_and_xlac(jax.vmap(lax.linalg.schur), [a], f"{LETTER[dtype]}gees")
    assert np.abs(q @ t @ hermitian_transpose(q) - a).max() < TOL[dtype] * 10
    assert_unitary(q, TOL[dtype] * 10)
    below = 2 if dtype.startswith("float") else 1        # real: quasi-triangular
    assert np.abs(np.tril(t, -below)).max() == 0


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_schur_values_only_and_scipys_complex_form(dtype):
    a = matrix(5, 5, dtype=dtype)
    (t,) = xla_and_xlac(lambda m: lax.linalg.schur(m, compute_schur_vectors=False), [a],
                        f"{LETTER[dtype]}gees")
    complex_letter = {"float32": "c", "complex128": "z"}[dtype]
    t_c, q_c = xla_and_xlac(lambda m: sp.schur(m, output="complex"), [a], f"{complex_letter}gees")
    assert np.abs(np.tril(t_c, -1)).max() == 0
    nearest = np.abs(np.diag(t_c)[:, None] - np.linalg.eigvals(a)[None, :]).min(axis=1)
    assert nearest.max() < TOL[dtype] * 100           # the diagonal holds the eigenvalues


@pytest.mark.parametrize("dtype", DTYPES)
def test_hessenberg_is_xlas_and_a_hessenberg_form(dtype):
    a = matrix(6, 6, dtype=dtype)
    h, q = xla_and_xlac(lambda m: sp.hessenberg(m, calc_q=True), [a], f"{LETTER[dtype]}gehrd")
    assert np.abs(np.tril(h, -2)).max() == 0
    assert np.abs(q @ h @ hermitian_transpose(q) - a).max() < TOL[dtype] * 10
    assert_unitary(q, TOL[dtype] * 10)


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_hessenberg_of_one_by_one_and_batched(dtype):
    """n = 1: no reflectors (taus of size 0); a batch: one call per matrix."""
    xla_and_xlac(lax.linalg.hessenberg, [matrix(1, 1, dtype=dtype)], f"{LETTER[dtype]}gehrd")
    xla_and_xlac(jax.vmap(lax.linalg.hessenberg), [matrix(3, 4, 4, dtype=dtype)],
                 f"{LETTER[dtype]}gehrd")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal_is_xlas_and_keeps_the_spectrum(dtype, lower):
    a = matrix(5, 5, dtype=dtype)
    a = a + hermitian_transpose(a)
    name = ("he" if dtype.startswith("complex") else "sy") + "trd"
    _, d, e, _ = xla_and_xlac(lambda m: lax.linalg.tridiagonal(m, lower=lower), [a],
                              f"{LETTER[dtype]}{name}")
    tri = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    np.testing.assert_allclose(np.linalg.eigvalsh(tri), np.linalg.eigvalsh(a),
                               atol=TOL[dtype] * 100)


def _diagonals(m):
    """A diagonally dominant system's sub-, main and super-diagonals from m's rows."""
    return m[..., 0, :].at[..., 0].set(0), m[..., 1, :] + 8, m[..., 2, :].at[..., -1].set(0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tridiagonal_solve_is_xlas_and_solves(dtype):
    m, b = matrix(2, 5, 5, dtype=dtype), matrix(2, 5, 3, dtype=dtype)
    (x,) = xla_and_xlac(lambda m, b: lax.linalg.tridiagonal_solve(*_diagonals(m), b), [m, b],
                        f"{LETTER[dtype]}gtsv")
    with jax.enable_x64(True):
        dl, d, du = (np.asarray(v) for v in _diagonals(jnp.asarray(m)))
    full = np.stack([np.diag(d[i]) + np.diag(du[i, :-1], 1) + np.diag(dl[i, 1:], -1)
                     for i in range(2)])
    assert np.abs(full @ x - b).max() < TOL[dtype] * 10


def test_gtsv_results_keep_dl_first_and_du_last():
    """jaxlib hands LAPACK dl + 1: dl's first element and du's last are not LAPACK's
    and come back as they went in; the rest is LAPACK's elimination (SciPy's gtsv)."""
    from scipy.linalg import lapack
    n = 5
    args = [matrix(n, dtype="float64") for _ in range(3)] + [matrix(n, 2, dtype="float64")]
    args[1] += 8
    text = ("func.func @main(%dl: tensor<5xf64>, %d: tensor<5xf64>, %du: tensor<5xf64>, "
            "%b: tensor<5x2xf64>) -> (tensor<5xf64>, tensor<5xf64>, tensor<5xf64>, tensor<5x2xf64>, "
            "tensor<i32>) {\n  %0:5 = stablehlo.custom_call @lapack_dgtsv_ffi(%dl, %d, %du, %b) "
            ": (tensor<5xf64>, "
            "tensor<5xf64>, tensor<5xf64>, tensor<5x2xf64>) -> (tensor<5xf64>, tensor<5xf64>, "
            "tensor<5xf64>, tensor<5x2xf64>, tensor<i32>)\n"
            "  return %0#0, %0#1, %0#2, %0#3, %0#4 : tensor<5xf64>, tensor<5xf64>, tensor<5xf64>, "
            "tensor<5x2xf64>, tensor<i32>\n}")
    dl, d, du, x, info = xlac.compile(text, cpu="x86-64-v3", cache=False).run(*args)
    want_dl, want_d, want_du, want_x, want_info = lapack.dgtsv(args[0][1:], args[1], args[2][:-1], args[3])
    assert info == want_info == 0
    assert dl[0] == args[0][0] and du[-1] == args[2][-1]
    np.testing.assert_array_equal(dl[1:], want_dl)
    np.testing.assert_array_equal(d, want_d)
    np.testing.assert_array_equal(du[:-1], want_du)
    np.testing.assert_array_equal(x, want_x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pivoted_qr_is_xlas_and_factors(dtype):
    a = matrix(6, 4, dtype=dtype)
    q, r, p = xla_and_xlac(lambda m: sp.qr(m, pivoting=True), [a], f"{LETTER[dtype]}geqp3")
    assert sorted(p) == list(range(4))
    assert np.abs(q @ r - a[:, p]).max() < TOL[dtype] * 10
    assert np.all(np.diff(np.abs(np.diag(r))) <= TOL[dtype])   # pivoting: |r_kk| decreasing


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_sqrtm_through_complex_schur(cpu):
    """jax.scipy.linalg.sqrtm: complex gees of a real matrix, then the triangular root."""
    a = matrix(4, 4, dtype="float32")
    a = a @ a.T + 4 * np.eye(4, dtype=np.float32)
    with jax.enable_x64(True):
        text = jax.jit(sp.sqrtm).lower(a).as_text()
        want = np.asarray(jax.jit(sp.sqrtm)(a))
    assert "@lapack_cgees_ffi" in text
    (got,) = xlac.compile(text, cpu=cpu, cache=False).run(a)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    np.testing.assert_allclose(got @ got, a, rtol=0, atol=1e-4)


def test_a_nan_matrix_gives_nans_as_xla_does():
    """LAPACK's info != 0 reaches jax's check, which makes the results NaN."""
    a = matrix(4, 4, dtype="float64")
    a[1, 2] = np.nan
    xla_and_xlac(lax.linalg.schur, [a], "dgees")


def test_unsupported_options_are_diagnosed_at_the_call():
    program = """func.func @main(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0:6 = stablehlo.custom_call @lapack_sgees_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, sort = 83 : ui8}} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i32>, tensor<i32>)
  return %0#0 : tensor<4x4xf32>
}"""
    with pytest.raises(xlac.CompileError, match=r"2:\d+: error: lapack_sgees_ffi: sorting the "
                                                r"eigenvalues \(sort = 'S'\) is not supported"):
        xlac.compile(program, cpu="x86-64-v3", cache=False)


@pytest.mark.heavy                       # a link step: 3-4 s on a loaded 2-core machine
def test_linked_artifacts_call_the_same_lapack():
    """Serialized (linked against SciPy's OpenBLAS, `scipy_sgees_`): the JIT's numbers."""
    a = matrix(5, 5, dtype="float32")
    exe = xlac.compile(jax.jit(lax.linalg.schur).lower(a), cpu="x86-64-v3", cache=False)
    for got, want in zip(xlac.deserialize(exe.serialize())(a), exe(a)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("letter", "sdcz")
def test_gees_workspace_query_is_lapacks_own(letter):
    """The null-array query (cython_lapack's function, as jaxlib asks) answers what
    SciPy's gees answers with real arrays, in both modes; at n = 4000 it allocates nothing."""
    from scipy.linalg import lapack

    from xlac.passes.lower.builders.lapack_workspace import optimal_workspace
    dtype = {"s": "float32", "d": "float64", "c": "complex64", "z": "complex128"}[letter]
    for vectors in (True, False):
        zeros = np.zeros((70, 70), dtype, order="F")
        want = getattr(lapack, f"{letter}gees")(lambda *_: 0, zeros, compute_v=int(vectors),
                                                lwork=-1)[-2][0].real
        assert optimal_workspace(letter, "gees", 1, n=70, vectors=vectors) == int(want)
    assert optimal_workspace(letter, "gees", 1, n=4000, vectors=True) >= 4000
