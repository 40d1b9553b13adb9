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
from conftest import runnable_levels
from xlac.passes.lower.fft_codelet import Codelet, twiddle_table
from xlac.passes.lower.fft_stages import padded_batch, stage_plan


def _evaluate(lines: list[str], env: dict[str, float]) -> dict[str, float]:
    ops = {"addf": lambda a, b: a + b, "subf": lambda a, b: a - b,
           "mulf": lambda a, b: a * b, "negf": lambda a: -a}
    for line in lines:
        out, name, args = re.match(r"(%\w+) = arith\.(\w+) (.*) : f64", line).groups()
        env[out] = float(args) if name == "constant" else \
            ops[name](*[env[a.strip()] for a in args.split(",")])
    return env


@pytest.mark.parametrize("r", [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 19, 29, 31, 37, 41])
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
    if r in (29, 31, 37, 41):             # Rader: two (r-1)-point codelets, not (r-1)^2 products
        assert flops / r <= 56            # 37: 50 a point (the pair sums' 74)


def test_stage_plans():
    """Few stages of radices <= 16 or primes <= 37 (Rader's above 23); None where a prime
    factor is larger."""
    assert stage_plan(720) == [12, 12, 5]
    assert stage_plan(1000) == [10, 10, 10]
    assert stage_plan(6000) == [16, 15, 5, 5]
    assert stage_plan(270) == [9, 6, 5]
    assert stage_plan(570) == [19, 6, 5] and stage_plan(38) == [19, 2]    # primes up to 23
    assert stage_plan(296) == [37, 8] and stage_plan(444) == [37, 12]    # Rader's 37
    assert stage_plan(296, 1 << 16) == [37, 8] and stage_plan(296, 8 * 296) is None
    assert stage_plan(97) is None and stage_plan(194) is None and stage_plan(41 * 8) is None


_CASES = [  # kind, input shape, lengths, input dtype, numpy reference
    ("FFT", (16, 720), [720], np.complex64, np.fft.fft),
    ("IFFT", (12, 1000), [1000], np.complex128, np.fft.ifft),
    ("FFT", (9, 45), [45], np.complex64, np.fft.fft),                     # odd: 9 * 5
    ("FFT", (8, 6000), [6000], np.complex64, np.fft.fft),                 # four stages
    ("RFFT", (10, 1440), [1440], np.float32, np.fft.rfft),                # half 720
    ("RFFT", (11, 1140), [1140], np.float64, np.fft.rfft),                # half 570 = 19 * 6 * 5
    ("IFFT", (8, 38), [38], np.complex64, np.fft.ifft),                   # 19 * 2: a prime radix
    ("FFT", (8, 296), [296], np.complex64, np.fft.fft),                   # 37 * 8: few points,
    ("IFFT", (8, 444), [444], np.complex128, np.fft.ifft),                # the matmul path
    ("FFT", (1060, 62), [62], np.complex64, np.fft.fft),                  # 31 * 2, gathered
    ("RFFT", (2300, 58), [58], np.float32, np.fft.rfft),                  # half 29
    ("IRFFT", (9, 271), [540], np.complex64, lambda x: np.fft.irfft(x, 540)),
    ("IRFFT", (8, 361), [720], np.complex128, lambda x: np.fft.irfft(x, 720)),
    ("FFT", (24, 40), [24, 40], np.complex64, np.fft.fft2),               # axis -2 too
    ("IFFT", (12, 10, 18), [12, 10, 18], np.complex128,
     lambda x: np.fft.ifftn(x, axes=(0, 1, 2))),
    ("RFFT", (2, 24, 40), [24, 40], np.float32, lambda x: np.fft.rfft2(x)),
    ("FFT", (8, 257), [257], np.complex64, np.fft.fft),                   # chirp-z at M = 528
    ("IFFT", (9, 257), [257], np.complex128, np.fft.ifft),
    ("FFT", (8, 97), [97], np.complex64, np.fft.fft),                     # prime: the matmul path
    ("FFT", (16, 1024), [1024], np.complex64, np.fft.fft),                # 2^10
]


@pytest.mark.parametrize("kind,shape,lengths,dtype,reference", _CASES)
def test_fft_matches_numpy(kind, shape, lengths, dtype, reference):
    """As test_fft_fast's cases (max error 1e-6 / 1e-13 of the largest output)."""
    _matches_numpy(kind, shape, lengths, dtype, reference)


