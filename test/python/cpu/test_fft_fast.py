"""xla-lower-fft's Cooley-Tukey path (passes/lower/fft_fast.py) against numpy.fft:
powers of two, composite and prime lengths, every FFT kind, single and double."""

import re
import subprocess
import sys

import numpy as np
import pytest

import xlac
from xlac.passes.lower.fft_plan import chirp_length, fast_plan, has_fast_path

_TYPES = {np.complex64: "complex<f32>", np.complex128: "complex<f64>",
          np.float32: "f32", np.float64: "f64"}


def _tensor(shape, dtype) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{_TYPES[dtype]}>"


def _program(kind, lengths, in_type, out_type) -> str:
    return f"""
func.func @main(%x: {in_type}) -> {out_type} {{
  %y = stablehlo.fft %x, type = {kind}, length = {list(lengths)} : ({in_type}) -> {out_type}
  return %y : {out_type}
}}"""


_CASES = [  # kind, input shape, lengths, input dtype, numpy reference
    ("FFT", (3, 16), [16], np.complex64, np.fft.fft),
    ("FFT", (2, 96), [96], np.complex128, np.fft.fft),
    ("IFFT", (2, 1000), [1000], np.complex64, np.fft.ifft),
    ("FFT", (1, 4096), [4096], np.complex128, np.fft.fft),
    ("FFT", (5, 768), [768], np.complex64, lambda x: np.fft.fft(x)),
    ("RFFT", (3, 720), [720], np.float32, np.fft.rfft),
    ("RFFT", (2, 257), [257], np.float64, np.fft.rfft),          # prime > 128: chirp-z
    ("IRFFT", (2, 405), [808], np.complex128, lambda x: np.fft.irfft(x, 808)),  # 8 * 101
    ("IRFFT", (3, 32), [63], np.complex64, lambda x: np.fft.irfft(x, 63)),
    ("FFT", (32, 48), [32, 48], np.complex128, np.fft.fft2),
    ("IFFT", (3, 64, 20), [64, 20], np.complex64, np.fft.ifft2),
    ("RFFT", (24, 40), [24, 40], np.float64, np.fft.rfft2),
    # even real lengths: half-length complex transforms (fft_real), batch dims
    ("RFFT", (2, 3, 720), [720], np.float32, np.fft.rfft),
    ("RFFT", (3, 4096), [4096], np.float64, np.fft.rfft),
    ("IRFFT", (2, 3, 33), [64], np.complex64, lambda x: np.fft.irfft(x, 64)),
    ("IRFFT", (2, 2049), [4096], np.complex128, lambda x: np.fft.irfft(x, 4096)),
    ("IRFFT", (4, 16, 9), [16, 16], np.complex64, lambda x: np.fft.irfft2(x, (16, 16))),
    pytest.param("RFFT", (2, 16, 20, 32), [16, 20, 32], np.float32,
                 lambda x: np.fft.rfftn(x, axes=(1, 2, 3)), marks=pytest.mark.heavy),
    pytest.param("FFT", (2, 16, 20, 32), [16, 20, 32], np.complex64,
                 lambda x: np.fft.fftn(x, axes=(1, 2, 3)), marks=pytest.mark.heavy),
    ("IFFT", (3, 97), [97], np.complex64, np.fft.ifft),                # prime leaf
    # twiddles folded into batched DFT matrices (radix 16) or kept (radix 15)
    ("FFT", (2, 6000), [6000], np.complex128, np.fft.fft),             # 15 * 16 * 25: radix 15 not folded
    ("IFFT", (3, 720), [720], np.complex128, np.fft.ifft),             # 16 * 45
    ("FFT", (2, 360), [360], np.complex64, np.fft.fft),                # 15 * 24
    ("RFFT", (3, 194), [194], np.float32, np.fft.rfft),                # 2 * 97
    # chirp-z (fft_chirp) for a prime factor > 128, f64 between passes
    ("FFT", (3, 257), [257], np.complex64, np.fft.fft),
    ("IFFT", (2, 514), [514], np.complex128, np.fft.ifft),
    ("RFFT", (3, 514), [514], np.float32, np.fft.rfft),                # 2 * 257: half is chirp-z
    ("IRFFT", (2, 131), [261], np.complex64, lambda x: np.fft.irfft(x, 261)),  # odd: the complex path
    ("IRFFT", (2, 264), [526], np.complex128, lambda x: np.fft.irfft(x, 526)),  # 2 * 263
]


@pytest.mark.parametrize("kind,shape,lengths,dtype,reference", _CASES)
def test_fft_matches_numpy(kind, shape, lengths, dtype, reference):
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    x = x.astype(dtype)
    want = reference(x.astype(np.complex128 if np.iscomplexobj(x) else np.float64))
    single = dtype in (np.float32, np.complex64)
    out_dtype = {True: np.complex64, False: np.complex128}[single] if want.dtype.kind == "c" \
        else {True: np.float32, False: np.float64}[single]
    text = _program(kind, lengths, _tensor(shape, dtype), _tensor(want.shape, out_dtype))
    (got,) = xlac.compile(text, cpu="x86-64-v3", cache=False).run(x)
    assert got.dtype == out_dtype
    scale = np.abs(want).max()
    # f64 arithmetic for every type: single precision rounds once per pass.
    tol = 1e-6 if single else 1e-13
    assert np.abs(got - want).max() <= tol * scale


