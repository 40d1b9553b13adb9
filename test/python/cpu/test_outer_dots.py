"""xla-outer-dots-as-multiplies: a dot_general without contracting dimensions
is a multiply of its operands brought to the result's order: the same bits as
the dot, and no dot left in the "stablehlo" stage."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac.reference.server import shared_server

_PASS = "xla-outer-dots-as-multiplies"

# (dot_general's operands and dimension numbers, numpy's einsum of the same)
_CASES = [
    # BERT's head mask: mask[h] * P[b, h, i, j], batch h, result [h, b, i, j]
    ("tensor<4xf32>", "tensor<2x4x8x16xf32>", "lhs_batching_dimensions = [0], rhs_batching_dimensions = [1]",
     "tensor<4x2x8x16xf32>", "h,bhij->hbij"),
    # no batch: an outer product, result [lhs free..., rhs free...]
    ("tensor<3x5xf32>", "tensor<7xf32>", "",
     "tensor<3x5x7xf32>", "ab,c->abc"),
    # batch dims out of order on both sides, free dims on both
    ("tensor<5x2x3xf64>", "tensor<3x4x2xf64>", "lhs_batching_dimensions = [2, 1], rhs_batching_dimensions = [0, 2]",
     "tensor<3x2x5x4xf64>", "abc,cdb->cbad"),
]


@pytest.mark.parametrize(("lhs", "rhs", "dims", "result", "einsum"), _CASES)
def test_outer_dot_is_the_product(lhs, rhs, dims, result, einsum):
    text = (f"func.func @main(%a: {lhs}, %b: {rhs}) -> {result} {{\n"
            f'  %0 = "stablehlo.dot_general"(%a, %b) {{dot_dimension_numbers = #stablehlo.dot<{dims}>}}'
            f" : ({lhs}, {rhs}) -> {result}\n"
            f"  return %0 : {result}\n}}")
    exe = xlac.compile(text, cpu="x86-64-v3")
    assert "dot_general" not in exe.as_text("stablehlo")
    dot = xlac.compile(text, cpu="x86-64-v3", disable_passes=(_PASS,))
    rng = np.random.default_rng(3)
    dtype = np.float64 if "f64" in lhs else np.float32
    args = [rng.standard_normal(_shape(t)).astype(dtype) for t in (lhs, rhs)]
    got = exe(*args)
    np.testing.assert_array_equal(got, dot(*args))
    np.testing.assert_array_equal(got, np.einsum(einsum, *args))


def test_a_negative_zero_product_sums_to_plus_zero_as_the_dot():
    # -1 * 0 is -0; the dot, like the reference interpreter, adds it to +0
    lhs, rhs, result = "tensor<2xf32>", "tensor<2x3xf32>", "tensor<2x3xf32>"
    text = (f"func.func @main(%a: {lhs}, %b: {rhs}) -> {result} {{\n"
            f'  %0 = "stablehlo.dot_general"(%a, %b) {{dot_dimension_numbers = #stablehlo.dot<'
            f"lhs_batching_dimensions = [0], rhs_batching_dimensions = [0]>}} : ({lhs}, {rhs}) -> {result}\n"
            f"  return %0 : {result}\n}}")
    args = [np.array([-1.0, 2.0], np.float32), np.array([[0.0, -0.0, 3.0], [-0.0, 0.0, -1.0]], np.float32)]
    (want,) = shared_server().run(text.encode(), args)
    got = xlac.compile(text, cpu="x86-64-v3")(*args)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    products = args[0][:, None] * args[1]
    assert np.signbit(products[0, 0]) and not np.signbit(want[want == 0]).any()   # the case the test is about


def _shape(tensor: str) -> list[int]:
    return [int(d) for d in tensor[len("tensor<"):].split("x")[:-1]]
