"""x^c for the constant exponents xla-expand-constant-powers rewrites: the
reference interpreter's values (IEEE pow) at the special points, and within
2 ulp of them elsewhere, in f32 and f64, on both CPU levels."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac.reference.interpreter import run_reference

SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, -2.0, -1e-3, 1.0]
EXPONENTS = (1.0, 2.0, -1.0, 0.5, -0.5, 1.5, -1.5)


def _program(size: int, element: str, exponent: float) -> str:
    return (f"func.func @main(%x: tensor<{size}x{element}>) -> tensor<{size}x{element}> {{\n"
            f"  %c = stablehlo.constant dense<{exponent}> : tensor<{element}>\n"
            f"  %e = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<{element}>) -> "
            f"tensor<{size}x{element}>\n"
            f"  %0 = stablehlo.power %x, %e : tensor<{size}x{element}>\n"
            f"  return %0 : tensor<{size}x{element}>\n}}")


@pytest.mark.parametrize("element, dtype", [("f32", np.float32), ("f64", np.float64)])
def test_constant_powers_match_the_interpreter(element, dtype):
    rng = np.random.default_rng(0)
    values = np.concatenate([np.array(SPECIAL), rng.uniform(1e-6, 1e6, 56)]).astype(dtype)
    for exponent in EXPONENTS:
        text = _program(values.size, element, exponent)
        expected = run_reference(text.encode(), [values])[0]
        for cpu in ("x86-64-v3", "host"):
            exe = xlac.compile(text, cpu=cpu, cache=False)
            assert "powf" not in exe.as_text("linalg")
            got = exe(values)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(expected), err_msg=str(exponent))
            exact = ~np.isfinite(expected) | (expected == 0)
            np.testing.assert_array_equal(got[exact], expected[exact], err_msg=str(exponent))
            assert (np.signbit(got[exact]) == np.signbit(expected[exact])).all(), exponent
            ulps = np.abs(got[~exact] - expected[~exact]) / np.spacing(np.abs(expected[~exact]))
            assert ulps.max(initial=0) <= 2, (exponent, ulps.max())
