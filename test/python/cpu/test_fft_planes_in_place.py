"""The blocked planes' ways in and out written in place (fft_plane_ways):
where the transforms are padded (to whole register blocks, or off powers of
two), transposes write the first B columns of the padded planes (the whole
blocks, then the rest; the others zero-filled), no stablehlo.pad copy; the
way out writes the result's whole blocks and the columns and rows past them
(RFFT's 2(M+1)) straight into it, no slice copy."""

import re

import numpy as np
import pytest
from test_fft_fast import _program, _tensor
from test_fft_stages import _opt

import xlac
from conftest import runnable_levels

_CASES = [  # kind, shape, lengths, dtype, numpy reference, (pads, slices of pairs) after lowering
    ("RFFT", (256, 1024), [1024], np.float32, np.fft.rfft, (0, 0)),   # 272 planes, 1026 rows out
    ("FFT", (128, 512), [512], np.complex64, np.fft.fft, (0, 0)),     # 144 planes, whole rows out
    ("IFFT", (256, 96), [96], np.complex64, np.fft.ifft, (0, 0)),
    ("RFFT", (128, 64, 96), [64, 96], np.float32, np.fft.rfft2, (0, 0)),  # then axis 0 (moved)
    ("FFT", (180, 720), [720], np.complex64, np.fft.fft, (0, 0)),     # ragged: padded to 192
    ("FFT", (15, 720), [720], np.complex64, np.fft.fft, (0, 0)),      # no whole block: 16
]


@pytest.mark.parametrize("kind,shape,lengths,dtype,reference,counts", _CASES)
def test_planes_in_place(tmp_path, kind, shape, lengths, dtype, reference, counts):
    real = kind == "RFFT"
    out_shape = list(shape[:-1]) + [shape[-1] // 2 + 1 if real else shape[-1]]
    out_dtype = np.complex64
    program = _program(kind, lengths, _tensor(shape, dtype), _tensor(out_shape, out_dtype))
    path = tmp_path / "fft.mlir"
    path.write_text(program)
    ir = _opt(path)
    # slices of whole pairs (not the real and imaginary parts' of the complex result)
    assert (ir.count("stablehlo.pad"), len(re.findall(r"stablehlo\.slice [^\n]*, 0:2\]", ir))) == counts
    assert "linalg.transpose" in ir and "linalg.fill" in ir
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(shape) + (0 if real else 1j * rng.standard_normal(shape))).astype(dtype)
    # (rfft2's axis 0 moves complex values: scalar loops, as before)
    _matches(program, x, reference(x.astype(np.float64 if real else np.complex128)), len(lengths) == 1)


def _matches(program: str, x, want, scheduled: bool = True) -> None:
    """Within 1e-6 of the largest of numpy's float64 ``want`` at every runnable
    level, every kernel vector-scheduled (where ``scheduled``)."""
    for level in ("x86-64-v3", "host"):
        exe = xlac.compile(program, cpu=level, cache=False)
        assert not scheduled or "no vector schedule" not in (exe.fusion_report() or "")
        if level in runnable_levels(level):
            (got,) = exe.run(x)
            assert np.abs(got - want).max() <= 1e-6 * np.abs(want).max(), level


@pytest.mark.parametrize("shape,size", [((240, 540), 1078), ((16, 513), 1024), ((9, 271), 540)])
def test_irfft_merges_on_planes_in_place(tmp_path, shape, size):
    """IRFFT of whole blocks of transforms (240, 16) merges X[k] and X[M-k] on
    the planes after a way in written in place (2M+2 rows: 1072 or 1024 in
    blocks, the rest a transpose of its own), not on pairs (a reverse op) nor
    through gathered transposes; 9 transforms still gather. numpy at every
    runnable level (1e-6 of the largest)."""
    out_shape = [shape[0], size]
    program = _program("IRFFT", [size], _tensor(shape, np.complex64), _tensor(out_shape, np.float32))
    path = tmp_path / "irfft.mlir"
    path.write_text(program)
    ir = _opt(path)
    assert "stablehlo.reverse" not in ir and "tensor.extract %" in ir
    assert ("dims = [1, 2, 0]" in ir) == (shape[0] % 16 != 0)      # the gathered way in
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    _matches(program, x, np.fft.irfft(x.astype(np.complex128), size))


@pytest.mark.parametrize("kind,shape,dtype,reference,pieces", [
    ("FFT", (21, 7000), np.complex64, np.fft.fft, 4),      # 14000 rows whole, 16 + 5 transforms
    ("FFT", (180, 720), np.complex128, np.fft.fft, 4),     # f64 planes: 176 + 4 transforms
    ("IFFT", (20, 270), np.complex64, np.fft.ifft, 6),     # 540 rows: 528 + 12, 16 + 4
])
def test_unpadded_planes_in_pieces(tmp_path, kind, shape, dtype, reference, pieces):
    """Planes of transforms that are no whole register blocks and not padded
    (fft_stages.blocked_planes None) come and leave in 2-D transposes too: the
    whole blocks in one, the transforms and rows past them in one each (21 x
    7000 c64 left in a 6-D digit-reversing transpose, scalar loops); no
    transpose of rank above 2 is left, every kernel is vector-scheduled, and
    the result matches numpy."""
    program = _program(kind, [shape[-1]], _tensor(shape, dtype), _tensor(shape, dtype))
    path = tmp_path / "fft.mlir"
    path.write_text(program)
    ir = _opt(path)
    assert ir.count("linalg.transpose") == pieces
    assert not re.search(r"stablehlo\.transpose [^\n]*dims = \[\d+, \d+, \d+", ir)
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    _matches(program, x, reference(x.astype(np.complex128)))
