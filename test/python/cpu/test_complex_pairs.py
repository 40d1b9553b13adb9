"""Complex tensors moved as pairs of their parts (xla-complex-as-pairs): sums,
scans, adds and data movement of c64/c128 on the f32/f64 vector schedules, at
SSE4.2 and AVX2 (AVX-512: compiled and scheduled, run where the host can),
against the StableHLO reference interpreter; a program with another complex
op keeps its complex tensors."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels
from xlac.reference.server import shared_server

LEVELS = ("x86-64-v2", "x86-64-v3", "x86-64-v4")
_TYPES = {"complex<f32>": (np.complex64, "f32"), "complex<f64>": (np.complex128, "f64")}
ROWS, COLS = 37, 300                    # remainders in both dims
SCAN_COLS = 44                          # the interpreter adds a whole window per element


def _sum(c: str, dim: int) -> str:
    t, out = f"tensor<{ROWS}x{COLS}x{c}>", f"tensor<{(COLS, ROWS)[dim]}x{c}>"
    return f"""func.func @main(%a: {t}) -> {out} {{
  %z = stablehlo.constant dense<(0.0, 0.0)> : tensor<{c}>
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [{dim}]
      : ({t}, tensor<{c}>) -> {out}
  return %0 : {out}
}}"""


def _cumsum(c: str) -> str:
    """A scan along the rows, as jnp.cumsum writes it (a private function called)."""
    t = f"tensor<{ROWS}x{SCAN_COLS}x{c}>"
    return f"""func.func public @main(%a: {t}) -> {t} {{
  %0 = call @cumsum(%a) : ({t}) -> {t}
  return %0 : {t}
}}
func.func private @cumsum(%a: {t}) -> {t} {{
  %z = stablehlo.constant dense<(0.0, 0.0)> : tensor<{c}>
  %0 = "stablehlo.reduce_window"(%a, %z) <{{padding = dense<[[0, 0], [{SCAN_COLS - 1}, 0]]> : tensor<2x2xi64>,
      window_dimensions = array<i64: 1, {SCAN_COLS}>}}> ({{
  ^bb0(%x: tensor<{c}>, %y: tensor<{c}>):
    %s = stablehlo.add %x, %y : tensor<{c}>
    stablehlo.return %s : tensor<{c}>
  }}) : ({t}, tensor<{c}>) -> {t}
  return %0 : {t}
}}"""


def _moves(c: str) -> str:
    """Adds, negations and movement; real/imag/complex; a convert to the other
    width. A c64 transpose keeps the program complex (8-byte scalars move as
    fast): c128 only."""
    part = _TYPES[c][1]
    other = "complex<f64>" if c == "complex<f32>" else "complex<f32>"
    t, tt, p = f"tensor<{ROWS}x{COLS}x{c}>", f"tensor<{COLS}x{ROWS}x{c}>", f"tensor<{ROWS}x{COLS}x{part}>"
    row, padded = f"tensor<{COLS}x{c}>", f"tensor<{ROWS + 2}x{COLS + 8}x{c}>"
    read = f"  %bt = stablehlo.transpose %b, dims = [1, 0] : ({tt}) -> {t}" if c == "complex<f64>" \
        else f"  %bt = stablehlo.negate %b : {t}"
    b = tt if c == "complex<f64>" else t
    return f"""func.func @main(%a: {t}, %b: {b}, %r: {row}) -> ({padded}, tensor<{ROWS}x{COLS}x{other}>) {{
{read}
  %rb = stablehlo.broadcast_in_dim %r, dims = [1] : ({row}) -> {t}
  %s = stablehlo.add %a, %bt : {t}
  %d = stablehlo.subtract %s, %rb : {t}
  %n = stablehlo.negate %d : {t}
  %re = stablehlo.real %n : ({t}) -> {p}
  %im = stablehlo.imag %a : ({t}) -> {p}
  %m = stablehlo.multiply %re, %im : {p}
  %c = stablehlo.complex %m, %re : {t}
  %one = stablehlo.constant dense<(1.5, -2.0)> : {t}
  %e = stablehlo.add %c, %one : {t}
  %z = stablehlo.constant dense<(0.0, 0.0)> : tensor<{c}>
  %pd = stablehlo.pad %e, %z, low = [1, 4], high = [1, 4], interior = [0, 0] : ({t}, tensor<{c}>) -> {padded}
  %w = stablehlo.convert %n : ({t}) -> tensor<{ROWS}x{COLS}x{other}>
  return %pd, %w : {padded}, tensor<{ROWS}x{COLS}x{other}>
}}"""


def _complex(shape, dtype, rng) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _inputs(kind: str, c: str) -> list[np.ndarray]:
    rng, dtype = np.random.default_rng(1), _TYPES[c][0]
    if kind == "moves":
        b = (COLS, ROWS) if c == "complex<f64>" else (ROWS, COLS)
        return [_complex((ROWS, COLS), dtype, rng), _complex(b, dtype, rng),
                _complex((COLS,), dtype, rng)]
    return [_complex((ROWS, SCAN_COLS if kind == "cumsum" else COLS), dtype, rng)]


_PROGRAMS = {"sum_rows": lambda c: _sum(c, 1), "sum_columns": lambda c: _sum(c, 0),
             "cumsum": _cumsum, "moves": _moves}


@pytest.mark.parametrize("cpu", LEVELS)
@pytest.mark.parametrize("element", sorted(_TYPES))
@pytest.mark.parametrize("kind", sorted(_PROGRAMS))
def test_complex_pairs_are_vectorized_and_match_the_interpreter(kind, element, cpu):
    text = _PROGRAMS[kind](element)
    exe = xlac.compile(text, cache=False, cpu=cpu)
    assert "not scheduled:" not in exe.fusion_report(), exe.fusion_report()
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this CPU cannot run {cpu} code (compiled and scheduled: checked)")
    inputs = _inputs(kind, element)
    got = exe(*inputs)
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    want = shared_server().run(text.encode(), inputs)
    assert [g.dtype for g in got] == [np.asarray(w).dtype for w in want]
    # sums in lanes add in another order than the interpreter's one by one
    tolerance = 1e-5 if element == "complex<f32>" else 1e-13
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=tolerance, atol=tolerance * np.abs(w).max())


def _product_sum(c: str, dim: int, rows: int = 64, cols: int = 128) -> str:
    """``jnp.sum(a * b, dim)``: a complex multiply summed over one dim."""
    t, out = f"tensor<{rows}x{cols}x{c}>", f"tensor<{(cols, rows)[dim]}x{c}>"
    return f"""func.func @main(%a: {t}, %b: {t}) -> {out} {{
  %p = stablehlo.multiply %a, %b : {t}
  %z = stablehlo.constant dense<(0.0, 0.0)> : tensor<{c}>
  %0 = stablehlo.reduce(%p init: %z) applies stablehlo.add across dimensions = [{dim}]
      : ({t}, tensor<{c}>) -> {out}
  return %0 : {out}
}}"""


def _linalg_text(text: str, cpu: str) -> str:
    from xlac.compiler import resolve_options
    from xlac.pipeline.stage_texts import StageTexts
    from xlac.targets import get_target
    stages = StageTexts(get_target("cpu"), text.encode(), "product.mlir", "main",
                        resolve_options(None, cpu=cpu))
    module, _ = stages._run_until("linalg")
    return str(module)


@pytest.mark.parametrize("cpu", LEVELS)
@pytest.mark.parametrize("element", sorted(_TYPES))
def test_a_product_summed_down_columns_is_pairs(element, cpu):
    """`jnp.sum(a * b, 0)`: the multiply as the parts' (ac - bd, ad + bc) and
    the column sum on the f32/f64 schedules (as complex: a scalar loop walking
    the rows, c64 512x1024 5x XLA), agreeing with the interpreter's multiply."""
    text = _product_sum(element, 0, ROWS, COLS)
    assert f"{ROWS}x{COLS}x2x{_TYPES[element][1]}" in _linalg_text(text, cpu)
    exe = xlac.compile(text, cache=False, cpu=cpu)
    assert "not scheduled:" not in exe.fusion_report(), exe.fusion_report()
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this CPU cannot run {cpu} code (compiled and scheduled: checked)")
    rng = np.random.default_rng(4)
    inputs = [_complex((ROWS, COLS), _TYPES[element][0], rng) for _ in range(2)]
    (want,) = shared_server().run(text.encode(), inputs)
    tolerance = 1e-5 if element == "complex<f32>" else 1e-13
    np.testing.assert_allclose(exe(*inputs), want, rtol=tolerance,
                               atol=tolerance * np.abs(want).max())