def test_plans():
    assert fast_plan(8) is None                   # short: the direct generic
    assert fast_plan(4096) == [16, 16, 16]
    assert fast_plan(808) == [8, 101]             # a prime leaf up to 128 is one matmul
    assert fast_plan(2 * 257) is None             # a larger prime factor: no Cooley-Tukey
    assert has_fast_path(2 * 257)                 # but chirp-z
    assert chirp_length(257) >= 2 * 257 - 1 and fast_plan(chirp_length(257))


def test_plans_are_the_cheapest_in_whole_vectors():
    """A leaf whose 2N-column rows are no whole 8-lane vectors (45: 90 columns)
    is split into foldable levels: 720 was 16 * 45 (1.7 ms for 180 rows on Zen
    4), now 12 * 12 * 5 (1.2 ms); a 64-point leaf (128x128 matmul) is two
    levels (1024 was 16 * 64); ties keep the larger radix first."""
    assert fast_plan(720) == [12, 12, 5]
    assert fast_plan(1024) == [16, 8, 8]
    assert fast_plan(128) == [16, 8]
    assert fast_plan(64) == [8, 8]
    assert fast_plan(97) == [97]                  # a prime: one matmul
    assert fast_plan(6000) == [15, 16, 25]        # 16 * 375 would not fold (3 MB)


def test_4096_point_fft_is_not_quadratic(tmp_path):
    """No N x N matrix nor an O(N^2) generic: three 32x32 DFT matmuls (radix 16)
    and constants of O(N): at most one 32x32 matrix per column of a level
    (the twiddles folded in: 4 * 16 * N values)."""
    path = tmp_path / "fft.mlir"
    t = _tensor((1, 4096), np.complex64)             # one transform: the matmul levels
    path.write_text(_program("FFT", [4096], t, t))
    done = subprocess.run([sys.executable, "-m", "xlac.tools.xla_opt", str(path),
                           "--pass-pipeline=builtin.module(xla-lower-fft)"],
                          capture_output=True, text=True, check=True)
    ir = done.stdout
    assert "stablehlo.fft" not in ir and "linalg.generic" not in ir
    assert ir.count("stablehlo.dot_general") == 3
    constants = re.findall(r"stablehlo.constant dense<[^>]*> : tensor<([0-9x]+)xf64>", ir)
    largest = max(int(np.prod([int(d) for d in c.split("x")])) for c in constants)
    assert largest <= 4 * 16 * 4096


def _lowered(tmp_path, kind, shape, lengths, dtype, out_shape, out_dtype) -> str:
    path = tmp_path / "fft.mlir"
    path.write_text(_program(kind, lengths, _tensor(shape, dtype), _tensor(out_shape, out_dtype)))
    return subprocess.run([sys.executable, "-m", "xlac.tools.xla_opt", str(path),
                           "--pass-pipeline=builtin.module(xla-lower-fft)"],
                          capture_output=True, text=True, check=True).stdout


def test_even_rfft_is_a_half_length_transform(tmp_path):
    """RFFT of 4096 reals: a 2048-point complex transform (16 * 16 * 8), never
    4096 pairs."""
    ir = _lowered(tmp_path, "RFFT", (1, 4096), [4096], np.float64, (1, 2049), np.complex128)
    assert ir.count("stablehlo.dot_general") == 3
    assert "x4096x2xf64>" not in ir and "tensor<1x2048x2xf64>" in ir


def test_single_precision_keeps_f32_pairs_between_passes(tmp_path):
    """complex64: the transposes move f32 pairs; the matmuls run in f64."""
    t = (1, 4096)
    ir = _lowered(tmp_path, "FFT", t, [4096], np.complex64, t, np.complex64)
    transposes = re.findall(r"stablehlo.transpose .*", ir)
    assert transposes and all("xf64>" not in line for line in transposes)
    dots = re.findall(r"stablehlo.dot_general .*", ir)
    assert len(dots) == 3 and all("xf32>" not in line for line in dots)


