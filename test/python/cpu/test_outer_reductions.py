"""Sums over the outer dim (a column sum: the kept dim is the contiguous one)
read several registers of contiguous outputs per row (xla_reduce_outer_2d's
%lanes: half the registers' bytes), each output still summed in StableHLO's
order: the interpreter's results bit for bit, remainders of the kept dim too."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

import xlac
from conftest import runnable_levels
from xlac.reference.server import shared_server

_DTYPES = {"f32": np.float32, "f64": np.float64, "i8": np.int8, "bf16": ml_dtypes.bfloat16}


def _column_sum(element: str, rows: int, cols: int, accumulator: str = "") -> str:
    """The sum over dim 0 of a ``rows x cols`` tensor; with ``accumulator``,
    written as that type's sum of the converted operand, rounded once."""
    t, out = f"tensor<{rows}x{cols}x{element}>", f"tensor<{cols}x{element}>"
    acc = accumulator or element
    wide, wide_out = f"tensor<{rows}x{cols}x{acc}>", f"tensor<{cols}x{acc}>"
    zero = "0" if acc.startswith("i") else "0.0"
    widen = f"%w = stablehlo.convert %a : ({t}) -> {wide}" if accumulator else ""
    operand = "%w" if accumulator else "%a"
    narrow = f"%n = stablehlo.convert %0 : ({wide_out}) -> {out}" if accumulator else ""
    result = "%n" if accumulator else "%0"
    return f"""func.func @main(%a: {t}) -> {out} {{
  {widen}
  %z = stablehlo.constant dense<{zero}> : tensor<{acc}>
  %0 = stablehlo.reduce({operand} init: %z) applies stablehlo.add across dimensions = [0] : ({wide}, tensor<{acc}>) -> {wide_out}
  {narrow}
  return {result} : {out}
}}"""


def _data(element: str, shape, rng) -> np.ndarray:
    if element == "i8":
        return rng.integers(-128, 127, shape).astype(np.int8)
    return rng.standard_normal(shape).astype(_DTYPES[element])


def _accumulators(exe) -> set[str]:
    """The vector types the reduction adds in (a loop's iter_args, or with a
    masked remainder the outputs read and written back at each row)."""
    return set(re.findall(r"arith\.add[fi] %\w+, %\w+ : (vector<\d+x\w+>)", exe.as_text("bufferized")))


@pytest.mark.parametrize("cpu,element,lanes", [
    ("x86-64-v3", "f32", 64), ("x86-64-v3", "f64", 32), ("x86-64-v3", "i8", 256),
    ("x86-64-v3", "bf16", 64), ("x86-64-v2", "f32", 32), ("x86-64-v2", "f64", 16)])
@pytest.mark.parametrize("cols", [1000, 1024])
def test_column_sum_reads_rows_in_wide_vectors_in_stablehlo_order(cpu, element, lanes, cols):
    text = _column_sum(element, 37, cols)
    data = _data(element, (37, cols), np.random.default_rng(cols))
    exe = xlac.compile(text, cache=False, cpu=cpu)
    accumulator = "f32" if element == "bf16" else element     # bf16 sums in f32
    assert _accumulators(exe) == {f"vector<{lanes}x{accumulator}>"}, exe.as_text("bufferized")
    # bf16: the interpreter's f32 sum of each column, in order, rounded once
    reference = _column_sum(element, 37, cols, "f32") if element == "bf16" else text
    (want,) = shared_server().run(reference.encode(), [data])
    np.testing.assert_array_equal(np.asarray(exe(data)), want)


def test_a_short_kept_dim_takes_fewer_lanes():
    text = _column_sum("f32", 300, 20)
    data = _data("f32", (300, 20), np.random.default_rng(0))
    exe = xlac.compile(text, cache=False, cpu="x86-64-v3")
    assert _accumulators(exe) == {"vector<32xf32>"}, exe.as_text("bufferized")
    (want,) = shared_server().run(text.encode(), [data])
    np.testing.assert_array_equal(np.asarray(exe(data)), want)


@pytest.mark.parametrize("cpu,lanes", [("x86-64-v3", 64), ("x86-64-v4", 32)])
@pytest.mark.parametrize("cols", [660, 1000])
def test_a_ragged_chunk_keeps_whole_vectors_in_registers(cpu, lanes, cols):
    """Chunks of columns that %lanes does not divide (660 in 256, 256, 148 at
    x86-64-v3) peel their last, partial step: the whole steps carry their
    accumulator in a register over the rows, unmasked; only the tail is
    masked. The interpreter's column max bit for bit."""
    text = _column_sum("f32", 396, cols).replace("stablehlo.add", "stablehlo.maximum")
    exe = xlac.compile(text, cache=False, cpu=cpu)
    bufferized = exe.as_text("bufferized")
    assert re.search(rf"scf\.for .* iter_args\(.*\) -> \(vector<{lanes}xf32>\)", bufferized), bufferized
    if cpu == "x86-64-v4" and "x86-64-v4" not in runnable_levels("x86-64-v4"):
        pytest.skip("this host cannot run x86-64-v4 code")
    data = _data("f32", (396, cols), np.random.default_rng(cols))
    (want,) = shared_server().run(text.encode(), [data])
    np.testing.assert_array_equal(np.asarray(exe(data)), want)
