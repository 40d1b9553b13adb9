"""A column gather's addresses (indices read from memory, clamped, plus a row's
offset) fit i32 by the range analysis, so xla-narrow-index-vectors computes them
and gathers with i32 lanes; the values read are the same as the StableHLO
reference interpreter's, indices past either end included (clamped)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlac
from xlac.reference.server import shared_server


def _column_gather(element: str, rows: int, cols: int, count: int) -> str:
    table, ids = f"tensor<{rows}x{cols}x{element}>", f"tensor<{count}x1xi32>"
    return f"""func.func @main(%t: {table}, %i: {ids}) -> tensor<{rows}x{count}x{element}> {{
  %0 = "stablehlo.gather"(%t, %i) <{{dimension_numbers = #stablehlo.gather<offset_dims = [0],
      collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1>,
      indices_are_sorted = false, slice_sizes = array<i64: {rows}, 1>}}>
      : ({table}, {ids}) -> tensor<{rows}x{count}x{element}>
  return %0 : tensor<{rows}x{count}x{element}>
}}"""


@pytest.mark.parametrize("element,dtype", [("i32", np.int32), ("f64", np.float64), ("f16", np.float16)])
def test_column_gather_uses_i32_indices(element, dtype):
    text = _column_gather(element, 24, 300, 40)
    exe = xlac.compile(text, cache=False, cpu="x86-64-v3")
    gathers = re.findall(r"vector\.gather .*", exe.as_text("bufferized"))
    assert gathers and all(re.search(r", vector<\d+xi32>, vector<\d+xi1>", g) for g in gathers), gathers
    rng = np.random.default_rng(7)
    table = (rng.standard_normal((24, 300)) * 100).astype(dtype)
    ids = rng.integers(-50, 350, (40, 1)).astype(np.int32)       # some past either end
    (want,) = shared_server().run(text.encode(), [table, ids])
    np.testing.assert_array_equal(np.asarray(exe(table, ids)), want)
