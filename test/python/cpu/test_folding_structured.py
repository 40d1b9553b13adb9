"""Constant folding agrees with the compiled code beyond elementwise ops (issue 39,
item 6): compare, select, clamp, a reduce, a cumsum as reduce_window (window 8,
padding 7) and a dot, in booleans, narrow integers, narrow floats and f8. One
program takes the operands as arguments (code computes), one holds them as
constants (the ingest may fold): the same bits. test_folding.py covers the
elementwise ops and converts; this is the audit's grid of the rest. Today
compare and some selects fold; reduce, reduce_window, dot_general and clamp
are left to the code (so they agree by construction): the test is the guard
for the day a folder for them is added."""

from __future__ import annotations

import numpy as np

import xlac
from xlac.dtypes import numpy_dtype

TYPES = ["i1", "ui8", "bf16", "f8E4M3FN", "f8E5M2"]     # f16, f32, i32: the same code paths


def _values(element: str) -> tuple[np.ndarray, np.ndarray]:
    if element == "i1":
        return np.array([1, 1, 0, 1, 1, 0, 1, 1], bool), np.array([1, 0, 1, 1, 1, 1, 0, 1], bool)
    dtype = numpy_dtype(element)
    if dtype.kind in "iu":
        return np.array([1, 2, 100, 3, 7, 100, 3, 2]).astype(dtype), np.array([3, 4, 2, 5, 1, 3, 9, 1]).astype(dtype)
    return (np.array([0.0, -0.0, 1.0, -1.5, 0.3, 0.7, 3.25, 1.1]).astype(dtype),
            np.array([2.0, 3.0, 0.0, -4.0, 0.5, 1.0, -2.5, 0.1]).astype(dtype))


def _literal(values: np.ndarray) -> str:
    if values.dtype == bool:
        return "[" + ", ".join("true" if v else "false" for v in values) + "]"
    if values.dtype.kind in "iu":
        return "[" + ", ".join(str(int(v)) for v in values) + "]"
    width = values.dtype.itemsize
    bits = values.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[width])
    return "[" + ", ".join(f"0x{int(v):0{2 * width}X}" for v in bits) + "]"


def _ops(e: str) -> list[tuple[str, str]]:
    """(op line on %a_e / %b_e, result type) of each case of ``e``."""
    t, s, a, b = f"tensor<8x{e}>", f"tensor<{e}>", f"%a_{e}", f"%b_{e}"
    order = "FLOAT" if e[0] in "fb" else "UNSIGNED" if e[0] in "ui" and e != "i32" else "SIGNED"
    body = (f"({{\n  ^bb0(%x: {s}, %y: {s}):\n    %q = stablehlo.add %x, %y : {s}\n"
            f"    stablehlo.return %q : {s}\n  }})")
    ops = [(f"stablehlo.compare LT, {a}, {b}, {order} : ({t}, {t}) -> tensor<8xi1>", "tensor<8xi1>"),
           (f"stablehlo.select %p, {a}, {b} : tensor<8xi1>, {t}", t),
           (f"stablehlo.reduce({a} init: %z_{e}) applies stablehlo.add across dimensions = [0] : "
            f"({t}, {s}) -> {s}", s),
           (f"\"stablehlo.reduce_window\"({a}, %z_{e}) <{{window_dimensions = array<i64: 8>, "
            f"padding = dense<[[7, 0]]> : tensor<1x2xi64>}}> {body} : ({t}, {s}) -> {t}", t),
           (f"stablehlo.dot_general {a}, {b}, contracting_dims = [0] x [0] : ({t}, {t}) -> {s}", s)]
    return ops + ([] if e == "i1" else [(f"stablehlo.clamp {b}, {a}, {b} : {t}", t)])


def _program(constants: bool) -> str:
    head = ["%p = stablehlo.constant dense<[true, false, true, true, false, false, true, false]> : tensor<8xi1>"]
    params = []
    for e in TYPES:
        zero = "false" if e == "i1" else "0.0" if e[0] in "fb" else "0"
        head.append(f"%z_{e} = stablehlo.constant dense<{zero}> : tensor<{e}>")
        for name, value in zip("ab", _values(e)):
            if constants:
                head.append(f"%{name}_{e} = stablehlo.constant dense<{_literal(value)}> : tensor<8x{e}>")
            else:
                params.append(f"%{name}_{e}: tensor<8x{e}>")
    cases = [case for e in TYPES for case in _ops(e)]
    lines = [f"%r{i} = {line}" for i, (line, _) in enumerate(cases)]
    types = ", ".join(result for _, result in cases)
    return (f"func.func @main({', '.join(params)}) -> ({types}) {{\n  " + "\n  ".join(head + lines)
            + f"\n  return {', '.join(f'%r{i}' for i in range(len(cases)))} : {types}\n}}\n")


def test_structured_ops_fold_as_they_run():
    inputs = [value for e in TYPES for value in _values(e)]
    code = xlac.compile(_program(constants=False), cpu="x86-64-v3", cache=False)(*inputs)
    folded = xlac.compile(_program(constants=True), cpu="x86-64-v3", cache=False)()
    lines = [line for e in TYPES for line, _ in _ops(e)]
    for line, got, fold in zip(lines, code, folded):
        got, fold = np.asarray(got), np.asarray(fold)
        assert got.dtype == fold.dtype and got.tobytes() == fold.tobytes(), \
            f"{line}: folded {fold} but computed {got}"
