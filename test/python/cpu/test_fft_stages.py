"""xla-lower-fft's radix butterfly stages (passes/lower/fft_stages.py,
fft_codelet.py): codelets, plans, numerics against numpy with 8 or more
transforms, and one vector kernel per stage written in place."""

import re
import subprocess
import sys

import numpy as np
import pytest
from test_fft_fast import _program, _tensor
from test_fft_fast import test_fft_matches_numpy as _matches_numpy

import xlac
from xlac.passes.lower.fft_codelet import Codelet, twiddle_table
from xlac.passes.lower.fft_stages import stage_plan


def _evaluate(lines: list[str], env: dict[str, float]) -> dict[str, float]:
    ops = {"addf": lambda a, b: a + b, "subf": lambda a, b: a - b,
           "mulf": lambda a, b: a * b, "negf": lambda a: -a}
    for line in lines:
        out, name, args = re.match(r"(%\w+) = arith\.(\w+) (.*) : f64", line).groups()
        env[out] = float(args) if name == "constant" else \
            ops[name](*[env[a.strip()] for a in args.split(",")])
    return env


@pytest.mark.parametrize("r", [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 19, 37])
@pytest.mark.parametrize("sign", [-1, 1])
def test_codelets_are_dfts(r, sign):
    """Each codelet's straight-line ops compute the r-point DFT (as numpy), in
    far fewer flops than r*r complex products from 8 points on."""
    rng = np.random.default_rng(r)
    x = rng.standard_normal(r) + 1j * rng.standard_normal(r)
    body = Codelet(twiddle_table)
    ys = body.dft([(f"%r{n}", f"%i{n}") for n in range(r)], sign)
    env = _evaluate(body.lines, {**{f"%r{n}": x[n].real for n in range(r)},
                                 **{f"%i{n}": x[n].imag for n in range(r)}})
    got = np.array([env[a] + 1j * env[b] for a, b in ys])
    want = np.fft.fft(x) if sign < 0 else np.fft.ifft(x) * r
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-14 * r)
    flops = sum(" arith.constant " not in line and "negf" not in line for line in body.lines)
    if r in (8, 12, 16):
        assert flops / r <= 12            # 16: 168 flops, not 16 * 16 * 8 / 16 = 128 per point


def test_stage_plans():
    """Few stages of radices <= 16 or primes <= 23; None where a prime factor is larger."""
    assert stage_plan(720) == [12, 12, 5]
    assert stage_plan(1000) == [10, 10, 10]
    assert stage_plan(6000) == [16, 15, 5, 5]
    assert stage_plan(270) == [9, 6, 5]
    assert stage_plan(570) == [19, 6, 5] and stage_plan(38) == [19, 2]    # primes up to 23
    assert stage_plan(296) is None and stage_plan(97) is None and stage_plan(194) is None


_CASES = [  # kind, input shape, lengths, input dtype, numpy reference
    ("FFT", (16, 720), [720], np.complex64, np.fft.fft),
    ("IFFT", (12, 1000), [1000], np.complex128, np.fft.ifft),
    ("FFT", (9, 45), [45], np.complex64, np.fft.fft),                     # odd: 9 * 5
    ("FFT", (8, 6000), [6000], np.complex64, np.fft.fft),                 # four stages
    ("RFFT", (10, 1440), [1440], np.float32, np.fft.rfft),                # half 720
    ("RFFT", (11, 1140), [1140], np.float64, np.fft.rfft),                # half 570 = 19 * 6 * 5
    ("IFFT", (8, 38), [38], np.complex64, np.fft.ifft),                   # 19 * 2: a prime radix
    ("FFT", (8, 296), [296], np.complex64, np.fft.fft),                   # 37 * 8: the matmul path
    ("IRFFT", (9, 271), [540], np.complex64, lambda x: np.fft.irfft(x, 540)),
    ("IRFFT", (8, 361), [720], np.complex128, lambda x: np.fft.irfft(x, 720)),
    ("FFT", (24, 40), [24, 40], np.complex64, np.fft.fft2),               # axis -2 too
    ("IFFT", (12, 10, 18), [12, 10, 18], np.complex128,
     lambda x: np.fft.ifftn(x, axes=(0, 1, 2))),
    ("RFFT", (2, 24, 40), [24, 40], np.float32, lambda x: np.fft.rfft2(x)),
    ("FFT", (8, 257), [257], np.complex64, np.fft.fft),                   # chirp-z at M = 528
    ("IFFT", (9, 257), [257], np.complex128, np.fft.ifft),
    ("FFT", (8, 97), [97], np.complex64, np.fft.fft),                     # prime: the matmul path
    ("FFT", (16, 1024), [1024], np.complex64, np.fft.fft),                # 2^10: the matmul path
]


@pytest.mark.parametrize("kind,shape,lengths,dtype,reference", _CASES)
def test_fft_matches_numpy(kind, shape, lengths, dtype, reference):
    """As test_fft_fast's cases (max error 1e-6 / 1e-13 of the largest output)."""
    _matches_numpy(kind, shape, lengths, dtype, reference)


def _lowered(tmp_path, shape, n) -> str:
    path = tmp_path / "fft.mlir"
    t = _tensor(shape, np.complex64)
    path.write_text(_program("FFT", [n], t, t))
    return subprocess.run([sys.executable, "-m", "xlac.tools.xla_opt", str(path),
                           "--pass-pipeline=builtin.module(xla-lower-fft)"],
                          capture_output=True, text=True, check=True).stdout


def test_one_generic_per_stage(tmp_path):
    """720 = 12 * 12 * 5 over 16 transforms: three multi-result generics (24,
    24 and 10 results: r complex outputs as planes), no matmul; 1024 points
    or 1024 transforms (powers of two past 128 and 256) and 4 transforms
    keep the matmul levels; 384 = 128 * 3 takes the stages."""
    ir = _lowered(tmp_path, (16, 720), 720)
    stages = re.findall(r"= linalg.generic", ir)
    assert len(stages) == 3 and "dot_general" not in ir
    assert [int(n) for n in re.findall(r"%\w+:(\d+) = linalg.generic", ir)] == [24, 24, 10]
    assert "dot_general" in _lowered(tmp_path, (16, 1024), 1024)
    assert "dot_general" in _lowered(tmp_path, (1024, 96), 96)
    assert "dot_general" not in _lowered(tmp_path, (24, 384), 384)
    assert "linalg.generic" not in _lowered(tmp_path, (4, 720), 720)


def test_stages_are_vector_kernels_written_in_place():
    """Each stage is scheduled (no scalar kernel in the fusion report) and
    writes its destination's slices itself: no copy at the bufferized stage
    (xla-results-in-slices, xla-forward-slice-copies)."""
    t = _tensor((16, 720), np.complex64)
    exe = xlac.compile(_program("FFT", [720], t, t), cpu="x86-64-v3", cache=False)
    assert "no vector schedule" not in (exe.fusion_report() or "")
    bufferized = exe.as_text("bufferized")
    assert "memref.copy" not in bufferized
    assert "vector.transfer_write" in bufferized