def _lowered(tmp_path, shape, n) -> str:
    path = tmp_path / "fft.mlir"
    t = _tensor(shape, np.complex64)
    path.write_text(_program("FFT", [n], t, t))
    return _opt(path)


def _opt(path) -> str:
    return subprocess.run([sys.executable, "-m", "xlac.tools.xla_opt", str(path),
                           "--pass-pipeline=builtin.module(xla-lower-fft)"],
                          capture_output=True, text=True, check=True).stdout


def test_one_generic_per_stage(tmp_path):
    """720 = 12 * 12 * 5 over 16 transforms: three multi-result generics (24,
    24 and 10 results: r complex outputs as planes), no matmul, the last one
    writing the digits reversed (a permuted output map); the ways in and out
    are 2-D transposes, no digit-reversing one. Powers of two of any size,
    2 to 1024 transforms take the stages; one transform keeps the matmuls."""
    ir = _lowered(tmp_path, (16, 720), 720)
    stages = re.findall(r"= linalg.generic", ir)
    assert len(stages) == 3 and "dot_general" not in ir
    assert [int(n) for n in re.findall(r"%\w+:(\d+) = linalg.generic", ir)] == [24, 24, 10]
    assert "affine_map<(d0, d1, d2) -> (d1, d0, d2)>" in ir       # (k1, k2, b) -> (k2, k1, b)
    assert re.findall(r"stablehlo.transpose[^\n]*dims = \[(.*?)\]", ir) == ["1, 0"] * 2
    assert "stablehlo.pad" not in ir                             # 16: whole blocks
    for shape, n in (((16, 1024), 1024), ((1024, 96), 96), ((4, 720), 720), ((2, 4096), 4096)):
        lowered = _lowered(tmp_path, shape, n)
        assert "dot_general" not in lowered and "linalg.generic" in lowered, shape
    assert "dot_general" in _lowered(tmp_path, (1, 720), 720)


@pytest.mark.parametrize("batch,planes", [(16, 16), (180, 192), (3, 3), (21, 21), (128, 144),
                                          (1024, 1040), (256, 272), (200, 208)])
def test_padded_batch(batch, planes):
    """Transforms padded to whole 16-blocks of the transposes, one more block
    where that is a multiple of 128 (power-of-two strides between the planes);
    none where the 2N rows are no whole blocks or it would add more than an
    eighth (3 or 21 transforms)."""
    assert padded_batch(batch, 720) == planes
    assert padded_batch(180, 45) == 180


def test_padded_lowering(tmp_path):
    """180 transforms: planes of 192, the way in writing 180 columns (176 in
    whole blocks, 4 more; 12 zeroed), the way out 180 rows of the result
    (fft_plane_ways); not for complex128 nor an axis moved last by a transpose."""
    ir = _lowered(tmp_path, (180, 720), 720)
    assert "stablehlo.pad" not in ir and "tensor<1440x192xf32>" in ir
    assert re.findall(r"linalg.transpose ins\(\S+ : (\S+)\)", ir) == \
        ["tensor<176x1440xf32>", "tensor<4x1440xf32>", "tensor<1440x176xf32>", "tensor<1440x4xf32>"]
    path = tmp_path / "c128.mlir"
    t = _tensor((180, 720), np.complex128)
    path.write_text(_program("FFT", [720], t, t))
    assert "stablehlo.pad" not in _opt(path)
    t = _tensor((416, 312), np.complex64)        # axis 0: 312 transforms of 416, unpadded
    path.write_text(_program("FFT", [416, 312], t, t))
    assert "stablehlo.pad" not in _opt(path)


