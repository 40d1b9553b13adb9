"""Every element-type combination of dot_general and convolution that StableHLO
allows takes the vectorized, register-tiled schedules (issue 39), on AVX2 and
AVX-512 code alike, and computes what the reference interpreter does: narrow
floats in f32 with one rounding (as XLA), integers in i32/i64 (wrapping as
StableHLO's narrow integers do), complex as four real contractions."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

import xlac
from conftest import runnable_levels
from xlac.context import new_context
from xlac.dtypes import numpy_dtype
from xlac.mlir import ir
from xlac.options import Options
from xlac.pipeline.pass_manager import run_passes
from xlac.reference.server import shared_server
from xlac.targets import get_target

C64, C128 = "complex<f32>", "complex<f64>"
# (lhs, rhs, result) element types
DOTS = [("f32", "f32", "f32"), ("f64", "f64", "f64"), ("bf16", "bf16", "bf16"),
        ("bf16", "bf16", "f32"), ("f16", "f16", "f16"), ("f16", "f16", "f32"),
        ("bf16", "f32", "f32"), ("f32", "bf16", "f32"), ("i8", "i8", "i32"),
        ("ui8", "ui8", "i32"), ("ui8", "i8", "i32"), ("i8", "i8", "i8"), ("i32", "i32", "i32"),
        ("i64", "i64", "i64"), ("f8E4M3FN", "f8E4M3FN", "f32"), ("f8E5M2", "f8E5M2", "bf16"),
        (C64, C64, C64),
        # the audit of issue 39 (all right and vectorized before they were listed here):
        # f16 and f8 mixed with other types, f8's FNUZ variants, f8 through f16, c128
        ("f16", "f32", "f32"), ("bf16", "f16", "f32"), ("i8", "ui8", "i32"),
        ("f8E4M3FN", "f8E5M2", "f32"), ("f8E4M3FN", "bf16", "f32"), ("f8E4M3FNUZ", "f8E4M3FNUZ", "f32"),
        ("f8E5M2FNUZ", "f8E5M2FNUZ", "f32"), ("f8E4M3FN", "f8E4M3FN", "f16"),
        (C128, C128, C128)]
# a convolution's operands have one type (the verifier says so)
CONVS = [(t, t, r) for t, r in [("f32", "f32"), ("f64", "f64"), ("bf16", "bf16"), ("bf16", "f32"),
                                ("f16", "f16"), ("f16", "f32"), ("i8", "i32"), ("ui8", "i32"),
                                ("i8", "i8"), ("i32", "i32"), ("i64", "i64"),
                                ("f8E4M3FN", "f32"), ("f8E5M2", "bf16"), (C64, C64),
                                ("f8E5M2", "f32"), (C128, C128)]]
CASES = [("dot", *types) for types in DOTS] + [("conv", *types) for types in CONVS]
LEVELS = ("x86-64-v3", "x86-64-v4")
LANES = {"x86-64-v3": 32, "x86-64-v4": 64}      # bytes per vector register


def dot_program(a: str, b: str, r: str, m: int = 64, k: int = 128, n: int = 96) -> str:
    return (f"func.func @main(%a: tensor<{m}x{k}x{a}>, %b: tensor<{k}x{n}x{b}>) -> tensor<{m}x{n}x{r}> {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
            f"(tensor<{m}x{k}x{a}>, tensor<{k}x{n}x{b}>) -> tensor<{m}x{n}x{r}>\n"
            f"  return %0 : tensor<{m}x{n}x{r}>\n}}")


def conv_program(a: str, b: str, r: str, n: int = 2, hw: int = 16, c: int = 32, f: int = 64) -> str:
    x, w, y = (f"tensor<{n}x{hw}x{hw}x{c}x{a}>", f"tensor<3x3x{c}x{f}x{b}>",
               f"tensor<{n}x{hw - 2}x{hw - 2}x{f}x{r}>")
    return (f"func.func @main(%a: {x}, %b: {w}) -> {y} {{\n"
            f"  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
            f"window = {{}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : ({x}, {w}) -> {y}\n"
            f"  return %0 : {y}\n}}")


def program(kind: str, a: str, b: str, r: str, small: bool = False) -> str:
    """The canonical 64x128 . 128x96 dot or 2x16x16x32 * 3x3x32x64 convolution
    (``small``: a 1x10x10x16 * 3x3x16x32 one, for the slow interpreter)."""
    if kind == "dot":
        return dot_program(a, b, r)
    return conv_program(a, b, r, 1, 10, 16, 32) if small else conv_program(a, b, r)


def lowered(text: str, steps: list[str]) -> tuple[str, list[str]]:
    """The LLVM dialect ``steps`` make of ``text``, and the schedules' remarks."""
    with new_context():
        module = ir.Module.parse(text)
        remarks = run_passes(module, steps)
        return str(module), [r.message for r in remarks if r.message.startswith("xla-apply-schedules")]


