"""Constant folding agrees with the compiled code, op by op and type by type.

Each type gets two programs with one result per op: one takes the values as
arguments (compiled code computes them), one holds them as constants (the
ingest's folding may compute them). Both must give the same bits (a NaN's
sign aside: StableHLO leaves it open), and the compiled ones must agree with
the StableHLO interpreter. Edge values on purpose: zeros of both signs,
infinities, NaN, the integer range's ends, division by zero and MIN / -1
(compared between folding and code only: the interpreter itself dies on them).
"""

from __future__ import annotations

import numpy as np

import xlac
from xlac.dtypes import numpy_dtype
from xlac.reference.server import shared_server

INTS = ["i8", "ui8", "i16", "ui16", "i32", "ui32", "i64", "ui64"]
FLOATS = ["f16", "bf16", "f32", "f64"]
TYPES = ["i1", *INTS, *FLOATS]
BINARY = {"int": ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum",
                  "power", "and", "or", "xor", "shift_left", "shift_right_arithmetic",
                  "shift_right_logical"],
          "float": ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum",
                    "power", "atan2"],
          "bool": ["add", "multiply", "and", "or", "xor", "maximum", "minimum"]}
UNARY = {"int": ["negate", "abs", "sign", "not", "popcnt", "count_leading_zeros"],
         "float": ["negate", "abs", "sign", "exponential", "log", "sqrt", "rsqrt", "tanh", "floor",
                   "ceil", "round_nearest_even", "round_nearest_afz", "cosine", "sine",
                   "log_plus_one", "exponential_minus_one", "cbrt", "logistic"],
         "bool": ["not"]}
# where libm and the interpreter may differ in the last bits (ULP of the type)
TRANSCENDENTAL_ULP = 4


def _kind(element: str) -> str:
    return "bool" if element == "i1" else "int" if element in INTS else "float"


def _ops(element: str) -> list[tuple[int, str]]:
    kind = _kind(element)
    unary = [op for op in UNARY[kind]
             if not (element.startswith("ui") and op in ("negate", "abs", "sign"))]
    return [(2, op) for op in BINARY[kind]] + [(1, op) for op in unary]


def _values(element: str, hazards: bool) -> tuple[np.ndarray, np.ndarray]:
    dtype = numpy_dtype(element)
    if element == "i1":
        return (np.array([0, 1, 0, 1, 1, 0, 1, 1], bool), np.array([0, 0, 1, 1, 1, 1, 0, 1], bool))
    if element in INTS:
        info = np.iinfo(dtype)
        signed = info.min < 0
        a = [0, 1, info.max, info.min, 7, 100, -7 if signed else 3, 2]
        b = [3, 0 if hazards else 4, 2, -1 if hazards and signed else info.max, 1, -3 if signed else 5,
             info.min if signed else 9, 1]
        return np.array(a, dtype=object).astype(dtype), np.array(b, dtype=object).astype(dtype)
    a = np.array([0.0, -0.0, 1.0, -1.5, np.inf, np.nan, 3.25, 1e4]).astype(dtype)
    b = np.array([2.0, 3.0, 0.0, -np.inf, 0.5, 1.0, -2.5, 1e-2]).astype(dtype)
    return a, b


def _literal(element: str, values: np.ndarray) -> str:
    if element == "i1":
        return "[" + ", ".join("true" if v else "false" for v in values) + "]"
    if element in INTS:
        return "[" + ", ".join(str(int(v)) for v in values) + "]"
    bits = values.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[values.dtype.itemsize])
    digits = 2 * values.dtype.itemsize
    return "[" + ", ".join(f"0x{int(v):0{digits}X}" for v in bits) + "]"


def _program(cases: list[tuple[str, str, str]], values: dict[str, tuple[np.ndarray, ...]],
             constants: bool) -> str:
    """@main of every case (element, op line using %a/%b of that element, result
    type), its operands arguments (``constants``: constants of ``values``)."""
    head, params = [], []
    for element, operands in values.items():
        t = f"tensor<8x{element}>"
        for name, value in zip("ab", operands):
            if constants:
                head.append(f"%{name}_{element} = stablehlo.constant "
                            f"dense<{_literal(element, value)}> : {t}")
            else:
                params.append(f"%{name}_{element}: {t}")
    lines = [f"%r{i} = {line}" for i, (_, line, _) in enumerate(cases)]
    types = ", ".join(result for _, _, result in cases)
    return (f"func.func @main({', '.join(params)}) -> ({types}) {{\n  " + "\n  ".join(head + lines)
            + f"\n  return {', '.join(f'%r{i}' for i in range(len(cases)))} : {types}\n}}\n")


