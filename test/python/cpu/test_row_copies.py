"""Copies of rows between strided buffers (xla-strided-copy-to-linalg): a
concatenate along the rows and a pad's interior of 1 MiB or more share their
rows out to the threads in parts (the last one shorter); the result is the
same copy. Compiled for named levels, checked against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels


def _concatenate(rows: int, cols: int, element: str) -> str:
    t, out = f"tensor<{rows}x{cols}x{element}>", f"tensor<{rows}x{2 * cols}x{element}>"
    return f"""func.func @main(%a: {t}, %b: {t}) -> {out} {{
  %0 = stablehlo.concatenate %a, %b, dim = 1 : ({t}, {t}) -> {out}
  return %0 : {out}
}}"""


def _pad(rows: int, cols: int, element: str) -> str:
    t, out = f"tensor<{rows}x{cols}x{element}>", f"tensor<{rows + 2}x{cols + 16}x{element}>"
    return f"""func.func @main(%a: {t}) -> {out} {{
  %z = stablehlo.constant dense<0.0> : tensor<{element}>
  %0 = stablehlo.pad %a, %z, low = [1, 8], high = [1, 8], interior = [0, 0] : ({t}, tensor<{element}>) -> {out}
  return %0 : {out}
}}"""


@pytest.mark.parametrize("cpu", ["x86-64-v2", "x86-64-v3"])
@pytest.mark.parametrize("kind,element,dtype", [
    ("concatenate", "f32", np.float32), ("concatenate", "complex<f64>", np.complex128),
    ("pad", "f64", np.float64)])
def test_large_row_copies_in_parts_are_exact(kind, element, dtype, cpu):
    rows, cols = 301, 880                    # >= 1 MiB; 301 rows: 16 parts of 19, the last of 16
    text = (_concatenate if kind == "concatenate" else _pad)(rows, cols, element)
    exe = xlac.compile(text, cache=False, cpu=cpu)
    assert "omp.wsloop" in exe.as_text("llvm")       # the rows in parts, on the threads
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this CPU cannot run {cpu} code")
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((rows, cols)).astype(dtype) for _ in range(2))
    if kind == "concatenate":
        np.testing.assert_array_equal(np.asarray(exe(a, b)), np.concatenate([a, b], 1))
    else:
        np.testing.assert_array_equal(np.asarray(exe(a)), np.pad(a, ((1, 1), (8, 8))))