def register_tile_ops(llvm: str, element: str, vector_bytes: int) -> list[str]:
    """The vector multiply-adds of a register tile in ``llvm``: FMAs on floats,
    multiplies on integers, over at least one full register of ``element``."""
    bits = int(re.sub(r"\D", "", element))
    lanes = vector_bytes * 8 // bits
    op = r"llvm\.intr\.fmuladd\(.*" if element.startswith("f") else r"llvm\.mul .*"
    found = re.findall(op + rf": \(?vector<(\d+)x{element}>", llvm)
    return [n for n in found if int(n) >= lanes]


def accumulators(a: str, r: str) -> tuple[str, ...]:
    """The types a register tile may sum ``a`` in: narrow integers in f32
    where every sum is an exact f32 integer (xla-widen-contractions)."""
    if a in (C64, C128):
        return ("f32",) if a == C64 else ("f64",)
    if a.startswith(("f", "bf")):
        return ("f64",) if "f64" in (a, r) else ("f32",)
    return ("i64",) if "64" in r else ("i32",) if a == "i32" else ("f32", "i32")


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("kind, a, b, r", CASES)
def test_every_type_takes_a_register_tiled_schedule(kind, a, b, r, level):
    """No contraction is left as scalar loops, and the LLVM code multiplies
    whole registers of the accumulator type (AVX-512 code compiled only, where
    the host lacks it). Complex data has no vector form: only the real and
    imaginary parts' split and join stay scalar (a few % of the time)."""
    options = Options().replace(cpu=level)
    steps = get_target("cpu").steps_until("llvm", "main", options)
    llvm, remarks = lowered(program(kind, a, b, r), steps)
    if a in (C64, C128):
        remarks = [m for m in remarks if "linalg.generic" not in m]
    assert remarks == []
    # an f32 tile may be a call of a micro-kernel (xla-micro-kernel-calls), whose FMAs are its own
    assert any(register_tile_ops(llvm, t, LANES[level]) for t in accumulators(a, r)) or \
        ("f32" in accumulators(a, r) and "llvm.call @xlac_ukernel_f32_" in llvm)


@pytest.fixture
def bf16_level(monkeypatch) -> Options:
    """Options for AVX-512 with AVX512-BF16 (Zen 4, Cooper Lake) on any host:
    the CPU level's model given that feature (code compiled only, never run)."""
    from xlac.cpu_model import LEVELS, CpuModel
    from xlac.targets.cpu import pipeline
    model = CpuModel("x86-64-v4", tuple(sorted(LEVELS["x86-64-v4"] + ("avx512_bf16",))))
    monkeypatch.setattr(pipeline, "cpu_model", lambda name="host": model)
    return Options(cpu="x86-64-v4", num_threads=2, micro_kernels=False)


@pytest.mark.parametrize("kind, a, b, r", [case for case in CASES if "bf16" in case[1:]])
def test_native_bf16_keeps_the_schedules(kind, a, b, r, bf16_level):
    """With AVX512-BF16 the f32 -> bf16 rounding is the CPU's own (no integer
    rounding code): the contraction takes the same f32 register tiles."""
    llvm, remarks = lowered(program(kind, a, b, r), get_target("cpu").steps_until("llvm", "main", bf16_level))
    assert remarks == []
    assert register_tile_ops(llvm, "f32", 64)
    if r == "bf16":
        assert re.search(r"llvm\.fptrunc .* : vector<\d+xf32> to vector<\d+xbf16>", llvm)


def inputs(kind: str, a: str, b: str, rng: np.random.Generator) -> list[np.ndarray]:
    shapes = [(64, 128), (128, 96)] if kind == "dot" else [(1, 10, 10, 16), (3, 3, 16, 32)]
    return [random_array(t, s, rng) for t, s in zip((a, b), shapes)]


def random_array(element: str, shape, rng: np.random.Generator) -> np.ndarray:
    dtype = numpy_dtype(element)
    if dtype.kind in "iu":
        low, high = (0, 256) if dtype.kind == "u" else (-128, 128)
        return rng.integers(low, high, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


# |xlac - interpreter| <= TOLERANCE * max |interpreter|. The interpreter sums
# a bf16/f16 result in bf16/f16 (a rounding per term), xlac and XLA in f32
# with one rounding: those two bounds are the interpreter's error.
TOLERANCE = {"f32": 2e-6, "f64": 1e-14, "bf16": 2 ** -4, "f16": 2 ** -7, C64: 2e-6, C128: 1e-14,
             "i8": 0, "i32": 0, "i64": 0}


@pytest.mark.parametrize("kind, a, b, r", CASES)
def test_results_match_the_interpreter(kind, a, b, r):
    """Each combination against the StableHLO reference interpreter; narrow
    float results also against the exact sum rounded once (XLA's numbers):
    within a unit in the last place of the result type."""
    text = program(kind, a, b, r, small=True)
    args = inputs(kind, a, b, np.random.default_rng(39))
    want = shared_server().run(text.encode(), args)[0]
    for level in runnable_levels(*LEVELS):
        got = np.asarray(xlac.compile(text, cpu=level, cache=False)(*args))
        assert got.dtype == want.dtype
        wide = np.complex128 if r in (C64, C128) else np.float64
        error = np.abs(got.astype(wide) - want.astype(wide)).max()
        assert error <= TOLERANCE[r] * np.abs(want.astype(wide)).max(), (level, error)
        if r in ("bf16", "f16"):
            check_rounded_once(got, exact(kind, args), r)


def exact(kind: str, args: list[np.ndarray]) -> np.ndarray:
    """The contraction in f64 (exact for these inputs' products, sums to 2^-52)."""
    x, w = (v.astype(np.float64) for v in args)
    if kind == "dot":
        return x @ w
    windows = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(1, 2))   # n, oh, ow, c, 3, 3
    return np.einsum("nhwcij,ijcf->nhwf", windows, w)


