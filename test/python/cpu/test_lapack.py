"""JAX's everyday linear algebra (issue 14, stumble 3): jnp.linalg's LAPACK
custom calls run, and give XLA's numbers (the same LAPACK, called the same
way: docs/lapack.md), in f32, f64, complex, batched, JIT and linked."""

from __future__ import annotations

import numpy as np
import pytest

import xlac

jax = pytest.importorskip("jax", reason="JAX is not installed (pip install 'xlac[bench]')")
pytest.importorskip("scipy", reason="LAPACK comes from SciPy: pip install 'xlac[lapack]'")
jnp = jax.numpy
lax = jax.lax

RNG = np.random.default_rng(0)


def matrix(*shape, complex_=False, dtype=np.float32):
    a = RNG.standard_normal(shape)
    if complex_:
        a = a + 1j * RNG.standard_normal(shape)
        return a.astype(np.complex64 if dtype == np.float32 else np.complex128)
    return a.astype(dtype)


def spd(n, batch=(), complex_=False, dtype=np.float32):
    a = matrix(*batch, n, n, complex_=complex_, dtype=dtype)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n, dtype=a.dtype)


CASES = {
    "eigh": (jnp.linalg.eigh, lambda dt: (matrix(5, 5, dtype=dt),)),
    "eigh_batched_upper": (lambda a: jnp.linalg.eigh(a, UPLO="U"),
                           lambda dt: (matrix(2, 3, 4, 4, dtype=dt),)),
    "eigh_complex": (jnp.linalg.eigh, lambda dt: (matrix(4, 4, complex_=True, dtype=dt),)),
    "svd": (jnp.linalg.svd, lambda dt: (matrix(5, 3, dtype=dt),)),
    "svd_reduced_wide": (lambda a: jnp.linalg.svd(a, full_matrices=False),
                         lambda dt: (matrix(3, 6, dtype=dt),)),
    "svd_values_batched": (lambda a: jnp.linalg.svd(a, compute_uv=False),
                           lambda dt: (matrix(2, 5, 4, dtype=dt),)),
    "svd_qr_algorithm": (lambda a: lax.linalg.svd(a, full_matrices=False,
                                                  algorithm=lax.linalg.SvdAlgorithm.QR),
                         lambda dt: (matrix(6, 4, dtype=dt),)),
    "svd_complex": (jnp.linalg.svd, lambda dt: (matrix(4, 3, complex_=True, dtype=dt),)),
    "qr": (jnp.linalg.qr, lambda dt: (matrix(6, 4, dtype=dt),)),
    "qr_complete_batched": (lambda a: jnp.linalg.qr(a, mode="complete"),
                            lambda dt: (matrix(2, 5, 3, dtype=dt),)),
    "qr_complex": (jnp.linalg.qr, lambda dt: (matrix(5, 3, complex_=True, dtype=dt),)),
    "cholesky": (jnp.linalg.cholesky, lambda dt: (spd(5, dtype=dt),)),
    "cholesky_batched_complex": (jnp.linalg.cholesky,
                                 lambda dt: (spd(4, (3,), complex_=True, dtype=dt),)),
    "solve": (jnp.linalg.solve, lambda dt: (matrix(5, 5, dtype=dt), matrix(5, 3, dtype=dt))),
    "solve_batched": (jnp.linalg.solve, lambda dt: (matrix(2, 4, 4, dtype=dt),
                                                    matrix(2, 4, 2, dtype=dt))),
    "inv_det": (lambda a: (jnp.linalg.inv(a), jnp.linalg.det(a)),
                lambda dt: (matrix(5, 5, dtype=dt),)),
    "lu": (jax.scipy.linalg.lu, lambda dt: (matrix(5, 4, dtype=dt),)),
    "solve_triangular": (lambda a, b: jax.scipy.linalg.solve_triangular(a, b, trans=1,
                                                                        unit_diagonal=True),
                         lambda dt: (matrix(4, 4, dtype=dt), matrix(4, 3, dtype=dt))),
    "cho_solve": (lambda a, b: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(a), b),
                  lambda dt: (spd(4, dtype=dt), matrix(4, 2, dtype=dt))),
    "pinv_lstsq": (lambda a, b: (jnp.linalg.pinv(a), jnp.linalg.lstsq(a, b)[0]),
                   lambda dt: (matrix(6, 3, dtype=dt), matrix(6, dtype=dt))),
    "empty": (jnp.linalg.eigh, lambda dt: (matrix(0, 0, dtype=dt),)),
}