_NEW_SHAPES = [  # taken by the stages since the gates went (pow2 > 128, batch > 256 or < 8)
    ("FFT", (3, 1024), [1024], np.complex64, np.fft.fft),
    ("IFFT", (4, 2048), [2048], np.complex128, np.fft.ifft),
    ("FFT", (2, 720), [720], np.complex64, np.fft.fft),
    ("FFT", (256, 64), [64], np.complex64, np.fft.fft),                  # 272 planes
    ("FFT", (128, 256), [256], np.complex128, np.fft.fft),              # 136 planes
    ("IFFT", (300, 512), [512], np.complex64, np.fft.ifft),
    ("RFFT", (3, 1024), [1024], np.float32, np.fft.rfft),
    ("RFFT", (5, 4096), [4096], np.float64, np.fft.rfft),
    ("IRFFT", (5, 257), [512], np.complex128, lambda x: np.fft.irfft(x, 512)),
    ("IRFFT", (130, 129), [256], np.complex64, lambda x: np.fft.irfft(x, 256)),
    ("IFFT", (256, 8, 6), [256, 8, 6], np.complex64, lambda x: np.fft.ifftn(x, axes=(0, 1, 2))),
    ("FFT", (256, 24), [256, 24], np.complex128, np.fft.fft2),           # axis 0 of 256
    ("RFFT", (2, 24, 512), [24, 512], np.float32, np.fft.rfft2),
    ("IRFFT", (3, 96, 33), [96, 64], np.complex128, lambda x: np.fft.irfft2(x, (96, 64))),
]


@pytest.mark.parametrize("kind,shape,lengths,dtype,reference", _NEW_SHAPES)
def test_new_shapes_match_numpy(kind, shape, lengths, dtype, reference):
    _matches_numpy(kind, shape, lengths, dtype, reference)


@pytest.mark.parametrize("level", runnable_levels("x86-64-v3", "host"))
def test_padded_digit_reversed_at_levels(level):
    """180 x 720 (padded, three stages reversed by the last) and 1024 x 128
    (pow2 planes) against numpy at each runnable level."""
    rng = np.random.default_rng(7)
    for shape in ((180, 720), (1024, 128)):
        x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
        t = _tensor(shape, np.complex64)
        (got,) = xlac.compile(_program("FFT", [shape[1]], t, t), cpu=level, cache=False).run(x)
        want = np.fft.fft(x.astype(np.complex128))
        assert np.abs(got - want).max() <= 1e-6 * np.abs(want).max()


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


# rfft2 over the last two axes of 16 x 512: at AVX2 the stages' peeled tails
# forwarded into a slice (xla-forward-slice-copies) once got a dynamic offset
# where the subview verifier infers a static one, and the compile failed
_SLICED_TAILS = [
    ("RFFT", (2, 16, 512), [16, 512], np.float32, np.fft.rfft2),
    ("RFFT", (2, 16, 256), [16, 256], np.float32, np.fft.rfft2),
    ("RFFT", (3, 16, 512), [16, 512], np.float32, np.fft.rfft2),
    ("IRFFT", (2, 16, 257), [16, 512], np.complex64, lambda x: np.fft.irfft2(x, (16, 512))),
    ("FFT", (2, 16, 512), [16, 512], np.complex64, np.fft.fft2),
]


