"""xla-lower-fft on reals converted to complex (jax's ``fft`` of a real array)
and the gathered planes' stages after the first in the stored type
(passes/lower/lower_fft.py `of_reals`, fft_stages `planar(reals=)`, `_gathered`)."""

import re
import subprocess
import sys

import numpy as np
import pytest
from test_fft_fast import _tensor

import xlac
from conftest import runnable_levels

_TYPES = {np.float32: ("f32", "complex<f32>", np.complex64),
          np.float64: ("f64", "complex<f64>", np.complex128)}


def _of_reals(kind: str, shape, lengths, dtype) -> str:
    """``kind`` of ``convert(x)``, x real: as jax writes jnp.fft.fft(x)."""
    real, cplx, _ = _TYPES[dtype]
    dims = "x".join(map(str, shape))
    return f"""
func.func @main(%x: tensor<{dims}x{real}>) -> tensor<{dims}x{cplx}> {{
  %c = stablehlo.convert %x : (tensor<{dims}x{real}>) -> tensor<{dims}x{cplx}>
  %y = stablehlo.fft %c, type = {kind}, length = {list(lengths)} : (tensor<{dims}x{cplx}>) -> tensor<{dims}x{cplx}>
  return %y : tensor<{dims}x{cplx}>
}}"""


def _lowered(tmp_path, program: str) -> str:
    path = tmp_path / "fft.mlir"
    path.write_text(program)
    return subprocess.run([sys.executable, "-m", "xlac.tools.xla_opt", str(path),
                           "--pass-pipeline=builtin.module(xla-lower-fft)"],
                          capture_output=True, text=True, check=True).stdout


_REALS = [  # kind, shape, lengths, real dtype, the stage path
    ("FFT", (180, 720), [720], np.float64, "gathered"),     # 180 no whole 8-block
    ("IFFT", (16, 720), [720], np.float64, "blocked"),
    ("FFT", (32, 256), [256], np.float32, "blocked"),
    ("FFT", (21, 700), [700], np.float32, "gathered"),
    ("FFT", (6, 16, 96), [16, 96], np.float32, "fft2"),     # the reals on axis 1 (the first)
    ("FFT", (3, 40), [40], np.float64, "matmuls"),          # too few transforms
    ("FFT", (9, 257), [257], np.float32, "chirp-z"),
    ("IFFT", (10, 7), [7], np.float64, "direct"),           # no fast path: complex first
]


@pytest.mark.parametrize("kind,shape,lengths,dtype,path", _REALS)
def test_transforms_of_reals(tmp_path, kind, shape, lengths, dtype, path):
    """The convert to complex is taken into the lowering: the transform's
    pairs (or its first stage's real plane, zero imaginary parts not read)
    come from the reals, so no complex tensor is made before it (where the
    length has a fast path), no complex kernel is left unscheduled, and the
    result matches numpy's in f64 at every runnable level."""
    program = _of_reals(kind, shape, lengths, dtype)
    ir = _lowered(tmp_path, program)
    complex_type = re.escape(_TYPES[dtype][1])
    to_complex = re.findall(rf"stablehlo.(?:convert|real|imag)[^\n]*-> tensor<[^\n]*{complex_type}", ir)
    assert bool(to_complex) == (path == "direct")
    if path in ("gathered", "blocked", "fft2"):     # fft2: its second axis's complex input
        assert ("stablehlo.real" in ir) == (path == "fft2")
    rng = np.random.default_rng(11)
    x = rng.standard_normal(shape).astype(dtype)
    axes = tuple(range(len(shape) - len(lengths), len(shape)))
    want = (np.fft.fftn if kind == "FFT" else np.fft.ifftn)(x.astype(np.float64), axes=axes)
    bound = 1e-6 if dtype == np.float32 else 1e-14
    for got in _run_at_levels(program, x, path in ("gathered", "blocked")):
        assert got.dtype == _TYPES[dtype][2]
        assert np.abs(got - want).max() <= bound * np.abs(want).max(), path


def _run_at_levels(program: str, x, scheduled: bool = False):
    """The program's result at each runnable level (compiled for x86-64-v3 and
    the host; with ``scheduled``, no kernel of either without a vector schedule)."""
    for level in ("x86-64-v3", "host"):
        exe = xlac.compile(program, cpu=level, cache=False)
        assert not scheduled or "no vector schedule" not in (exe.fusion_report() or ""), level
        if level in runnable_levels(level):
            yield exe.run(x)[0]


def test_convert_with_other_users_stays(tmp_path):
    """A convert that something else reads too stays (the FFT then reads it)."""
    program = """
func.func @main(%x: tensor<16x720xf64>) -> (tensor<16x720xcomplex<f64>>, tensor<16x720xcomplex<f64>>) {
  %c = stablehlo.convert %x : (tensor<16x720xf64>) -> tensor<16x720xcomplex<f64>>
  %y = stablehlo.fft %c, type = FFT, length = [720] : (tensor<16x720xcomplex<f64>>) -> tensor<16x720xcomplex<f64>>
  return %y, %c : tensor<16x720xcomplex<f64>>, tensor<16x720xcomplex<f64>>
}"""
    assert "stablehlo.convert %arg0" in _lowered(tmp_path, program).split("func.func @main")[1]
    x = np.random.default_rng(3).standard_normal((16, 720))
    y, c = xlac.compile(program, cache=False).run(x)
    assert np.array_equal(c, x.astype(np.complex128))
    assert np.abs(y - np.fft.fft(x)).max() <= 1e-14 * np.abs(y).max()


@pytest.mark.parametrize("shape,wide,bounds", [((21, 7000), [True, True, False, False], (1.5e-7, 1.25e-7)),
                                                ((228, 570), [True, True, False], (1.3e-7, 1e-7))])
def test_gathered_last_stages_in_f32(tmp_path, shape, wide, bounds):
    """On the gathered planes (21 or 228 transforms: no whole 16-blocks) the
    stages compute in f64 but the last, in f32 (the last two of four or
    more); the error against numpy in f64 stays below XLA's on this input
    (1.74e-7 of the largest output and 1.44e-7 rms relative on 21 x 7000,
    1.39e-7 and 1.19e-7 on 228 x 570) at every runnable level."""
    n = shape[-1]
    t = _tensor(shape, np.complex64)
    program = f"""
func.func @main(%x: {t}) -> {t} {{
  %y = stablehlo.fft %x, type = FFT, length = [{n}] : ({t}) -> {t}
  return %y : {t}
}}"""
    bodies = _lowered(tmp_path, program).split("= linalg.generic")[1:]
    assert ["arith.extf" in body.split("linalg.yield")[0] for body in bodies] == wide
    rng = np.random.default_rng(13)
    x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    want = np.fft.fft(x.astype(np.complex128))
    scale, rms = np.abs(want).max(), np.sqrt((np.abs(want) ** 2).mean())
    for got in _run_at_levels(program, x):
        err = np.abs(got - want)
        assert err.max() <= bounds[0] * scale
        assert np.sqrt((err ** 2).mean()) <= bounds[1] * rms
