"""The stages of FFTs with a Rader prime as calls of FFT micro-kernels built once per machine
(passes/lower/fft_kernel_text.py, fft_stage_calls.py): the calls in
the lowering, the same results bit for bit as the codelets compiled into the
program (micro-kernels off), each kernel's ABI against numpy, and artifacts
that run without the kernels' directory."""

from __future__ import annotations

import ctypes
import os
import shutil
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from test_fft_fast import _program, _tensor
from test_fft_stages import _opt

import xlac
import xlac.cache
from conftest import runnable_levels
from xlac.cpu_model import cpu_model
from xlac.passes.lower import fft_kernel_text as fft_kernels
from xlac.targets.cpu import micro_kernels


def _options(on: bool, cpu: str = "host") -> xlac.Options:
    return xlac.Options.from_env().replace(micro_kernels=on, cpu=cpu)


def test_rader_stage_lowers_to_kernel_calls(tmp_path):
    """kernels=true: the stages of a plan with a Rader prime are loops of calls (no
    generic); off: the codelets' generics."""
    path = tmp_path / "fft.mlir"
    t = _tensor((148, 444), np.complex64)
    path.write_text(_program("FFT", [444], t, t))
    on = subprocess.run([sys.executable, "-m", "xlac.tools.xla_opt", str(path),
                         "--pass-pipeline=builtin.module(xla-lower-fft{kernels=true})"],
                        capture_output=True, text=True, check=True).stdout
    assert "func.func private @xlac_ukernel_fft_f32_f64_r37_f_w(" in on
    assert "call @xlac_ukernel_fft_f32_f64_r37_f_w(" in on and "scf.forall" in on
    assert "call @xlac_ukernel_fft_f32_f32_r12_f(" in on and "linalg.generic" not in on
    off = _opt(path)
    assert "xlac_ukernel_fft" not in off and "linalg.generic" in off


# FFT (forward, twiddled), IFFT2 (backward, the scale on the first stage), RFFT (the
# first stage's reals) and an f64 IFFT of 58 x 1300 (29 x 2; 58 transforms of 29 x 2 x ...)
_CASES = [("FFT", (148, 444), [444], (148, 444), np.complex64, np.fft.fft),
          ("IFFT", (148, 444), [148, 444], (148, 444), np.complex64, np.fft.ifft2),
          ("RFFT", (256, 592), [592], (256, 297), np.float32, np.fft.rfft),
          ("IFFT", (1200, 62), [62], (1200, 62), np.complex128, np.fft.ifft)]


@pytest.mark.parametrize("kind, shape, lengths, out_shape, dtype, reference", _CASES)
@pytest.mark.parametrize("level", runnable_levels("x86-64-v3", "host"))
def test_kernel_stages_bit_identical_to_the_codelets(kind, shape, lengths, out_shape, dtype, reference,
                                                      level):
    rng = np.random.default_rng(len(shape) + shape[-1])
    x = rng.standard_normal(shape)
    x = (x + 1j * rng.standard_normal(shape)).astype(dtype) if kind != "RFFT" else x.astype(dtype)
    out_dtype = np.complex128 if dtype == np.complex128 else np.complex64
    text = _program(kind, lengths, _tensor(shape, x.dtype.type), _tensor(out_shape, out_dtype))
    with_kernels = xlac.compile(text, options=_options(True, level), cache=False)
    without = xlac.compile(text, options=_options(False, level), cache=False)
    assert "xlac_ukernel_fft_" in with_kernels.as_text("llvm")
    assert "xlac_ukernel_fft_" not in without.as_text("llvm")
    (got,), (expected,) = with_kernels.run(x), without.run(x)
    assert np.array_equal(got.view(np.uint8), expected.view(np.uint8)), (kind, shape, level)
    want = reference(x.astype(np.float64 if kind == "RFFT" else np.complex128))
    bound = 1e-13 if dtype == np.complex128 else 1e-6
    assert np.abs(got - want).max() <= bound * np.abs(want).max()


