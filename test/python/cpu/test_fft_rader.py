"""xla-lower-fft's prime stages above fft_codelet.RADER_FROM (Rader codelets,
passes/lower/fft_stages.py): numerics at each level, and the RADER_POINTS gate."""

import numpy as np
import pytest
from test_fft_fast import _program, _tensor
from test_fft_stages import _lowered

import xlac
from conftest import runnable_levels


@pytest.mark.parametrize("level", runnable_levels("x86-64-v3", "host"))
def test_rader_stages_at_levels(level):
    """37-point stages (Rader codelets) against numpy at each runnable level:
    ifft2 of 148 x 444 (37 * 4 the leading axis, 37 * 12) and rfft of
    256 x 592 (half 296 = 37 * 8), both RADER_POINTS or more."""
    rng = np.random.default_rng(37)
    for kind, shape, lengths, out_shape, reference in (
            ("IFFT", (148, 444), [148, 444], (148, 444), np.fft.ifft2),
            ("RFFT", (256, 592), [592], (256, 297), np.fft.rfft)):
        x = rng.standard_normal(shape)
        x = (x + 1j * rng.standard_normal(shape)).astype(np.complex64) if kind == "IFFT" \
            else x.astype(np.float32)
        program = _program(kind, lengths, _tensor(shape, x.dtype.type),
                           _tensor(out_shape, np.complex64))
        (got,) = xlac.compile(program, cpu=level, cache=False).run(x)
        want = reference(x.astype(np.complex128 if kind == "IFFT" else np.float64))
        assert np.abs(got - want).max() <= 1e-6 * np.abs(want).max(), (kind, level)


def test_rader_stages_from_enough_points(tmp_path):
    """A 444-point axis takes the stages (no dot_general) from RADER_POINTS
    points on, the matmul levels below (a codelet of 37 costs seconds to compile)."""
    assert "dot_general" not in _lowered(tmp_path, (148, 444), 444)
    assert "dot_general" in _lowered(tmp_path, (8, 444), 444)
