"""Small StableHLO programs, one per (op, element type) pair, for the op x
type differential fuzz (test_op_type_fuzz.py).

Each case is a program text and its inputs (drawn from a seed, with the
corner values of the type mixed in). A pair the interpreter refuses (the
op does not take that type) is not a case for xlac either: the fuzz skips it.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from xlac.dtypes import numpy_dtype, tensor_type

INTS = ("i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64")
FLOAT8 = ("f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ", "f8E4M3", "f8E3M4")
FLOATS = FLOAT8 + ("bf16", "f16", "f32", "f64")
COMPLEX = ("complex<f32>", "complex<f64>")
TYPES = ("i1",) + INTS + FLOATS + COMPLEX

UNARY = ("abs", "negate", "sign", "not", "popcnt", "count_leading_zeros", "exponential",
         "exponential_minus_one", "log", "log_plus_one", "logistic", "sqrt", "rsqrt", "cbrt",
         "sine", "cosine", "tan", "tanh", "floor", "ceil", "round_nearest_even",
         "round_nearest_afz", "is_finite", "real", "imag")
BINARY = ("add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power",
          "atan2", "and", "or", "xor", "shift_left", "shift_right_logical",
          "shift_right_arithmetic")
OTHER = ("compare_EQ", "compare_LT", "select", "clamp", "convert_to_f32", "convert_from_f32",
         "convert_to_i32", "reduce_add", "reduce_max", "dot_general", "broadcast_in_dim",
         "transpose", "concatenate", "slice", "pad", "iota", "reduce_precision",
         "bitcast_convert", "reverse")
OPS = UNARY + BINARY + OTHER
# Ops whose results are not correctly rounded anywhere: compared within a few ulps.
TRANSCENDENTAL = {"exponential", "exponential_minus_one", "log", "log_plus_one", "logistic",
                  "sqrt", "rsqrt", "cbrt", "sine", "cosine", "tan", "tanh", "power", "atan2",
                  "divide", "remainder", "dot_general", "reduce_add"}
SHAPE = (2, 3)


@dataclass(frozen=True)
class Case:
    op: str
    element: str
    text: str
    inputs: tuple[np.ndarray, ...]


def _real_part(element: str) -> str:
    return element[len("complex<"):-1] if element.startswith("complex") else element


def _result_element(op: str, element: str) -> str:
    if op in ("is_finite",) or op.startswith("compare"):
        return "i1"
    if op in ("real", "imag", "abs") and element.startswith("complex"):
        return _real_part(element)
    return element


def _int_of_width(element: str) -> str:
    width = numpy_dtype(element).itemsize * 8
    return f"i{width}"


def program(op: str, element: str) -> tuple[str, list[tuple[tuple[int, ...], str]]]:
    """The text of @main applying ``op`` to ``element`` values, and its argument types."""
    t = tensor_type(SHAPE, element)
    args = [(SHAPE, "f32" if op == "convert_from_f32" else element)]
    if op in UNARY:
        r = tensor_type(SHAPE, _result_element(op, element))
        body, result = f"stablehlo.{op} %a0 : ({t}) -> {r}", r
    elif op in BINARY:
        args.append((SHAPE, element))
        body, result = f"stablehlo.{op} %a0, %a1 : {t}", t
    else:
        body, result, extra = _other(op, element, t)
        args += extra
    params = ", ".join(f"%a{i}: {tensor_type(s, e)}" for i, (s, e) in enumerate(args))
    *prelude, last = body.split("\n")   # lines before the result's own op
    lines = "".join(f"  {line}\n" for line in prelude)
    text = (f"func.func @main({params}) -> {result} {{\n{lines}  %r = {last}\n"
            f"  func.return %r : {result}\n}}\n")
    return text, args


def _other(op: str, element: str, t: str):
    m, n = SHAPE
    if op.startswith("compare_"):
        kind = ("FLOAT" if element in FLOATS or element.startswith("complex")
                else "UNSIGNED" if element.startswith("ui") or element == "i1" else "SIGNED")
        r = tensor_type(SHAPE, "i1")
        return (f"stablehlo.compare {op[8:]}, %a0, %a1, {kind} : ({t}, {t}) -> {r}", r,
                [(SHAPE, element)])
    if op == "select":
        p = tensor_type(SHAPE, "i1")
        return (f"stablehlo.select %a1, %a0, %a2 : {p}, {t}", t, [(SHAPE, "i1"), (SHAPE, element)])
    if op == "clamp":
        return f"stablehlo.clamp %a1, %a0, %a2 : {t}", t, [(SHAPE, element), (SHAPE, element)]
    if op.startswith("convert_to_"):
        r = tensor_type(SHAPE, op[len("convert_to_"):])
        return f"stablehlo.convert %a0 : ({t}) -> {r}", r, []
    if op == "convert_from_f32":
        return _convert_from_f32(element, t)
    if op.startswith("reduce_") and op != "reduce_precision":
        return _reduce(op[len("reduce_"):], element, t)
    if op == "dot_general":
        b = tensor_type((n, m), element)
        r = tensor_type((m, m), element)
        return (f"stablehlo.dot_general %a0, %a1, contracting_dims = [1] x [0] : ({t}, {b}) -> {r}",
                r, [((n, m), element)])
    if op == "broadcast_in_dim":
        r = tensor_type((4, m, n), element)
        return f"stablehlo.broadcast_in_dim %a0, dims = [1, 2] : ({t}) -> {r}", r, []
    if op == "transpose":
        r = tensor_type((n, m), element)
        return f"stablehlo.transpose %a0, dims = [1, 0] : ({t}) -> {r}", r, []
    if op == "concatenate":
        r = tensor_type((m, 2 * n), element)
        return (f"stablehlo.concatenate %a0, %a1, dim = 1 : ({t}, {t}) -> {r}", r,
                [(SHAPE, element)])
    if op == "slice":
        r = tensor_type((1, n - 1), element)
        return f"stablehlo.slice %a0 [1:2, 1:{n}] : ({t}) -> {r}", r, []
    if op == "pad":
        s = tensor_type((), element)
        r = tensor_type((m + 1, 2 * n + 1), element)
        return (f"stablehlo.pad %a0, %a1, low = [1, 0], high = [0, 2], interior = [0, 1] : "
                f"({t}, {s}) -> {r}", r, [((), element)])
    if op == "iota":
        return f"%i = stablehlo.iota dim = 1 : {t}\nstablehlo.add %a0, %i : {t}", t, []
    if op == "reverse":
        return f"stablehlo.reverse %a0, dims = [1] : {t}", t, []
    if op == "reduce_precision":
        return f"stablehlo.reduce_precision %a0, format = e2m1 : {t}", t, []
    if op == "bitcast_convert":
        r = tensor_type(SHAPE, _int_of_width(_real_part(element)) if element != "i1" else "i1")
        if element.startswith("complex"):
            r = tensor_type(SHAPE, element)
        return f"stablehlo.bitcast_convert %a0 : ({t}) -> {r}", r, []
    raise ValueError(op)


def _convert_from_f32(element: str, t: str):
    f = tensor_type(SHAPE, "f32")
    return f"stablehlo.convert %a0 : ({f}) -> {t}", t, []   # argument 0 is f32 (see program)


def _reduce(kind: str, element: str, t: str):
    s = tensor_type((), element)
    r = tensor_type((SHAPE[0],), element)
    op = {"add": "add", "max": "maximum"}[kind]
    body = (f'stablehlo.reduce(%a0 init: %a1) applies stablehlo.{op} across dimensions = [1] : '
            f"({t}, {s}) -> {r}")
    return body, r, [((), element)]


def case(op: str, element: str, seed: int) -> Case:
    text, args = program(op, element)
    rng = np.random.default_rng(seed)
    inputs = tuple(values(rng, shape, e, op, k) for k, (shape, e) in enumerate(args))
    return Case(op, element, text, inputs)


def values(rng, shape, element: str, op: str, k: int = 0) -> np.ndarray:
    """Random values of ``element`` with the type's corners mixed in
    (booleans: argument ``k``'s bits, so that two arguments meet in all four ways)."""
    dtype = numpy_dtype(element)
    if element == "i1":
        size = int(np.prod(shape))
        return ((np.arange(size) >> k) % 2 == 1).reshape(shape)
    if element.startswith("complex"):   # finite parts: the interpreter's results come back
        value = np.empty(shape, dtype)     # as re + 1j * im, where an infinite im makes re NaN
        value.real, value.imag = (rng.standard_normal(shape) * 3 for _ in range(2))
        return value
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        corners = [info.min, info.max, 0, 1]
        if op.startswith("shift"):
            corners = [0, 1, info.bits - 1, info.bits, info.bits + 1]
        small = rng.integers(max(info.min, -9), 10, size=shape, endpoint=True)
        pick = rng.choice(np.array(corners, dtype=dtype), size=shape)
        return np.where(rng.random(shape) < 0.3, pick, small.astype(dtype)).astype(dtype)
    finfo = ml_dtypes.finfo(dtype)
    corners = [0.0, -0.0, float(finfo.max), float(finfo.tiny), np.inf, -np.inf, np.nan]
    normal = rng.standard_normal(shape) * 3
    pick = rng.choice(np.array(corners), size=shape)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(rng.random(shape) < 0.3, pick, normal).astype(dtype)


def all_pairs() -> list[tuple[str, str]]:
    return [(op, element) for op in OPS for element in TYPES]
