"""triangular_solve, cholesky, fft and select_and_scatter through xlac.compile,
checked against numpy."""

import itertools

import numpy as np
import pytest

import xlac

_MLIR_TYPES = {np.float32: "f32", np.float64: "f64", np.complex64: "complex<f32>",
               np.complex128: "complex<f64>"}


def _tensor(shape, dtype) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{_MLIR_TYPES[dtype]}>"


def _random(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _solve_program(a, b, left, lower, unit, transpose) -> str:
    ta, tb = _tensor(a.shape, a.dtype.type), _tensor(b.shape, b.dtype.type)
    return f"""
func.func @main(%a: {ta}, %b: {tb}) -> {tb} {{
  %x = "stablehlo.triangular_solve"(%a, %b) {{left_side = {str(left).lower()},
      lower = {str(lower).lower()}, unit_diagonal = {str(unit).lower()},
      transpose_a = #stablehlo<transpose {transpose}>}} : ({ta}, {tb}) -> {tb}
  return %x : {tb}
}}"""


def _expected_solve(a, b, left, lower, unit, transpose):
    tri = np.tril(a) if lower else np.triu(a)
    if unit:
        tri = tri - np.diag(np.diag(tri)) + np.eye(a.shape[-1], dtype=a.dtype)
    op_a = {"NO_TRANSPOSE": tri, "TRANSPOSE": tri.T, "ADJOINT": tri.conj().T}[transpose]
    return np.linalg.solve(op_a, b) if left else np.linalg.solve(op_a.T, b.T).T


@pytest.mark.parametrize("left,lower,unit,transpose", list(itertools.product(
    [True, False], [True, False], [True, False], ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"])))
def test_triangular_solve_variants(left, lower, unit, transpose):
    rng = np.random.default_rng(7)
    a = _random(rng, (4, 4), np.complex64) + 4 * np.eye(4, dtype=np.complex64)
    b = _random(rng, (4, 3) if left else (3, 4), np.complex64)
    want = _expected_solve(a, b, left, lower, unit, transpose)
    (got,) = xlac.compile(_solve_program(a, b, left, lower, unit, transpose)).run(a, b)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_triangular_solve_batched_float64():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 5, 5)) + 5 * np.eye(5)
    b = rng.standard_normal((2, 3, 5, 2))
    want = np.stack([[_expected_solve(a[i, j], b[i, j], True, True, False, "NO_TRANSPOSE")
                      for j in range(3)] for i in range(2)])
    (got,) = xlac.compile(_solve_program(a, b, True, True, False, "NO_TRANSPOSE")).run(a, b)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_cholesky(lower, dtype):
    rng = np.random.default_rng(3)
    m = _random(rng, (2, 5, 5), dtype)
    a = (m @ np.conj(np.swapaxes(m, -1, -2)) + 5 * np.eye(5)).astype(dtype)
    t = _tensor(a.shape, dtype)
    text = f"""
func.func @main(%a: {t}) -> {t} {{
  %l = "stablehlo.cholesky"(%a) {{lower = {str(lower).lower()}}} : ({t}) -> {t}
  return %l : {t}
}}"""
    # Only the triangle named by `lower` may be read: garbage in the other.
    garbage = np.triu(np.full_like(a, 99), 1) if lower else np.tril(np.full_like(a, 99), -1)
    (got,) = xlac.compile(text).run(np.where(garbage != 0, garbage, a))
    want = np.linalg.cholesky(a)
    if not lower:
        want = np.conj(np.swapaxes(want, -1, -2))
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_select_and_scatter_is_max_pool_gradient():
    rng = np.random.default_rng(5)
    x = rng.permutation(36).reshape(6, 6).astype(np.float32)   # no ties
    g = rng.standard_normal((3, 3)).astype(np.float32)
    text = """
func.func @main(%x: tensor<6x6xf32>, %g: tensor<3x3xf32>) -> tensor<6x6xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %r = "stablehlo.select_and_scatter"(%x, %g, %zero) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %ge = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %ge : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %sum = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}
    : (tensor<6x6xf32>, tensor<3x3xf32>, tensor<f32>) -> tensor<6x6xf32>
  return %r : tensor<6x6xf32>
}"""
    (got,) = xlac.compile(text).run(x, g)
    windows = x.reshape(3, 2, 3, 2).transpose(0, 2, 1, 3).reshape(3, 3, 4)
    mask = (windows == windows.max(-1, keepdims=True)).reshape(3, 3, 2, 2)
    want = (mask * g[:, :, None, None]).transpose(0, 2, 1, 3).reshape(6, 6)
    np.testing.assert_array_equal(got, want)


def _fft_program(kind, lengths, in_type, out_type) -> str:
    return f"""
func.func @main(%x: {in_type}) -> {out_type} {{
  %y = stablehlo.fft %x, type = {kind}, length = {list(lengths)} : ({in_type}) -> {out_type}
  return %y : {out_type}
}}"""


_FFT_CASES = [  # kind, input shape, lengths, input dtype, numpy reference
    ("FFT", (3, 5), [5], np.complex64, lambda x: np.fft.fft(x)),
    ("IFFT", (2, 4, 6), [4, 6], np.complex128, lambda x: np.fft.ifft2(x)),
    ("FFT", (2, 3, 4), [2, 3, 4], np.complex128, lambda x: np.fft.fftn(x)),
    ("RFFT", (3, 8), [8], np.float32, lambda x: np.fft.rfft(x)),
    ("RFFT", (4, 7), [4, 7], np.float64, lambda x: np.fft.rfft2(x)),
    ("IRFFT", (3, 5), [8], np.complex128, lambda x: np.fft.irfft(x, 8)),
    ("IRFFT", (2, 4, 4), [4, 7], np.complex64, lambda x: np.fft.irfft2(x, (4, 7))),
]


@pytest.mark.parametrize("kind,shape,lengths,dtype,reference", _FFT_CASES)
def test_fft(kind, shape, lengths, dtype, reference):
    x = _random(np.random.default_rng(11), shape, dtype)
    want = reference(x.astype(np.complex128 if np.iscomplexobj(x) else np.float64))
    single = dtype in (np.float32, np.complex64)
    out_dtype = (np.complex64 if single else np.complex128) if kind in ("FFT", "IFFT", "RFFT") \
        else (np.float32 if single else np.float64)
    text = _fft_program(kind, lengths, _tensor(shape, dtype), _tensor(want.shape, out_dtype))
    (got,) = xlac.compile(text).run(x)
    assert got.dtype == out_dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if single else 1e-12,
                               atol=1e-5 if single else 1e-12)
