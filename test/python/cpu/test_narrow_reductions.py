"""Reductions of 1- and 2-byte elements on the vector schedules: integer sums
(exact in any order), any/all of bools, max of f16/bf16, and sums of f16/bf16
accumulated in f32 and rounded once (xla-widen-narrow-sums); a product of
f16/bf16 stays one by one (16 lanes would round differently). Against the
StableHLO reference interpreter, on shapes whose rows and columns leave
remainders."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

import xlac
from xlac.reference.server import shared_server

_LOWEST = {"i8": "-128", "ui8": "0", "i1": "false", "f16": "0xFC00", "bf16": "0xFF80"}
_DTYPES = {"i8": np.int8, "ui8": np.uint8, "i1": np.bool_, "f16": np.float16,
           "bf16": ml_dtypes.bfloat16}


def _program(element: str, shape: tuple[int, int], dim: int, op: str) -> str:
    t, out = f"tensor<{shape[0]}x{shape[1]}x{element}>", f"tensor<{shape[1 - dim]}x{element}>"
    init = _LOWEST[element] if op == "maximum" else ("false" if element == "i1" else
                                                     "0.0" if element[0] in "fb" else "0")
    return f"""func.func @main(%a: {t}) -> {out} {{
  %z = stablehlo.constant dense<{init}> : tensor<{element}>
  %0 = stablehlo.reduce(%a init: %z) across dimensions = [{dim}] : ({t}, tensor<{element}>) -> {out}
    reducer(%x: tensor<{element}>, %y: tensor<{element}>) {{
      %s = stablehlo.{op} %x, %y : tensor<{element}>
      stablehlo.return %s : tensor<{element}>
    }}
  return %0 : {out}
}}"""


def _data(element: str, shape, rng) -> np.ndarray:
    if element == "i1":
        return rng.random(shape) < 0.5
    if element == "ui8":
        return rng.integers(0, 255, shape).astype(np.uint8)
    if element == "i8":
        return rng.integers(-128, 127, shape).astype(np.int8)
    return rng.standard_normal(shape).astype(_DTYPES[element])


CASES = [(e, "add") for e in ("i8", "ui8", "i1")] + [(e, "maximum") for e in ("i8", "f16", "bf16")]


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("element,op", CASES)
def test_narrow_reduction_is_vectorized_and_matches_the_interpreter(element, op, dim):
    text = _program(element, (37, 1000), dim, op)
    data = _data(element, (37, 1000), np.random.default_rng(dim))
    exe = xlac.compile(text, cache=False, cpu="x86-64-v3")
    (want,) = shared_server().run(text.encode(), [data])
    np.testing.assert_array_equal(np.asarray(exe(data)), want)
    assert "not scheduled:" not in exe.fusion_report(), exe.fusion_report()


def _f32_sum_program(element: str, shape: tuple[int, int], dim: int) -> str:
    """The sum of ``_program(element, shape, dim, "add")`` in f32, rounded once."""
    t, out = f"tensor<{shape[0]}x{shape[1]}x{element}>", f"tensor<{shape[1 - dim]}x{element}>"
    wide, wide_out = t.replace(element, "f32"), out.replace(element, "f32")
    return f"""func.func @main(%a: {t}) -> {out} {{
  %w = stablehlo.convert %a : ({t}) -> {wide}
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%w init: %z) applies stablehlo.add across dimensions = [{dim}] : ({wide}, tensor<f32>) -> {wide_out}
  %1 = stablehlo.convert %0 : ({wide_out}) -> {out}
  return %1 : {out}
}}"""


# a reduction linalg.generic whose accumulator (its outs) is an f32 tensor
_F32_ACCUMULATOR = re.compile(r'iterator_types = \[[^]]*"reduction"[^]]*\]\} ins\(%\S+ : '
                              r'tensor<37x1000x(bf16|f16)>\) outs\(%\S+ : tensor<\d+xf32>\)')


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("element", ["f16", "bf16"])
def test_narrow_float_sum_accumulates_in_f32_on_the_vector_schedules(element, dim):
    text = _program(element, (37, 1000), dim, "add")
    data = _data(element, (37, 1000), np.random.default_rng(dim))
    exe = xlac.compile(text, cache=False, cpu="x86-64-v3")
    got = np.asarray(exe(data)).astype(np.float64)
    assert "not scheduled:" not in exe.fusion_report(), exe.fusion_report()
    assert _F32_ACCUMULATOR.search(exe.as_text("linalg")), exe.as_text("linalg")
    # the interpreter's f32 sum, rounded once: f32 sums in another order round to
    # the same narrow value but where one lies near a rounding boundary
    (want,) = shared_server().run(_f32_sum_program(element, (37, 1000), dim).encode(), [data])
    want = np.asarray(want).astype(np.float64)
    eps = float(ml_dtypes.finfo(_DTYPES[element]).eps)
    np.testing.assert_allclose(got, want, rtol=eps, atol=eps * 1e-2 * np.abs(want).max())
    # nearer the f64 sum than StableHLO's one-by-one sum in the element type
    exact = data.astype(np.float64).sum(dim)
    (in_type,) = shared_server().run(text.encode(), [data])
    assert np.abs(got - exact).max() <= eps * np.abs(exact).max()
    assert np.abs(got - exact).max() < np.abs(np.asarray(in_type).astype(np.float64) - exact).max()


def test_narrow_float_product_stays_in_stablehlo_order():
    text = _program("bf16", (8, 4096), 1, "multiply").replace("dense<0.0>", "dense<1.0>")
    rng = np.random.default_rng(0)
    data = (1 + 0.01 * rng.standard_normal((8, 4096))).astype(ml_dtypes.bfloat16)
    exe = xlac.compile(text, cache=False, cpu="x86-64-v3")
    (want,) = shared_server().run(text.encode(), [data])
    np.testing.assert_array_equal(np.asarray(exe(data)), want)
    assert "a sum or product of 2-byte floats" in exe.fusion_report()


@pytest.mark.parametrize("element,op", [("bf16", "maximum"), ("f16", "minimum")])
def test_narrow_float_max_and_min_accumulate_in_f32_bit_for_bit(element, op):
    """Exact in f32 (the result is one of the elements): no rounding per step
    (at x86-64-v3 a chain of shifts, adds and a NaN select per element: 7x
    the f32 max's time), the interpreter's bits (NaN rows: a NaN)."""
    text = _program(element, (37, 1000), 1, op)
    if op == "minimum":
        text = text.replace("dense<0.0>", "dense<0x7C00>")    # +inf
    data = _data(element, (37, 1000), np.random.default_rng(3))
    data[5, 7], data[9, ::3], data[11, 2] = np.nan, -0.0, np.inf
    exe = xlac.compile(text, cache=False, cpu="x86-64-v3")
    (want,) = shared_server().run(text.encode(), [data])
    got, want = np.asarray(exe(data)), np.asarray(want)
    # a NaN's sign is not the interpreter's at f16 (0xFE00), as before the widening
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(got)].view(np.uint16), want[~np.isnan(want)].view(np.uint16))
    assert _F32_ACCUMULATOR.search(exe.as_text("linalg")), exe.as_text("linalg")
