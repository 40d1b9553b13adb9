"""xla-merge-select-branches: chlo decompositions that select between two
branches give, bit for bit, the same results with the branches merged as
without. The pass runs where a select is a masked move (AVX-512: x86-64-v4,
and the host where it has AVX-512) and at x86-64-v3, where the merged
coefficients' selects of two constants are permutes
(xla-constant-selects-as-permutes), not blends."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

_PASS = "xla-merge-select-branches"
_PERMUTES = "xla-constant-selects-as-permutes"


def _chlo(op: str, element: str, size: int) -> str:
    tensor = f"tensor<{size}x{element}>"
    return (f"func.func @main(%x: {tensor}) -> {tensor} {{\n"
            f"  %0 = chlo.{op} %x : {tensor} -> {tensor}\n  return %0 : {tensor}\n}}")


def _gelu(size: int) -> str:
    """BERT's erf-GELU: 0.5 x erfc(-x / sqrt 2)."""
    t = f"tensor<{size}xf32>"
    return (f"func.func @main(%x: {t}) -> {t} {{\n"
            f"  %h = stablehlo.constant dense<0.5> : {t}\n"
            f"  %r = stablehlo.constant dense<0.707106769> : {t}\n"
            f"  %a = stablehlo.multiply %h, %x : {t}\n  %n = stablehlo.negate %x : {t}\n"
            f"  %s = stablehlo.multiply %n, %r : {t}\n  %e = chlo.erfc %s : {t} -> {t}\n"
            f"  %g = stablehlo.multiply %a, %e : {t}\n  return %g : {t}\n}}")


def _arguments(dtype) -> np.ndarray:
    """Every binade of both signs, the branch points' neighbourhoods and the
    special values: +-0, +-inf, NaN, the smallest subnormal, the largest."""
    rng = np.random.default_rng(11)
    info = np.finfo(dtype)
    magnitudes = np.exp2(rng.uniform(np.log2(float(info.tiny)) - 20, np.log2(float(info.max)), 3000))
    near = np.concatenate([rng.uniform(-12, 12, 3000), 1 + rng.uniform(-1e-3, 1e-3, 200),
                           2 + rng.uniform(-1e-3, 1e-3, 200), rng.uniform(-0.5, 0.5, 200) + 0.5])
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0, 0.5,
               float(info.max), -float(info.max), float(info.smallest_subnormal), 9.194, -9.194]
    values = np.concatenate([magnitudes, -magnitudes, near, -near, special]).astype(dtype)
    return np.resize(values, 6912)      # a multiple of every vector width, plus no tail


# the decompositions the pass changes (f32 erf has no select; lgamma's,
# digamma's, bessel_i1e's and erf_inv's selects have nothing to merge)
_CASES = [("erfc", "f32"), ("erfc", "f64"), ("erf", "f64"), ("gelu", "f32")]


@pytest.mark.parametrize("level", ["x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize(("op", "element"), _CASES)
def test_merged_branches_are_bitwise_the_same(op, element, level):
    if level not in runnable_levels(level):
        pytest.skip(f"this host cannot run {level} code")
    dtype = np.float32 if element == "f32" else np.float64
    x = _arguments(dtype)
    text = _gelu(x.size) if op == "gelu" else _chlo(op, element, x.size)
    merged = xlac.compile(text, cpu=level)(x)
    passes = (_PASS, _PERMUTES) if level == "x86-64-v3" else (_PASS,)
    plain = xlac.compile(text, cpu=level, disable_passes=passes)(x)
    bits = np.uint32 if element == "f32" else np.uint64
    np.testing.assert_array_equal(merged.view(bits), plain.view(bits))


def test_erfc_f32_evaluates_one_polynomial():
    """erfc's two Horner chains on 1/x^2 are one (7 multiplies and adds fewer)
    at x86-64-v3 and v4; x86-64-v2 (SSE's blends, no permute pass) keeps both.
    At x86-64-v3 the 7 coefficient selects are permutes, at v4 masked moves."""
    text = _chlo("erfc", "f32", 1024)
    exes = {level: xlac.compile(text, cpu=level) for level in ("x86-64-v2", "x86-64-v3", "x86-64-v4")}
    count = {level: (exe.as_text("stablehlo").count("stablehlo.multiply"),
                     exe.as_text("stablehlo").count("stablehlo.add"),
                     exe.as_text("llvm").count("vpermilvar"))
             for level, exe in exes.items()}
    assert count == {"x86-64-v2": (25, 21, 0), "x86-64-v3": (18, 14, 28), "x86-64-v4": (18, 14, 0)}