def test_a_program_with_another_complex_op_keeps_complex_tensors():
    """A complex multiply summed along its rows has no pair form (the complex
    loop is the faster there): the whole program stays complex (joining the
    pairs back for it would be a scalar loop of its own)."""
    text = _product_sum("complex<f32>", 1)
    linalg = _linalg_text(text, "x86-64-v3")
    assert "64x128xcomplex<f32>" in linalg and "x2xf32" not in linalg
    rng = np.random.default_rng(0)
    x, y = (_complex((64, 128), np.complex64, rng) for _ in range(2))
    got = xlac.compile(text, cache=False)(x, y)
    np.testing.assert_allclose(got, (x * y).sum(1), rtol=1e-5)



def _scans(ts: list[str]) -> str:
    """One row scan per argument (one module: one compile)."""
    window = f"""padding = dense<[[0, 0], [{COLS - 1}, 0]]> : tensor<2x2xi64>,
      window_dimensions = array<i64: 1, {COLS}>"""
    lines = []
    for k, t in enumerate(ts):
        scalar = t.split(f"{COLS}x", 1)[1][:-1]
        zero = "(0.0, 0.0)" if "complex" in t else "0.0"
        lines.append(f"""  %z{k} = stablehlo.constant dense<{zero}> : tensor<{scalar}>
  %s{k} = "stablehlo.reduce_window"(%a{k}, %z{k}) <{{{window}}}> ({{
  ^bb0(%x: tensor<{scalar}>, %y: tensor<{scalar}>):
    %s = stablehlo.add %x, %y : tensor<{scalar}>
    stablehlo.return %s : tensor<{scalar}>
  }}) : ({t}, tensor<{scalar}>) -> {t}""")
    args = ", ".join(f"%a{k}: {t}" for k, t in enumerate(ts))
    outs = ", ".join(f"%s{k}" for k in range(len(ts)))
    return (f"func.func @main({args}) -> ({', '.join(ts)}) {{\n" + "\n".join(lines)
            + f"\n  return {outs} : {', '.join(ts)}\n}}")