def _elementwise_cases(types) -> list[tuple[str, str, str]]:
    cases = []
    for element in types:
        t, a, b = f"tensor<8x{element}>", f"%a_{element}", f"%b_{element}"
        cases += [(element, f"stablehlo.{op} {a}{', ' + b if arity == 2 else ''} : {t}", t)
                  for arity, op in _ops(element)]
    return cases


def _conversion_cases() -> list[tuple[str, str, str]]:
    return [(element, f"stablehlo.convert %a_{element} : (tensor<8x{element}>) -> tensor<8x{other}>",
             f"tensor<8x{other}>") for element in TYPES for other in TYPES if other != element]


def _run_three_ways(cases, values, interpret=True):
    """The cases' results computed by code, folded, and by the interpreter."""
    inputs = [value for operands in values.values() for value in operands]
    program = _program(cases, values, constants=False)
    code = xlac.compile(program, cache=False)(*inputs)
    folded = xlac.compile(_program(cases, values, constants=True), cache=False)()
    interpreted = shared_server().run(program.encode(), inputs) if interpret else code
    return code, folded, interpreted


def _same_bits(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype.kind in "iub":
        return np.array_equal(got, want)
    g, w = got.astype(np.float64), want.astype(np.float64)
    nan = np.isnan(g)
    return (np.array_equal(nan, np.isnan(w)) and np.array_equal(g[~nan], w[~nan])
            and np.array_equal(np.signbit(g[~nan]), np.signbit(w[~nan])))


def _close(got, want, ulps: int) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if ulps == 0 or got.dtype.kind in "iub":
        return _same_bits(got, want)
    g, w = got.astype(np.float64), want.astype(np.float64)
    spacing = np.abs(np.spacing(want.astype(got.dtype)).astype(np.float64))
    finite = np.isfinite(w)
    return (_same_bits(got[~finite], want[~finite])
            and bool(np.all(np.abs(g[finite] - w[finite]) <= ulps * spacing[finite])))


def test_folding_agrees_with_the_code_and_the_interpreter():
    values = {element: _values(element, hazards=False) for element in TYPES}
    cases = _elementwise_cases(TYPES)
    ops = [op for element in TYPES for _, op in _ops(element)]
    for (_, line, _), op, got, fold, want in zip(cases, ops, *_run_three_ways(cases, values)):
        assert _same_bits(fold, got), f"{line}: folded {fold} but computed {got}"
        ulps = TRANSCENDENTAL_ULP if op in UNARY["float"][3:] else 0
        assert _close(got, want, ulps), f"{line}: {got}, the interpreter {want}"


def test_integer_division_corners_fold_as_they_run():
    """x / 0, x % 0 and MIN / -1 (XLA's answers: -1, x, MIN): the same folded."""
    signed = [element for element in INTS if not element.startswith("ui")]
    values = {element: _values(element, hazards=True) for element in signed}
    cases = _elementwise_cases(signed)
    code, folded, _ = _run_three_ways(cases, values, interpret=False)
    for (_, line, _), got, fold in zip(cases, code, folded):
        assert _same_bits(fold, got), f"{line}: folded {fold} but computed {got}"
    for element, first in zip(signed, range(0, len(cases), len(_ops(signed[0])))):
        divide, remainder = code[first + 3], code[first + 4]
        a = values[element][0]
        assert divide[1] == -1 and remainder[1] == a[1], element
        assert divide[3] == np.iinfo(a.dtype).min and remainder[3] == 0, element


def test_conversions_fold_as_they_run():
    values = {element: _values(element, hazards=False)[:1] for element in TYPES}
    cases = _conversion_cases()
    for (_, line, _), got, fold, want in zip(cases, *_run_three_ways(cases, values)):
        assert _same_bits(fold, got), f"{line}: folded {fold} but computed {got}"
        assert _same_bits(got, want), f"{line}: {got}, the interpreter {want}"
