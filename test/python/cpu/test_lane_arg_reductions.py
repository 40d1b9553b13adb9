"""xla-lane-arg-reductions: argmax/argmin over rows (jax's variadic reduce of
(value, index) with the NaN-first, lowest-index-on-ties combiner) run as
16-lane vector loops, and give the indices the scalar loops gave, bit for bit:
NaNs (several a row, whole rows), ties, -0.0 against +0.0, infinities,
integer types, rows shorter than a vector and not a multiple of one."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

_PASS = "xla-lane-arg-reductions"
_LEVELS = ("x86-64-v3", "x86-64-v4")
_TYPES = {"f32": (np.float32, "FLOAT"), "f64": (np.float64, "FLOAT"),
          "i32": (np.int32, "SIGNED"), "i64": (np.int64, "SIGNED"), "ui32": (np.uint32, "UNSIGNED")}


def _program(shape, element: str, index: str, direction: str, nan: bool = True, axis: int = -1) -> str:
    """jax's lax.argmax / argmin over ``axis``, as it lowers."""
    kind = _TYPES[element][1]
    dims = "x".join(map(str, shape))
    last = axis % len(shape)
    out = "".join(f"{d}x" for i, d in enumerate(shape) if i != last)
    if kind == "FLOAT":
        init = "0xFF800000" if direction == "GT" else "0x7F800000"
        init = init if element == "f32" else ("0xFFF0000000000000" if direction == "GT" else "0x7FF0000000000000")
    else:
        init = str(np.iinfo(_TYPES[element][0]).min if direction == "GT" else np.iinfo(_TYPES[element][0]).max)
    nan_check = (f"      %n = stablehlo.compare NE, %a, %a, {kind} : (tensor<{element}>, tensor<{element}>) -> tensor<i1>\n"
                 "      %p = stablehlo.or %g, %n : tensor<i1>\n") if nan else "      %p = stablehlo.or %g, %g : tensor<i1>\n"
    return f"""func.func @main(%x: tensor<{dims}x{element}>) -> tensor<{out}{index}> {{
  %iota = stablehlo.iota dim = {last} : tensor<{dims}x{index}>
  %v0 = stablehlo.constant dense<{init}> : tensor<{element}>
  %i0 = stablehlo.constant dense<0> : tensor<{index}>
  %r:2 = stablehlo.reduce(%x init: %v0), (%iota init: %i0) across dimensions = [{last}]
      : (tensor<{dims}x{element}>, tensor<{dims}x{index}>, tensor<{element}>, tensor<{index}>)
      -> (tensor<{out}{element}>, tensor<{out}{index}>)
   reducer(%a: tensor<{element}>, %b: tensor<{element}>) (%ia: tensor<{index}>, %ib: tensor<{index}>) {{
      %g = stablehlo.compare {direction}, %a, %b, {kind} : (tensor<{element}>, tensor<{element}>) -> tensor<i1>
{nan_check}      %e = stablehlo.compare EQ, %a, %b, {kind} : (tensor<{element}>, tensor<{element}>) -> tensor<i1>
      %l = stablehlo.compare LT, %ia, %ib, SIGNED : (tensor<{index}>, tensor<{index}>) -> tensor<i1>
      %t = stablehlo.and %e, %l : tensor<i1>
      %q = stablehlo.or %p, %t : tensor<i1>
      %v = stablehlo.select %p, %a, %b : tensor<i1>, tensor<{element}>
      %i = stablehlo.select %q, %ia, %ib : tensor<i1>, tensor<{index}>
      stablehlo.return %v, %i : tensor<{element}>, tensor<{index}>
   }}
  return %r#1 : tensor<{out}{index}>
}}"""


