"""Corners the conformance programs found wrong or refused, each against the
StableHLO interpreter: arithmetic on i1, complex cbrt, f8 dots and
conversions, integer power with large exponents, reduce_precision to no
mantissa bits. Each test is one program with one result per case: one
compile each."""

from __future__ import annotations

import numpy as np
import pytest

from xlac.dtypes import numpy_dtype
from xlac.reference.server import ReferenceServer

F8 = ("f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ", "f8E4M3", "f8E3M4")


@pytest.fixture(scope="module")
def children():
    with ReferenceServer(timeout=60) as reference, \
            ReferenceServer(timeout=120, backend="xlac") as compiler:
        yield reference, compiler


def run_both(children, args: list[tuple[str, np.ndarray]], lines: list[str],
             results: list[tuple[str, str]]):
    """xlac's and the interpreter's results of @main(args) {lines} -> results (name, type)."""
    params = ", ".join(f"%{name}: {t}" for (name, t), _ in zip(args, args))
    text = (f"func.func @main({params}) -> ({', '.join(t for _, t in results)}) {{\n  "
            + "\n  ".join(lines) + f"\n  return {', '.join(n for n, _ in results)} : "
            + ", ".join(t for _, t in results) + "\n}\n")
    inputs = [value for _, value in args.values()] if isinstance(args, dict) else []
    reference, compiler = children
    return compiler.run(text.encode(), inputs), reference.run(text.encode(), inputs)


def program(params: list[tuple[str, str]], lines: list[str], results: list[tuple[str, str]]) -> str:
    return (f"func.func @main({', '.join(f'%{n}: {t}' for n, t in params)}) -> "
            f"({', '.join(t for _, t in results)}) {{\n  " + "\n  ".join(lines)
            + f"\n  return {', '.join(n for n, _ in results)} : "
            + ", ".join(t for _, t in results) + "\n}\n")


def both(children, text: str, *inputs):
    reference, compiler = children
    return (compiler.run(text.encode(), list(inputs)), reference.run(text.encode(), list(inputs)))


def test_boolean_arithmetic_and_sums(children):
    t = "tensor<4xi1>"
    ops = ["add", "multiply", "maximum", "minimum"]
    lines = [f"%{op} = stablehlo.{op} %a, %b : {t}" for op in ops]
    lines.append("%any = stablehlo.reduce(%m init: %z) applies stablehlo.add across dimensions = [1]"
                 " : (tensor<2x3xi1>, tensor<i1>) -> tensor<2xi1>")
    text = program([("a", t), ("b", t), ("m", "tensor<2x3xi1>"), ("z", "tensor<i1>")], lines,
                   [(f"%{op}", t) for op in ops] + [("%any", "tensor<2xi1>")])
    a, b = np.array([0, 0, 1, 1], bool), np.array([0, 1, 0, 1], bool)
    m = np.array([[1, 0, 1], [0, 0, 0]], bool)
    got, want = both(children, text, a, b, m, np.array(False))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert got[0].tolist() == [False, True, True, True] and got[4].tolist() == [True, False]


def test_boolean_constants_fold_as_booleans(children):
    """The same arithmetic with the values as constants: folded before it is
    compiled (true + true folded as an xor gave false)."""
    t = "tensor<4xi1>"
    lines = ["%a = stablehlo.constant dense<[false, false, true, true]> : tensor<4xi1>",
             "%b = stablehlo.constant dense<[false, true, false, true]> : tensor<4xi1>",
             f"%add = stablehlo.add %a, %b : {t}", f"%multiply = stablehlo.multiply %a, %b : {t}"]
    got, want = both(children, program([], lines, [("%add", t), ("%multiply", t)]))
    assert [g.tolist() for g in got] == [w.tolist() for w in want] == \
        [[False, True, True, True], [False, False, False, True]]


@pytest.mark.parametrize("cpu", ["host", "x86-64-v2"])      # v2: f16 too without F16C, in f32
@pytest.mark.parametrize("element", ["bf16", "f16"])
def test_narrow_float_chains_round_after_every_op(children, element, cpu):
    """(1 + u) + u, u half an ULP of 1: each sum rounds back to 1 in the
    element type, as StableHLO and XLA round every op's result; done in f32
    and rounded once at the end it came out 1 + 2u."""
    import xlac
    t = f"tensor<3x{element}>"
    lines = [f"%s = stablehlo.add %a, %b : {t}", f"%r = stablehlo.add %s, %b : {t}",
             f"%m = stablehlo.multiply %a, %c : {t}", f"%q = stablehlo.multiply %m, %c : {t}"]
    text = program([("a", t), ("b", t), ("c", t)], lines, [("%r", t), ("%q", t)])
    dtype = numpy_dtype(element)
    half_ulp = {"bf16": 2.0 ** -8, "f16": 2.0 ** -11}[element]
    a = np.array([1, 2, -1], dtype)
    b = np.full(3, half_ulp, dtype) * np.array([1, 2, -1]).astype(dtype)
    c = np.full(3, 1 + 2 * half_ulp - half_ulp / 2, np.float32).astype(dtype)
    got = xlac.compile(text, cache=False, cpu=cpu)(a, b, c)
    want = children[0].run(text.encode(), [a, b, c])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert got[0].tolist() == a.tolist()