@pytest.mark.parametrize("kind,shape,lengths,dtype,reference", _SLICED_TAILS)
def test_sliced_tails_compile_at_levels(kind, shape, lengths, dtype, reference):
    """Compiled at x86-64-v3 and the host, run where runnable, against numpy
    (max error 1e-6 of the largest output)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(dtype)
    if np.iscomplexobj(x):
        x = (x + 1j * rng.standard_normal(shape)).astype(dtype)
    out_shape = list(shape)
    out_shape[-1] = shape[-1] // 2 + 1 if kind == "RFFT" else lengths[-1] if kind == "IRFFT" else shape[-1]
    out_dtype = {"RFFT": np.complex64, "IRFFT": np.float32}.get(kind, dtype)
    program = _program(kind, lengths, _tensor(shape, dtype), _tensor(out_shape, out_dtype))
    want = reference(x.astype(np.complex128 if np.iscomplexobj(x) else np.float64))
    for level in ("x86-64-v3", "host"):
        exe = xlac.compile(program, cpu=level, cache=False)
        if level in runnable_levels(level):
            (got,) = exe.run(x)
            assert np.abs(got - want).max() <= 1e-6 * np.abs(want).max(), level


def test_inverse_scale_in_the_first_stage(tmp_path):
    """IFFT's 1/N goes into the first stage (its twiddle tables, a product
    for the untwiddled output): no division pass after the transform; on
    the matmul path (one transform) the division stays."""
    path = tmp_path / "ifft.mlir"
    for shape, divides in (((16, 720), False), ((1, 720), True)):
        t = _tensor(shape, np.complex64)
        path.write_text(_program("IFFT", [720], t, t))
        ir = _opt(path)
        assert ("stablehlo.divide" in ir) is divides, shape
        assert ("arith.constant 0.0013888888888888889 : f64" in ir) is not divides, shape


_INVERSES = [  # the scale through each way into the stages
    ("IFFT", (180, 720), [720], np.complex64, np.fft.ifft),               # padded planes
    ("IFFT", (21, 700), [700], np.complex64, np.fft.ifft),                # gathered
    ("IFFT", (24, 40), [24, 40], np.complex128, np.fft.ifft2),            # two axes, one scale
    ("IRFFT", (12, 540), [1078], np.complex64, lambda x: np.fft.irfft(x, 1078)),
    ("IFFT", (8, 257), [257], np.complex64, np.fft.ifft),                 # chirp-z: taken once
]


@pytest.mark.parametrize("kind,shape,lengths,dtype,reference", _INVERSES)
def test_inverse_scale_at_levels(kind, shape, lengths, dtype, reference):
    test_sliced_tails_compile_at_levels(kind, shape, lengths, dtype, reference)


def _axis0_program(kind: str, shape, in_dtype, out_dtype) -> str:
    """fft(x, axis=0) as jax writes it: transpose, [convert,] fft, transpose back."""
    rows, cols = shape
    src, cplx = _tensor(shape, in_dtype), _tensor(shape, out_dtype)
    moved, moved_c = _tensor((cols, rows), in_dtype), _tensor((cols, rows), out_dtype)
    convert = f"  %c = stablehlo.convert %t : ({moved}) -> {moved_c}\n" if in_dtype != out_dtype else ""
    operand = "%c" if convert else "%t"
    return f"""