def _values(shape, element: str, seed: int = 3) -> np.ndarray:
    """Few distinct values (many ties), specials sprinkled, special rows."""
    rng = np.random.default_rng(seed)
    dtype = _TYPES[element][0]
    if _TYPES[element][1] != "FLOAT":
        x = (rng.integers(-3, 4, size=shape) % (7 if dtype == np.uint32 else 1 << 40)).astype(dtype)
        info = np.iinfo(dtype)
        x.reshape(-1)[rng.integers(0, x.size, size=max(1, x.size // 20))] = info.max
        x.reshape(-1)[rng.integers(0, x.size, size=max(1, x.size // 20))] = info.min
        return x
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 2.0, -2.0], dtype)
    x = rng.integers(-2, 3, size=shape).astype(dtype)
    flat = x.reshape(-1)
    where = rng.random(flat.size) < 0.15
    flat[where] = rng.choice(specials, size=int(where.sum()))
    rows = x.reshape(-1, shape[-1])
    if rows.shape[0] > 4:
        rows[0] = np.nan                                # all NaN
        rows[1] = -np.inf                               # all -inf
        rows[2] = np.inf
        rows[3] = np.where(np.arange(shape[-1]) % 2, 0.0, -0.0)
    return x


def _expected(x: np.ndarray, direction: str, axis: int = -1) -> np.ndarray:
    """numpy's argmax/argmin: the first NaN, else the first extreme (-0.0 == +0.0)."""
    return np.argmax(x, axis=axis) if direction == "GT" else np.argmin(x, axis=axis)


_SHAPES = [(40, 660), (9, 16), (7, 3), (5, 33), (3, 6, 47), (11, 1)]


@pytest.mark.parametrize("level", ["host", *_LEVELS])
@pytest.mark.parametrize("element,index", [("f32", "i64"), ("f32", "i32"), ("f64", "i64"),
                                           ("i32", "i64"), ("i64", "i32")])
@pytest.mark.parametrize("direction", ["GT", "LT"])
def test_indices_as_scalar_loops(level, element, index, direction):
    if level not in runnable_levels(level):
        pytest.skip(f"{level} does not run here")
    for shape in _SHAPES:
        text = _program(shape, element, index, direction)
        x = _values(shape, element)
        got = np.asarray(xlac.compile(text, cpu=level)(x))
        scalar = np.asarray(xlac.compile(text, cpu=level, disable_passes=(_PASS,))(x))
        np.testing.assert_array_equal(got, scalar, err_msg=f"{shape}")
        np.testing.assert_array_equal(got, _expected(x, direction).astype(got.dtype), err_msg=f"{shape}")


@pytest.mark.parametrize("level", ["host", *_LEVELS])
@pytest.mark.parametrize("element", ["f32", "i32", "ui32"])
@pytest.mark.parametrize("direction", ["GT", "LT"])
def test_columns_as_scalar_loops(level, element, direction):
    """argmax over axis 0 (16 columns a step): indices and values (returned
    too) the scalar loops', bit for bit."""
    if level not in runnable_levels(level):
        pytest.skip(f"{level} does not run here")
    for shape in [(70, 300), (33, 7), (5, 40), (1000, 17)]:
        out = f"{shape[1]}x"
        text = _program(shape, element, "i64", direction, axis=0).replace(
            f"-> tensor<{out}i64> {{", f"-> (tensor<{out}{element}>, tensor<{out}i64>) {{").replace(
            f"return %r#1 : tensor<{out}i64>", f"return %r#0, %r#1 : tensor<{out}{element}>, tensor<{out}i64>")
        x = np.ascontiguousarray(_values(shape[::-1], element).T)     # special columns
        exe = xlac.compile(text, cpu=level)
        got, scalar = exe(x), xlac.compile(text, cpu=level, disable_passes=(_PASS,))(x)
        for a, b in zip(got, scalar):
            np.testing.assert_array_equal(np.asarray(a).view(np.uint8), np.asarray(b).view(np.uint8))
        np.testing.assert_array_equal(np.asarray(got[1]), _expected(x, direction, axis=0))


@pytest.mark.parametrize("level", _LEVELS)
@pytest.mark.parametrize("shape,element", [((64, 300), "f32"), ((3, 6, 47), "f32"), ((64, 300), "i32"),
                                           ((1056,), "f32")])
@pytest.mark.parametrize("axis", [-1, 0])
def test_vector_loops_no_remark(level, shape, element, axis):
    """The rows run as vector loops (a vector load, the lanes' fold as
    shuffles; at x86-64-v3 two pairs of 8 lanes), compiled for either level,
    and no "not scheduled" remark."""
    text = _program(shape, element, "i64", "GT", axis=axis)
    exe = xlac.compile(text, cpu=level, cache=False)
    lowered = exe.as_text("llvm")
    rows = axis == -1 or len(shape) == 1
    marker = "shufflevector" if rows else "vector<16xi64>"   # columns: no fold
    lanes = 8 if rows and level == "x86-64-v3" else 16
    assert f"vector<{lanes}x{element}>" in lowered and marker in lowered
    assert "not scheduled" not in exe.fusion_report()
    scalar = xlac.compile(text, cpu=level, cache=False, disable_passes=(_PASS,)).as_text("llvm")
    assert marker not in scalar


def test_float_value_result_read():
    """Where the program also returns the f32 maxima (whose zero's sign on a
    -0.0/+0.0 tie depends on the order the combiner saw them) the scalar
    loops stay: both results as they were, bit for bit."""
    text = _program((40, 70), "f32", "i64", "GT").replace(
        "-> tensor<40xi64> {", "-> (tensor<40xf32>, tensor<40xi64>) {").replace(
        "return %r#1 : tensor<40xi64>", "return %r#0, %r#1 : tensor<40xf32>, tensor<40xi64>")
    x = _values((40, 70), "f32")
    exe = xlac.compile(text, cache=False)
    assert "shufflevector" not in exe.as_text("llvm")
    got, scalar = exe(x), xlac.compile(text, disable_passes=(_PASS,))(x)
    for a, b in zip(got, scalar):
        np.testing.assert_array_equal(np.asarray(a).view(np.uint8), np.asarray(b).view(np.uint8))


def test_other_combiners_left_alone():
    """A reduce whose combiner is no ordered selection (a sum of the values
    with the index picked by comparison) keeps its scalar loops."""
    text = _program((8, 40), "f32", "i64", "GT").replace(
        "%v = stablehlo.select %p, %a, %b : tensor<i1>, tensor<f32>", "%v = stablehlo.add %a, %b : tensor<f32>")
    x = _values((8, 40), "f32")
    exe = xlac.compile(text, cache=False)
    assert "shufflevector" not in exe.as_text("llvm")
    np.testing.assert_array_equal(np.asarray(exe(x)),
                                  np.asarray(xlac.compile(text, disable_passes=(_PASS,))(x)))
