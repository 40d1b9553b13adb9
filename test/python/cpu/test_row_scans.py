"""Sums along short rows (cumsum of the innermost dim) scan 8 rows at a time,
one a lane, reading and writing them in place: no transposed copy around the
scan, the same adds in XLA's order as the blocked scan (row_scan_text.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_windows import _window

import xlac
from conftest import runnable_levels
from xlac.reference.server import shared_server

_CASES = {   # element, numpy dtype, reverse, rows x n (n: two levels of blocks or more)
    "f64": ("f64", np.float64, False, (8, 70)),
    "c128_suffix": ("complex<f64>", np.complex128, True, (16, 40)),
    "c64": ("complex<f32>", np.complex64, False, (8, 40)),
    "i64": ("i64", np.int64, False, (16, 33)),
}


def _program(element, reverse, shape) -> str:
    rows, n = shape
    init = "(0.0, 0.0)" if element.startswith("complex") else "0" if element[0] == "i" else "0.0"
    padding = [(0, 0), (0, n - 1) if reverse else (n - 1, 0)]
    return _window(shape, element, padding, [1, n], "add", init)


def _operand(dtype, shape):
    rng = np.random.default_rng(3)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-1000, 1000, shape).astype(dtype)
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize("case", sorted(_CASES))
def test_inner_scans_read_rows_in_place_and_match_the_interpreter(case, cpu):
    element, dtype, reverse, shape = _CASES[case]
    program = _program(element, reverse, shape)
    exe = xlac.compile(program, cache=False, cpu=cpu)
    linalg = exe.as_text("linalg")
    assert not re.search(r"-> \(d1, d0", linalg), "a transposed copy around the scan"
    assert "vector.transfer_read" in linalg
    assert "not scheduled:" not in exe.fusion_report(), exe.fusion_report()
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this CPU cannot run {cpu} code (compiled and checked)")
    x = _operand(dtype, shape)
    (want,) = shared_server().run(program.encode(), [x])
    got = np.asarray(exe(x))
    if np.issubdtype(dtype, np.integer):
        np.testing.assert_array_equal(got, want)
    else:
        tolerance = 1e-5 if dtype == np.complex64 else 1e-13     # blocks of 16, not one by one
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * np.abs(want).max())


@pytest.mark.heavy
def test_three_levels_of_blocks_match_the_interpreter():
    program = _program("f64", True, (8, 300))       # 300 -> 19 blocks -> 2 totals' blocks
    exe = xlac.compile(program, cache=False, cpu="x86-64-v3")
    x = _operand(np.float64, (8, 300))
    (want,) = shared_server().run(program.encode(), [x])
    np.testing.assert_allclose(np.asarray(exe(x)), want, rtol=1e-13, atol=1e-13 * np.abs(want).max())


def test_rows_not_a_multiple_of_8_keep_the_transposed_copy():
    program = _program("f64", False, (5, 70))
    linalg = xlac.compile(program, cache=False, cpu="x86-64-v4").as_text("linalg")
    assert "vector.transfer_read" not in linalg