def test_a_complex_cumsum_adds_as_its_parts_real_cumsums():
    """A c128 scan along the rows runs as rows of f64 lanes (the pairs' dim
    merged into the rows: its steps no longer kernels of 2-part rows), each
    part combined in the order of an f64 scan: bit for bit the f64 cumsums of
    its real and imaginary parts, compiled in the same module."""
    c, f = f"tensor<{ROWS}x{COLS}xcomplex<f64>>", f"tensor<{ROWS}x{COLS}xf64>"
    x = _complex((ROWS, COLS), np.complex128, np.random.default_rng(5))
    got, real, imag = xlac.compile(_scans([c, f, f]), cache=False, cpu="x86-64-v3")(
        x, x.real.copy(), x.imag.copy())
    assert np.array_equal(got.real.view(np.int64), real.view(np.int64))
    assert np.array_equal(got.imag.view(np.int64), imag.view(np.int64))


@pytest.mark.parametrize("element", sorted(_TYPES))
def test_a_select_on_compares_of_the_parts_compiles_and_matches(element):
    """Complex max (a select on compares of the real parts, as
    xla-expand-complex-ops writes it) stays complex: as pairs its kernel
    failed LLVM translation (conformance max/min/cos of complex, 20x20)."""
    t = f"tensor<20x20x{element}>"
    p = f"tensor<20x20x{_TYPES[element][1]}>"
    text = f"""func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %ra = stablehlo.real %a : ({t}) -> {p}
  %rb = stablehlo.real %b : ({t}) -> {p}
  %gt = stablehlo.compare GT, %ra, %rb, FLOAT : ({p}, {p}) -> tensor<20x20xi1>
  %0 = stablehlo.select %gt, %a, %b : tensor<20x20xi1>, {t}
  return %0 : {t}
}}"""
    rng = np.random.default_rng(7)
    inputs = [_complex((20, 20), _TYPES[element][0], rng) for _ in range(2)]
    got = xlac.compile(text, cache=False, cpu="x86-64-v3")(*inputs)
    (want,) = shared_server().run(text.encode(), inputs)
    assert np.array_equal(got, want)