@pytest.mark.parametrize("name", ["xlac_ukernel_fft_f64_f64_r29_b_re_s", "xlac_ukernel_fft_f32_f32_r31_f_w"])
@pytest.mark.parametrize("lanes", [21, 3])
def test_kernel_abi_against_numpy(tmp_path, name, lanes):
    """One call over 21 lanes (vectors, the rest an overlapping one) or 3 (scalars):
    strides, reals, scale, twiddles."""
    features = cpu_model("host").features
    library = ctypes.CDLL(str(micro_kernels.shared_library(name, features, tmp_path)))
    r, real = (29, np.float64) if "r29" in name else (31, np.float32)
    rng = np.random.default_rng(r)
    x = rng.standard_normal((r, 2, lanes + 3)).astype(real)         # rows padded: strides not lanes
    y = np.zeros((r, 2, lanes + 5), real)
    w = rng.standard_normal((r - 1, 2)).astype(real)
    scale = 1.0 / 7
    bits = struct.unpack("<q", struct.pack("<d", scale))[0]
    args = [x.ctypes.data, 2 * (lanes + 3), lanes + 3, y.ctypes.data, 2 * (lanes + 5), lanes + 5,
            w.ctypes.data, lanes, bits]
    getattr(library, name)(*[ctypes.c_int64(a) for a in args])
    points = x[:, 0, :lanes].astype(np.float64) + (0 if "_re" in name else 1j * x[:, 1, :lanes])
    if "_b" in name:
        want = np.fft.ifft(points, axis=0) * r
    else:
        want = np.fft.fft(points, axis=0)
    if "_w" in name:
        want[1:] *= (w[:, 0] + 1j * w[:, 1])[:, None]
    if "_s" in name:
        want = want * scale
    got = y[:, 0, :lanes] + 1j * y[:, 1, :lanes]
    tolerance = 1e-12 if real == np.float64 else 2e-5
    assert np.abs(got - want).max() <= tolerance * np.abs(want).max()
    assert not y[:, :, lanes:].any()                                # nothing written past the lanes


def test_kernel_names():
    name = fft_kernels.symbol("f32", "f64", 37, 1, True, False, True)
    assert name == "xlac_ukernel_fft_f32_f64_r37_b_w_s"
    assert fft_kernels.is_kernel(name) and micro_kernels.is_kernel(name)
    assert not fft_kernels.is_kernel("xlac_ukernel_fft_f32_f64_r37_x") and not micro_kernels.is_kernel("fft_r37")


_LOAD_IN_FRESH_PROCESS = textwrap.dedent("""
    import sys, numpy as np, xlac
    exe = xlac.deserialize(open(sys.argv[1], "rb").read())
    x = np.load(sys.argv[2])
    (got,) = exe.run(x)
    want = np.fft.fft(x.astype(np.complex128))
    assert np.abs(got - want).max() <= 1e-6 * np.abs(want).max()
""")


def test_artifact_with_fft_kernels_runs_without_the_kernel_directory(tmp_path):
    cache = tmp_path / "cache"
    t = _tensor((148, 444), np.complex64)
    exe = xlac.compile(_program("FFT", [444], t, t), options=_options(True).replace(cache_dir=cache))
    assert "xlac_ukernel_fft_f32_f64_r37_f_w" in exe.as_text("llvm")
    assert any(p.name.startswith("xlac_ukernel_fft_") for p in (cache / "micro-kernels").iterdir())
    artifact = tmp_path / "fft.xlac"
    artifact.write_bytes(exe.serialize())
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((148, 444)) + 1j * rng.standard_normal((148, 444))).astype(np.complex64)
    np.save(tmp_path / "x.npy", x)
    xlac.cache.flush()
    shutil.rmtree(cache)                               # no cache, no kernels left
    env = dict(os.environ, XLAC_CACHE_DIR=str(tmp_path / "empty"))
    done = subprocess.run([sys.executable, "-c", _LOAD_IN_FRESH_PROCESS, str(artifact), str(tmp_path / "x.npy")],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "empty" / "micro-kernels").exists()