def check_rounded_once(got: np.ndarray, exact_sum: np.ndarray, element: str) -> None:
    eps = float(ml_dtypes.finfo(numpy_dtype(element)).eps)
    error = np.abs(got.astype(np.float64) - exact_sum)
    assert (error <= eps * np.abs(exact_sum) + 1e-5 * np.abs(exact_sum).max()).all()


@pytest.mark.parametrize("a, r", [("bf16", "f32"), ("i8", "i32"), ("ui8", "i32"), ("f8E4M3FN", "f32")])
@pytest.mark.parametrize("m", [24, 576])
def test_widening_fused_into_the_packing_is_right(a, r, m):
    """k long enough for packed panels (320): B's widening is its packing
    (AVX-512's 16 x 16 panels; AVX2's whole blocks where m > 512), A's in
    the k blocks of AVX-512's chunks of rows (test_a_is_widened_where_it_is_read),
    else a kernel of its own. i8 sums are exact in f32 here (320 x 2^14 < 2^24);
    ui8 x ui8 ones are not (320 x 255^2), and are summed in i32. Compared
    with numpy on the host's levels."""
    text = dot_program(a, a, r, m, 320, 64)
    rng = np.random.default_rng(m)
    args = [random_array(a, (m, 320), rng), random_array(a, (320, 64), rng)]
    wide = np.int64 if r == "i32" else np.float64
    want = args[0].astype(wide) @ args[1].astype(wide)
    for level in LEVELS:
        exe = xlac.compile(text, cpu=level, cache=False)
        assert "scalar loops" not in exe.fusion_report()
        if level in runnable_levels(level):
            got = np.asarray(exe(*args)).astype(wide)
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("a", ["bf16", "f16", "f8E4M3FN"])
@pytest.mark.parametrize("level, m, k, n", [("x86-64-v4", 256, 512, 256), ("x86-64-v4", 2048, 1024, 64)])
def test_a_is_widened_where_it_is_read(a, level, m, k, n):
    """A narrow float A summed in f32, B widened in its panels and chunks of
    rows (@xla_matmul_fused_b at x86-64-v4), is widened block by block in the
    matmul's k blocks (@xla_widen_a_per_block), not into an f32 copy of all
    of A by a kernel of its own, written to memory and read back (issue 39):
    no m x k f32 buffer is left once bufferized. Compared with numpy on the
    host's levels: widening is exact, the sums run in the same order."""
    text = dot_program(a, a, "f32", m, k, n)
    steps = get_target("cpu").steps_until("bufferized", "main", Options().replace(cpu=level))
    bufferized, remarks = lowered(text, steps)
    assert remarks == []
    assert f"memref<{m}x{k}xf32>" not in bufferized
    assert re.search(rf"arith\.extf .* : vector<\d+x{a}> to vector<\d+xf32>", bufferized)
    if level in runnable_levels(level):
        rng = np.random.default_rng(39)
        args = [random_array(a, (m, k), rng), random_array(a, (k, n), rng)]
        got = np.asarray(xlac.compile(text, cpu=level, cache=False)(*args)).astype(np.float64)
        want = args[0].astype(np.float64) @ args[1].astype(np.float64)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * np.abs(want).max())


def test_a_is_widened_where_it_is_read_with_an_epilogue():
    """The same in @xla_matmul_fused_b_epilogue_2d (a bias and ReLU after the
    dot, as a mixed-precision MLP's layer has), at x86-64-v4."""
    m, k, n = 256, 512, 256
    ab, c = f"tensor<{m}x{k}xbf16>, tensor<{k}x{n}xbf16>", f"tensor<{m}x{n}xf32>"
    text = (f"func.func @main(%a: tensor<{m}x{k}xbf16>, %b: tensor<{k}x{n}xbf16>, %c: tensor<{n}xf32>) -> {c} {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : ({ab}) -> {c}\n"
            f"  %1 = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<{n}xf32>) -> {c}\n"
            f"  %2 = stablehlo.add %0, %1 : {c}\n"
            f"  %z = stablehlo.constant dense<0.0> : {c}\n"
            f"  %3 = stablehlo.maximum %2, %z : {c}\n"
            f"  return %3 : {c}\n}}")
    steps = get_target("cpu").steps_until("bufferized", "main", Options().replace(cpu="x86-64-v4"))
    bufferized, remarks = lowered(text, steps)
    assert remarks == []
    assert f"memref<{m}x{k}xf32>" not in bufferized
