"""A vectorized iota of a narrow integer type (or of f16 through i16) adds its
lanes in that type (xla-narrow-index-vectors), not in 64-bit index vectors
packed down per store, the values wrapping as truncation does; a narrow float
iota too long for its width's integers counts in f32 (xla-widen-narrow-iotas).
Against the StableHLO reference interpreter, past 2^8 and 2^16."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlac
from xlac.reference.server import shared_server


def _iota(element: str, shape: tuple[int, int], dim: int) -> str:
    t = f"tensor<{shape[0]}x{shape[1]}x{element}>"
    return f"""func.func @main() -> {t} {{
  %0 = stablehlo.iota dim = {dim} : {t}
  return %0 : {t}
}}"""


def _matches_the_interpreter(text: str, exe) -> None:
    (want,) = shared_server().run(text.encode(), [])
    got = np.asarray(exe())
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("element,lanes,shape,cpu", [
    ("i8", "i8", (300, 1000), "x86-64-v3"), ("ui8", "i8", (300, 1000), "x86-64-v3"),
    ("i8", "i8", (300, 1000), "x86-64-v2"), ("i16", "i16", (3, 70000), "x86-64-v3"),
    ("f16", "i16", (300, 1000), "x86-64-v3"), ("i32", "i32", (300, 1000), "x86-64-v3")])
@pytest.mark.parametrize("dim", [0, 1])
def test_narrow_iota_adds_lanes_in_its_type(element, lanes, shape, cpu, dim):
    text = _iota(element, shape, dim)
    exe = xlac.compile(text, cache=False, cpu=cpu)
    bufferized = exe.as_text("bufferized")
    assert not re.search(r"vector<\d+xindex>", bufferized), bufferized
    if dim == 1:        # along a row: a broadcast start plus the constant 0 .. n-1
        assert re.search(rf"arith\.addi %\w+, %\w+ : vector<\d+x{lanes}>", bufferized), bufferized
    _matches_the_interpreter(text, exe)


@pytest.mark.parametrize("element,length", [("f16", 70000), ("bf16", 70000), ("f8E4M3FN", 300)])
def test_long_narrow_float_iota_counts_in_f32(element, length):
    text = _iota(element, (2, length), 1)
    exe = xlac.compile(text, cache=False, cpu="x86-64-v3")
    # counted as i32 (the f32 iota's lowering), converted once
    assert re.search(r"arith\.index_cast %\w+ : index to i32", exe.as_text("linalg")), exe.as_text("linalg")
    _matches_the_interpreter(text, exe)


@pytest.mark.parametrize("element", ["f64"])
@pytest.mark.parametrize("dim", [0, 1])
def test_f64_iota_converts_i32_lanes(element, dim):
    """An f64 iota's lanes (loop-bounded, below 2^31) are added and converted
    as i32: AVX2 has no i64 -> f64 vector conversion."""
    text = _iota(element, (40, 300), dim)
    exe = xlac.compile(text, cache=False, cpu="x86-64-v3")
    bufferized = exe.as_text("bufferized")
    assert not re.search(r"sitofp %\w+ : vector<\d+xi64>", bufferized), bufferized
    if dim == 1:
        assert re.search(r"sitofp %\w+ : vector<\d+xi32> to vector<\d+xf64>", bufferized), bufferized
    _matches_the_interpreter(text, exe)