def test_complex_cbrt_is_the_principal_root(children):
    results = []
    for part in ("f32", "f64"):
        results.append((f"%{part}", f"tensor<5xcomplex<{part}>>"))
    lines = [f"%{p} = stablehlo.cbrt %z{p} : {t}" for (n, t), p in zip(results, ("f32", "f64"))]
    text = program([("zf32", results[0][1]), ("zf64", results[1][1])], lines, results)
    z = np.array([8, -8, -1 + 2j, 1j, 0])
    got, want = both(children, text, z.astype(np.complex64), z.astype(np.complex128))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=4 * np.finfo(g.real.dtype).eps, atol=1e-30)


def test_f8_dot_general(children):
    """f8 dots sum in f32 and round once, as XLA's CPU backend (issue 39;
    jax's f8 dot_general gives these bits): the interpreter rounds every
    term to f8, so it is the shapes and the f8 rounding it is compared on."""
    params, lines, results, inputs = [], [], [], []
    rng = np.random.default_rng(0)
    for k, element in enumerate(F8):
        a, b, r = (f"tensor<3x5x{element}>", f"tensor<5x4x{element}>", f"tensor<3x4x{element}>")
        params += [(f"a{k}", a), (f"b{k}", b)]
        lines.append(f"%d{k} = stablehlo.dot_general %a{k}, %b{k}, contracting_dims = [1] x [0] "
                     f": ({a}, {b}) -> {r}")
        results.append((f"%d{k}", r))
        inputs += [(rng.standard_normal(s) * 2).astype(numpy_dtype(element)) for s in ((3, 5), (5, 4))]
    got, interpreted = both(children, program(params, lines, results), *inputs)
    for k, (element, g, w) in enumerate(zip(F8, got, interpreted)):
        a, b = (x.astype(np.float64) for x in inputs[2 * k:2 * k + 2])
        once = (a @ b).astype(np.float32).astype(w.dtype)
        np.testing.assert_array_equal(g.view(np.uint8), once.view(np.uint8), err_msg=element)


def test_every_f32_to_f8_rounding(children):
    """Every f8 value, the midpoints between neighbours (ties to even) and
    just beside them, past the largest finite value, NaN and inf; and back."""
    params, lines, results, inputs = [], [], [], []
    for k, element in enumerate(F8):
        values = np.arange(256, dtype=np.uint8).view(numpy_dtype(element)).astype(np.float32)
        finite = np.unique(values[np.isfinite(values)])
        mids = (finite[:-1] + finite[1:]) / 2
        x = np.concatenate([values, mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf),
                            [1e30, -1e30, np.inf, -np.inf, np.nan, 1e-30, -1e-30]]).astype(np.float32)
        t, r = f"tensor<{x.size}xf32>", f"tensor<{x.size}x{element}>"
        params.append((f"x{k}", t))
        lines += [f"%c{k} = stablehlo.convert %x{k} : ({t}) -> {r}",
                  f"%w{k} = stablehlo.convert %c{k} : ({r}) -> {t}"]
        results += [(f"%c{k}", r), (f"%w{k}", t)]
        inputs.append(x)
    got, want = both(children, program(params, lines, results), *inputs)
    for k, element in enumerate(F8):
        for g, w in zip(got[2 * k:2 * k + 2], want[2 * k:2 * k + 2]):
            wide_g, wide_w = g.astype(np.float32), w.astype(np.float32)
            same = (g.tobytes() == w.tobytes()) or bool(np.all(
                (wide_g == wide_w) & (np.signbit(wide_g) == np.signbit(wide_w))
                | (np.isnan(wide_g) & np.isnan(wide_w))))
            assert same, element


def test_integer_power_with_any_exponent(children):
    params, lines, results, inputs = [], [], [], []
    for k, element in enumerate(["ui8", "i16", "ui32", "i64"]):
        dtype = numpy_dtype(element)
        info = np.iinfo(dtype)
        b = np.array([5, 3, 2, 7, 1, 0, 9, 5], dtype)
        e = np.array([info.max, info.max - 1, 70, 13, info.max, 3, 1, 0], dtype)
        if info.min < 0:
            b[4], e[4] = -1, -3
        t = f"tensor<8x{element}>"
        params += [(f"b{k}", t), (f"e{k}", t)]
        lines.append(f"%p{k} = stablehlo.power %b{k}, %e{k} : {t}")
        results.append((f"%p{k}", t))
        inputs += [b, e]
    got, want = both(children, program(params, lines, results), *inputs)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_reduce_precision_corners(children):
    x = np.array([np.nan, -np.nan, np.inf, 1.5, 3.0, 0.7, -2.5, 1e-30, 0.0, -0.0, 3e38],
                 np.float32)
    t = f"tensor<{x.size}xf32>"
    formats = ["e5m0", "e1m0", "e8m0", "e2m1", "e11m0", "e1m1"]
    lines = [f"%{f} = stablehlo.reduce_precision %x, format = {f} : {t}" for f in formats]
    got, want = both(children, program([("x", t)], lines, [(f"%{f}", t) for f in formats]), x)
    for fmt, g, w in zip(formats, got, want):
        nan = np.isnan(w)
        np.testing.assert_array_equal(np.isnan(g), nan, err_msg=fmt)
        np.testing.assert_array_equal(g[~nan].view(np.uint32), w[~nan].view(np.uint32), err_msg=fmt)
    assert np.isposinf(got[0][:2]).all()