@pytest.mark.parametrize("kind", ["FFT", "RFFT", "IRFFT"])
def test_single_precision_error_below_xla(kind):
    """rms error against a long-double reference below 8e-8 at 1024 points
    (XLA's pocketfft: 1.2e-7; f32 arithmetic here was 1.5e-7)."""
    scipy_fft = pytest.importorskip("scipy.fft")
    rng = np.random.default_rng(3)
    n = 1024
    if kind == "FFT":
        x = (rng.standard_normal((4, n)) + 1j * rng.standard_normal((4, n))).astype(np.complex64)
        want, out = scipy_fft.fft(x.astype(np.clongdouble)), (x.shape, np.complex64)
    elif kind == "RFFT":
        x = rng.standard_normal((4, n)).astype(np.float32)
        want, out = scipy_fft.rfft(x.astype(np.longdouble)), ((4, n // 2 + 1), np.complex64)
    else:
        x = np.fft.rfft(rng.standard_normal((4, n))).astype(np.complex64)
        want, out = scipy_fft.irfft(x.astype(np.clongdouble), n), ((4, n), np.float32)
    text = _program(kind, [n], _tensor(x.shape, x.dtype.type), _tensor(*out))
    (got,) = xlac.compile(text, cpu="x86-64-v3", cache=False).run(x)
    want = want.astype(np.complex128)
    rms = np.sqrt(np.mean(np.abs(got - want) ** 2) / np.mean(np.abs(want) ** 2))
    assert rms < 8e-8


def test_single_precision_short_leaf_in_f32(tmp_path):
    """complex64 with a last level of <= 8 points (1024 = 16 * 8 * 8): that
    level's matmul runs in f32 (its 16 x 16 matrix), the others in f64; a
    longer leaf (4096 = 16 * 16 * 16) keeps f64, and complex128 never takes it."""
    t = (1, 1024)                                   # one transform: the matmul levels
    ir = _lowered(tmp_path, "FFT", t, [1024], np.complex64, t, np.complex64)
    dots = re.findall(r"stablehlo.dot_general .*", ir)
    assert len(dots) == 3 and sum("tensor<16x16xf32>" in line for line in dots) == 1
    assert sum("xf32>" in line for line in dots) == 1
    t = (1, 4096)
    ir = _lowered(tmp_path, "FFT", t, [4096], np.complex64, t, np.complex64)
    assert all("xf32>" not in line for line in re.findall(r"stablehlo.dot_general .*", ir))
    t = (1, 1024)
    ir = _lowered(tmp_path, "FFT", t, [1024], np.complex128, t, np.complex128)
    assert all("xf32>" not in line for line in re.findall(r"stablehlo.dot_general .*", ir))


# XLA's (pocketfft's) rms error for complex64 FFTs at these lengths (jax 0.10.2,
# against numpy in f64, 131072 points): the f32 leaf stays below it; 270, 540,
# 720, 1000 and 6000 take the butterfly stages (fft_stages) at 64 transforms
_XLA_C64_RMS = {64: 8.3e-8, 96: 9.1e-8, 270: 1.14e-7, 540: 1.19e-7, 720: 1.2e-7, 768: 1.1e-7,
                1000: 1.24e-7, 1024: 1.1e-7, 6000: 1.41e-7}


@pytest.mark.parametrize("n", sorted(_XLA_C64_RMS))
def test_f32_leaf_error_below_xla(n):
    """c64 FFT with an f32 last level: rms error against f64 numpy below
    XLA's (0.57-0.81x of it measured; the all-f64 path was 0.35-0.43x)."""
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((64, n)) + 1j * rng.standard_normal((64, n))).astype(np.complex64)
    t = _tensor(x.shape, np.complex64)
    (got,) = xlac.compile(_program("FFT", [n], t, t), cpu="x86-64-v3", cache=False).run(x)
    want = np.fft.fft(x.astype(np.complex128))
    rms = np.sqrt(np.mean(np.abs(got - want) ** 2) / np.mean(np.abs(want) ** 2))
    assert rms < _XLA_C64_RMS[n]


def test_twiddles_fold_into_batched_dft_matrices(tmp_path):
    """720 = 12 * 12 * 5: the 12-point DFTs and their twiddles are one matmul
    batched over the columns per level (60, then 5 24x24 matrices); no
    pair reverse, no twiddle pass. Radices that are no multiple of 4 (225 =
    15 * 15) keep it."""
    ir = _lowered(tmp_path, "FFT", (1, 720), [720], np.complex64, (1, 720), np.complex64)
    assert "batching_dims = [0] x [0]" in ir and "tensor<60x24x24xf64>" in ir
    assert "tensor<5x24x24xf64>" in ir and "stablehlo.reverse" not in ir
    ir = _lowered(tmp_path, "FFT", (1, 225), [225], np.complex64, (1, 225), np.complex64)
    assert "batching_dims" not in ir and "stablehlo.reverse" in ir


def test_complex_ends_are_no_copies():
    """The helper's complex -> pairs and pairs -> complex ends (parts split and
    joined again) leave no slice copies at linalg."""
    text = _program("FFT", [720], _tensor((1, 720), np.complex64), _tensor((1, 720), np.complex64))
    linalg = xlac.compile(text, cpu="x86-64-v3", cache=False).as_text("linalg")
    assert "tensor.insert_slice" not in linalg and "tensor.extract_slice" not in linalg


def test_a_large_prime_factor_is_not_quadratic(tmp_path):
    """2 * 257 points: no O(N^2) generic, no 514-point matrix; chirp-z's two
    transforms at M = chirp_length(514) >= 1027 points (their matmuls), the
    chirp and filter tables of O(M)."""
    t = (1, 514)
    ir = _lowered(tmp_path, "FFT", t, [514], np.complex64, t, np.complex64)
    assert "linalg.generic" not in ir and "tensor<1028x1028xf64>" not in ir
    length = chirp_length(514)
    assert f"tensor<1x{length}x2xf64>" in ir
    assert ir.count("stablehlo.dot_general") == 2 * len(fast_plan(length))