def _picked_c64(rows: int = ROWS, cols: int = COLS) -> str:
    """jnp.where(p, x.T, y) (select in a called function, as jax writes it) and
    t[i] (a gather of rows), c64: whole numbers moved, never their parts."""
    t, tt, p = f"tensor<{rows}x{cols}xcomplex<f32>>", f"tensor<{cols}x{rows}xcomplex<f32>>", \
        f"tensor<{rows}x{cols}xi1>"
    out = f"tensor<16x{cols}xcomplex<f32>>"
    return f"""func.func @main(%p: {p}, %a: {tt}, %b: {t}, %i: tensor<16x1xi32>) -> ({t}, {out}) {{
  %t = stablehlo.transpose %a, dims = [1, 0] : ({tt}) -> {t}
  %s = call @where(%p, %t, %b) : ({p}, {t}, {t}) -> {t}
  %g = "stablehlo.gather"(%b, %i) <{{dimension_numbers = #stablehlo.gather<offset_dims = [1],
      collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
      indices_are_sorted = false, slice_sizes = array<i64: 1, {cols}>}}> : ({t}, tensor<16x1xi32>) -> {out}
  return %s, %g : {t}, {out}
}}
func.func private @where(%p: {p}, %a: {t}, %b: {t}) -> {t} {{
  %0 = stablehlo.select %p, %a, %b : {p}, {t}
  return %0 : {t}
}}"""


@pytest.mark.parametrize("cpu", LEVELS)
def test_c64_selects_and_gathers_move_as_i64_bit_for_bit(cpu):
    """A module that only moves whole c64 numbers and selects or gathers them
    runs on i64 (Zen 4: a 512x1024 select 0.46 -> 0.22 ms, a gather of 256 rows
    0.25 -> 0.14): the same 8 bytes, nan payloads and signed zeros kept."""
    text = _picked_c64()
    linalg = _linalg_text(text, cpu)
    assert "complex" not in linalg and f"{ROWS}x{COLS}xi64" in linalg
    exe = xlac.compile(text, cache=False, cpu=cpu)
    assert "not scheduled:" not in exe.fusion_report(), exe.fusion_report()
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this CPU cannot run {cpu} code (compiled and scheduled: checked)")
    rng = np.random.default_rng(9)
    a, b = _complex((COLS, ROWS), np.complex64, rng), _complex((ROWS, COLS), np.complex64, rng)
    a[0, 0], b[0, 0] = complex(np.nan, 1.0), complex(-0.0, np.inf)
    inputs = [rng.random((ROWS, COLS)) < 0.5, a, b, rng.integers(0, ROWS, (16, 1)).astype(np.int32)]
    got, want = exe(*inputs), shared_server().run(text.encode(), inputs)
    for g, w in zip(got, want):
        assert g.dtype == np.complex64
        assert np.array_equal(g.view(np.uint8), np.asarray(w).view(np.uint8))
