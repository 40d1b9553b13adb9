"""c128 gathers of whole rows as pairs made on the merged shape
(xla-complex-as-pairs, complex_merged_pairs.py): no complex tensor left, no
kernel whose vectors run along the 2 parts, and bit for bit the interpreter
and numpy (signed zeros, nan payloads, clamped indices) at SSE4.2, AVX2 and
AVX-512; a gather of columns stays complex."""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_complex_pairs import LEVELS, _complex, _linalg_text

import xlac
from conftest import runnable_levels
from xlac.compiler import resolve_options
from xlac.pipeline.stage_texts import StageTexts
from xlac.reference.server import shared_server
from xlac.targets import get_target

ROWS, COLS = 37, 300                    # remainders in both dims


def _gather_rows(c: str) -> str:
    """``t[i]``: rows of a complex table, as jnp writes it."""
    t, out = f"tensor<{ROWS}x{COLS}x{c}>", f"tensor<16x{COLS}x{c}>"
    return f"""func.func @main(%a: {t}, %i: tensor<16x1xi32>) -> {out} {{
  %g = "stablehlo.gather"(%a, %i) <{{dimension_numbers = #stablehlo.gather<offset_dims = [1],
      collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
      indices_are_sorted = false, slice_sizes = array<i64: 1, {COLS}>}}> : ({t}, tensor<16x1xi32>) -> {out}
  return %g : {out}
}}"""


def _gather_columns(c: str) -> str:
    """``t[:, i]``: the parts cannot merge with the gathered dim."""
    t, out = f"tensor<{ROWS}x{COLS}x{c}>", f"tensor<{ROWS}x16x{c}>"
    return f"""func.func @main(%a: {t}, %i: tensor<16x1xi32>) -> {out} {{
  %g = "stablehlo.gather"(%a, %i) <{{dimension_numbers = #stablehlo.gather<offset_dims = [0],
      collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1>,
      indices_are_sorted = false, slice_sizes = array<i64: {ROWS}, 1>}}> : ({t}, tensor<16x1xi32>) -> {out}
  return %g : {out}
}}"""


def _bufferized(text: str, cpu: str) -> str:
    stages = StageTexts(get_target("cpu"), text.encode(), "pairs.mlir", "main",
                        resolve_options(None, cpu=cpu))
    module, _ = stages._run_until("bufferized")
    return module.operation.get_asm(large_elements_limit=16)


def _assert_merged(text: str, cpu: str) -> None:
    assert "complex" not in _linalg_text(text, cpu)
    bufferized = _bufferized(text, cpu)
    # 2 lanes: the parts' dim, but for f64 at SSE4.2 (a 16-byte register holds 2)
    narrow = "f32" if cpu == "x86-64-v2" else "f(32|64)"
    assert not re.search(rf"vector<(\d+x)*2x{narrow}>", bufferized), "vectors along the 2 parts"
    assert "vector<" in bufferized


def _same_bits(got, want) -> None:
    got = got if isinstance(got, (list, tuple)) else [got]
    for g, w in zip(got, want):
        assert g.dtype == np.asarray(w).dtype
        assert np.array_equal(g.view(np.uint8), np.asarray(w).view(np.uint8))


@pytest.mark.parametrize("cpu", LEVELS)
def test_c128_rows_gather_as_rows_of_parts_bit_for_bit(cpu):
    """A c128 table read as rows of f64 parts (c128 has no 16-byte integer
    lanes; c64 moves as i64): nan payloads, infinities and signed zeros are
    bytes moved; an index past the table is clamped, as the interpreter does."""
    text = _gather_rows("complex<f64>")
    _assert_merged(text, cpu)
    exe = xlac.compile(text, cache=False, cpu=cpu)
    assert "not scheduled:" not in exe.fusion_report(), exe.fusion_report()
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this CPU cannot run {cpu} code (compiled and scheduled: checked)")
    rng = np.random.default_rng(3)
    table = _complex((ROWS, COLS), np.complex128, rng)
    ids = rng.integers(0, ROWS, (16, 1)).astype(np.int32)
    ids[:3, 0] = [2, ROWS + 5, -4]
    _same_bits(exe(table, ids), shared_server().run(text.encode(), [table, ids]))
    # the interpreter reads (nan, -0) back as (nan, +0): special values against numpy's rows
    table[2, 0] = complex(np.frombuffer(np.uint64(0x7FF8_0000_0000_0123).tobytes(), np.float64)[0], -0.0)
    table[2, 1] = complex(-0.0, -np.inf)
    _same_bits(exe(table, ids), [table[np.clip(ids[:, 0], 0, ROWS - 1)]])


def test_a_gather_of_columns_stays_complex():
    assert "complex<f64>" in _linalg_text(_gather_columns("complex<f64>"), "x86-64-v3")