def assert_matches_xla(function, args, tol):
    exe = xlac.compile(jax.jit(function).lower(*args))
    got = jax.tree_util.tree_leaves(exe(*args))
    want = jax.tree_util.tree_leaves(jax.jit(function)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        scale = max(1.0, float(np.max(np.abs(w), initial=0)))
        np.testing.assert_allclose(g, w, rtol=0, atol=tol * scale)


@pytest.mark.parametrize("name", CASES)
def test_jnp_linalg_matches_xla_f32(name):
    function, make = CASES[name]
    # the same LAPACK on the same data: equal up to the few ULPs of the ops around it
    assert_matches_xla(function, make(np.float32), tol=1e-6)


@pytest.fixture
def x64():
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", previous)


@pytest.mark.parametrize("name", ["eigh", "svd", "qr", "solve", "cholesky_batched_complex",
                                  "eigh_complex", "svd_complex"])
def test_jnp_linalg_matches_xla_f64(x64, name):
    function, make = CASES[name]
    assert_matches_xla(function, make(np.float64), tol=1e-14)


def test_a_model_with_linear_algebra_matches_xla():
    """eigh, svd, qr and solve in one program, as a user writes it."""
    def model(a, b):
        sym = a @ a.T
        w, v = jnp.linalg.eigh(sym)
        s = jnp.linalg.svd(a, compute_uv=False)
        q, r = jnp.linalg.qr(a)
        x = jnp.linalg.solve(sym + 4 * jnp.eye(4), b)
        return {"spectrum": w.sum() + s.sum(), "basis": v @ q, "r": r, "x": x}
    assert_matches_xla(model, (matrix(4, 4), matrix(4, 2)), tol=1e-5)


def test_linked_artifacts_call_the_same_lapack(tmp_path):
    a = spd(6)
    exe = xlac.compile(jax.jit(jnp.linalg.eigh).lower(a))
    want = exe(a)
    for g, w in zip(xlac.deserialize(exe.serialize())(a), want):
        np.testing.assert_array_equal(g, w)
    source = tmp_path / "eigh.mlir"
    source.write_text(jax.jit(jnp.linalg.eigh).lower(a).as_text())
    from xlac.tools.xla_compile import main
    assert main([str(source), "-o", str(tmp_path / "libeigh.so")]) == 0
    for g, w in zip(xlac.load(tmp_path / "libeigh.so").run(a), want):
        np.testing.assert_array_equal(g, w)


def test_a_program_in_pieces_links_lapack(monkeypatch):
    """Compiled in pieces (made big enough here), LAPACK's calls are found in
    the pieces' own lists of what they call (no nm) and linked to SciPy's."""
    from xlac.targets.cpu import pieces
    monkeypatch.setattr(pieces, "PIECES_MIN_BYTES", 0)
    made = []
    original = pieces.PiecesFunction.__init__
    monkeypatch.setattr(pieces.PiecesFunction, "__init__",
                        lambda self, *a, **k: made.append(1) or original(self, *a, **k))
    a = spd(6)
    exe = xlac.compile(jax.jit(lambda a: jnp.linalg.eigh(a @ a.T + a)).lower(a), cache=False)
    assert made, "the program was not compiled in pieces"
    for got, want in zip(exe(a), jax.jit(lambda a: jnp.linalg.eigh(a @ a.T + a))(a)):
        np.testing.assert_allclose(np.abs(got), np.abs(want), rtol=1e-4, atol=1e-4)


def test_a_python_callback_is_refused_by_name():
    program = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%a) {mhlo.backend_config = {index = 0 : ui64}} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
    with pytest.raises(xlac.UnsupportedOpError, match="@xla_ffi_python_cpu_callback is a "
                       "jax.pure_callback") as failure:
        xlac.compile(program)
    assert "pass it in as an argument" in str(failure.value)


def test_without_scipy_the_error_says_what_to_install(monkeypatch):
    from xlac.targets.cpu import libraries
    monkeypatch.setattr(libraries, "lapack_library", lambda: None)
    with pytest.raises(xlac.CompileError, match=r"calls LAPACK \(ssyevd_\)") as failure:
        libraries.lapack_addresses(["ssyevd_", "malloc", "expf"])
    assert "pip install 'xlac[lapack]'" in str(failure.value)
    assert libraries.lapack_addresses(["malloc", "tanhf"]) == {}     # no LAPACK: nothing needed
