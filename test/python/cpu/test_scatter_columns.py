"""Scatters whose windows span the operand's leading dim (``x.at[:, cols].add(v)``),
run one operand row at a time in parallel chunks of rows (scatter_split.py),
against the reference interpreter: repeated columns combine in update order,
out-of-bounds windows are dropped whole, flags change nothing."""

import numpy as np
import pytest

import xlac
from xlac.reference.server import shared_server

_SCATTER = """func.func @main(%x: {operand}, %i: {indices}, %u: {updates}) -> {operand} {{
  %r = "stablehlo.scatter"(%x, %i, %u) ({{
  ^bb0(%a: tensor<{e}>, %b: tensor<{e}>):
    {combine}
    stablehlo.return %s : tensor<{e}>
  }}) {{scatter_dimension_numbers = #stablehlo.scatter<{dims}>{flags}}}
     : ({operand}, {indices}, {updates}) -> {operand}
  return %r : {operand}
}}
"""

_COMBINE = {"add": "%s = stablehlo.add %a, %b : tensor<{e}>",
            "set": "%s = stablehlo.add %b, %b : tensor<{e}>",          # not a plain copy
            "sub": "%s = stablehlo.subtract %a, %b : tensor<{e}>"}     # order matters


def _type(shape, e: str) -> str:
    return "tensor<" + "".join(f"{n}x" for n in shape) + e + ">"


def _program(operand, indices, updates, dims: str, e: str, combine: str, flags: str = "") -> str:
    return _SCATTER.format(operand=_type(operand, e), indices=_type(indices, "i32"),
                           updates=_type(updates, e), e=e, dims=dims,
                           combine=_COMBINE[combine].format(e=e), flags=flags and f", {flags}")


def _check(text: str, inputs, cpu: str = "x86-64-v3", split: bool = True):
    exe = xlac.compile(text, cpu=cpu, cache=False)
    assert ("scf.forall" in exe.as_text("linalg")) == split          # 2+ chunks of rows
    (want,) = shared_server().run(text.encode(), inputs)
    np.testing.assert_array_equal(np.asarray(exe(*inputs)), want)       # bits: same order


_COLUMNS = "update_window_dims = [0], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1], index_vector_dim = 1"


@pytest.mark.parametrize("e", ["i32", "f32"])
@pytest.mark.parametrize("combine", ["add", "sub", "set"])
def test_columns_with_repeats_and_out_of_bounds(e, combine):
    """512 rows of 300 updates: two chunks of rows; columns repeated and out of bounds."""
    rng = np.random.default_rng(3)
    rows, cols, n = 512, 40, 300
    ids = rng.integers(-3, cols + 3, n).astype(np.int32)
    ids[:4] = [-1, cols, 7, 7]
    x = rng.integers(-99, 99, (rows, cols)).astype(e.replace("f", "float").replace("i", "int"))
    u = rng.standard_normal((rows, n)).astype(x.dtype) if e == "f32" else rng.integers(-99, 99, (rows, n)).astype(x.dtype)
    text = _program((rows, cols), (n, 1), (rows, n), _COLUMNS, e, combine)
    _check(text, [x, ids.reshape(n, 1), u])


@pytest.mark.parametrize("flags", ["indices_are_sorted = true", "unique_indices = true"])
def test_flags_change_nothing(flags):
    rng = np.random.default_rng(4)
    ids = np.sort(rng.permutation(400)[:300]).astype(np.int32).reshape(300, 1)
    x, u = rng.standard_normal((512, 400)).astype(np.float32), rng.standard_normal((512, 300)).astype(np.float32)
    _check(_program((512, 400), (300, 1), (512, 300), _COLUMNS, "f32", "add", flags), [x, ids, u])


def test_windows_inside_rows_of_a_3d_operand():
    """x.at[:, i].add(v) on 64x50x8: windows [64, 8] at (0, i, 0); ids repeated and out of bounds."""
    rng = np.random.default_rng(5)
    ids = rng.integers(-2, 52, (300, 1)).astype(np.int32)
    ids[:4, 0] = [3, 3, 50, -1]
    x, u = rng.standard_normal((64, 50, 8)).astype(np.float32), rng.standard_normal((64, 300, 8)).astype(np.float32)
    dims = ("update_window_dims = [0, 2], inserted_window_dims = [1], "
            "scatter_dims_to_operand_dims = [1], index_vector_dim = 1")
    _check(_program((64, 50, 8), (300, 1), (64, 300, 8), dims, "f32", "sub"), [x, ids, u])


def test_a_scattered_leading_dim_is_not_split():
    """Rows scattered (a segment sum): not this path."""
    rng = np.random.default_rng(6)
    ids = rng.integers(0, 8, (20, 1)).astype(np.int32)
    x, u = np.zeros((8, 4), np.float32), rng.standard_normal((20, 4)).astype(np.float32)
    dims = "update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1"
    _check(_program((8, 4), (20, 1), (20, 4), dims, "f32", "add"), [x, ids, u], split=False)