func.func @main(%x: {src}) -> {cplx} {{
  %t = stablehlo.transpose %x, dims = [1, 0] : ({src}) -> {moved}
{convert}  %y = stablehlo.fft {operand}, type = {kind}, length = [{rows}] : ({moved_c}) -> {moved_c}
  %z = stablehlo.transpose %y, dims = [1, 0] : ({moved_c}) -> {cplx}
  return %z : {cplx}
}}"""


_AXIS0 = [  # kind, shape (the transformed axis first), input and output dtypes
    ("FFT", (256, 64), np.float32, np.complex64),       # jnp.fft.fft(x, axis=0) of a real x
    ("IFFT", (720, 24), np.complex64, np.complex64),
    ("FFT", (96, 128), np.complex128, np.complex128),   # 128 transforms: padded planes
    ("IFFT", (45, 9), np.complex128, np.complex128),
]


@pytest.mark.parametrize("kind,shape,in_dtype,out_dtype", _AXIS0)
def test_leading_axis_without_transposes(tmp_path, kind, shape, in_dtype, out_dtype):
    """A transform of axis 0 between two transposes runs the stages on the
    operand's own layout: the lowered program has no transpose left; the
    results match numpy at every runnable level (1e-6 of the largest output)."""
    program = _axis0_program(kind, shape, in_dtype, out_dtype)
    path = tmp_path / "axis0.mlir"
    path.write_text(program)
    ir = _opt(path)
    assert "stablehlo.transpose" not in ir and "linalg.generic" in ir
    rng = np.random.default_rng(11)
    x = rng.standard_normal(shape)
    if np.issubdtype(in_dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    x = x.astype(in_dtype)
    reference = np.fft.fft if kind == "FFT" else np.fft.ifft
    want = reference(x.astype(np.complex128), axis=0)
    for level in ("x86-64-v3", "host"):
        exe = xlac.compile(program, cpu=level, cache=False)
        if level in runnable_levels(level):
            (got,) = exe.run(x)
            assert got.dtype == out_dtype
            assert np.abs(got - want).max() <= 1e-6 * np.abs(want).max(), level


_SPLIT_ON_PLANES = [  # RFFT whose half-length transform runs on blocked planes
    ("RFFT", (256, 1024), [1024], np.float32, np.fft.rfft),     # padded to 272 planes
    ("RFFT", (32, 256), [256], np.float64, np.fft.rfft),        # f64 planes, unpadded
    ("RFFT", (17, 512), [512], np.float32, np.fft.rfft),        # 2-D ways that gather, unpadded
    ("RFFT", (4, 16, 96), [16, 96], np.float32, np.fft.rfft2),  # then the fft of axis 1
    ("IRFFT", (240, 540), [1078], np.complex64, lambda x: np.fft.irfft(x, 1078)),  # 2M+2 ragged
    ("IRFFT", (7, 33), [64], np.complex128, lambda x: np.fft.irfft(x, 64)),
    ("IRFFT", (16, 513), [1024], np.complex64, lambda x: np.fft.irfft(x, 1024)),  # blocked
]


@pytest.mark.parametrize("kind,shape,lengths,dtype,reference", _SPLIT_ON_PLANES)
def test_real_split_on_the_planes(tmp_path, kind, shape, lengths, dtype, reference):
    """RFFT's split of Z[k] and Z[M-k] runs on the planes before the way out,
    IRFFT's merge (where the planes gather) after the way in (no reverse op:
    the mirror is a row index of tensor.extract), scheduled as vector
    kernels; numpy at every runnable level (1e-6 of the largest)."""
    real = kind == "RFFT"
    out_shape = list(shape[:-1]) + [shape[-1] // 2 + 1 if real else lengths[-1]]
    out_dtype = {np.float32: np.complex64, np.float64: np.complex128,
                 np.complex64: np.float32, np.complex128: np.float64}[dtype]
    program = _program(kind, lengths, _tensor(shape, dtype), _tensor(out_shape, out_dtype))
    if shape in ((256, 1024), (240, 540)):
        path = tmp_path / "rfft.mlir"
        path.write_text(program)
        ir = _opt(path)
        assert "stablehlo.reverse" not in ir and "tensor.extract %" in ir
        if real:
            assert ir.count("linalg.transpose") == 3       # in, out and its rows past the blocks
        exe = xlac.compile(program, cpu="x86-64-v3", cache=False)
        assert "no vector schedule" not in (exe.fusion_report() or "")
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape) + (0 if real else 1j * rng.standard_normal(shape))
    x = x.astype(dtype)
    want = reference(x.astype(np.float64 if real else np.complex128))
    for level in ("x86-64-v3", "host"):
        exe = xlac.compile(program, cpu=level, cache=False)
        if level in runnable_levels(level):
            (got,) = exe.run(x)
            bound = 1e-6 if dtype in (np.float32, np.complex64) else 1e-14
            assert np.abs(got - want).max() <= bound * np.abs(want).max(), level


_NARROW = [  # kind, shape, input dtype, per stage: widens to f64, numpy reference
    ("FFT", (180, 720), np.complex64, [True, False, False], np.fft.fft),        # padded to 192
    ("IFFT", (64, 1024), np.complex64, [True, False, False], np.fft.ifft),
    ("RFFT", (256, 1024), np.float32, [True, True, False], np.fft.rfft),        # then the split
]


@pytest.mark.parametrize("kind,shape,dtype,widens,reference", _NARROW)
def test_stages_after_the_first_in_f32(tmp_path, kind, shape, dtype, widens, reference):
    """Single precision on the blocked planes: the first stage computes in
    f64 (extf/truncf in its body), the later ones in f32 (RFFT: only the
    last, its split after them stays f64); the error against numpy in f64
    stays below XLA's (measured 1.4-1.8e-7 of the largest output, rms
    1.1-1.3e-7 relative) at every runnable level."""
    real = kind == "RFFT"
    n = shape[-1]
    out_shape = [shape[0], n // 2 + 1 if real else n]
    program = _program(kind, [n], _tensor(shape, dtype), _tensor(out_shape, np.complex64))
    path = tmp_path / "narrow.mlir"
    path.write_text(program)
    bodies = _opt(path).split("= linalg.generic")[1:]
    assert ["arith.extf" in body.split("linalg.yield")[0] for body in bodies][:3] == widens
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(shape) + (0 if real else 1j * rng.standard_normal(shape))).astype(dtype)
    want = reference(x.astype(np.float64 if real else np.complex128))
    for level in ("x86-64-v3", "host"):
        exe = xlac.compile(program, cpu=level, cache=False)
        if level in runnable_levels(level):
            (got,) = exe.run(x)
            diff = np.abs(got - want)
            assert diff.max() <= 1.4e-7 * np.abs(want).max(), level
            assert np.sqrt((diff ** 2).mean() / (np.abs(want) ** 2).mean()) <= 1.1e-7, level
