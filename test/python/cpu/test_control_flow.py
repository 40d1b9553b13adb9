"""while / if / case, tuples and the dynamic-shape leftovers through xlac.compile,
checked against numpy."""

import numpy as np
import pytest

import xlac

_POWER_LOOP = """
func.func @main(%x: tensor<3x4xf32>, %n: tensor<ui32>) -> (tensor<3x4xf32>, tensor<ui32>) {
  %zero = stablehlo.constant dense<0> : tensor<ui32>
  %one = stablehlo.constant dense<1> : tensor<ui32>
  %r:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<ui32>, tensor<3x4xf32>
  cond {
    %c = stablehlo.compare LT, %i, %n, UNSIGNED : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %i1 = stablehlo.add %i, %one : tensor<ui32>
    %a1 = stablehlo.multiply %acc, %x : tensor<3x4xf32>
    stablehlo.return %i1, %a1 : tensor<ui32>, tensor<3x4xf32>
  }
  return %r#1, %r#0 : tensor<3x4xf32>, tensor<ui32>
}"""


@pytest.mark.parametrize("trips", [0, 1, 5])
def test_while_loop_with_unsigned_counter(trips):
    x = np.random.default_rng(trips).uniform(0.5, 1.5, (3, 4)).astype(np.float32)
    exe = xlac.compile(_POWER_LOOP)
    power, count = exe.run(x, np.uint32(trips))
    expected = x.copy()
    for _ in range(trips):
        expected = expected * x
    np.testing.assert_allclose(power, expected, rtol=1e-6)
    assert count.dtype == np.uint32 and count == trips


_IF = """
func.func @main(%p: tensor<i1>, %a: tensor<5xf32>) -> tensor<5xf32> {
  %r = "stablehlo.if"(%p) ({
    %e = stablehlo.exponential %a : tensor<5xf32>
    stablehlo.return %e : tensor<5xf32>
  }, {
    %n = stablehlo.negate %a : tensor<5xf32>
    stablehlo.return %n : tensor<5xf32>
  }) : (tensor<i1>) -> tensor<5xf32>
  return %r : tensor<5xf32>
}"""


@pytest.mark.parametrize("predicate", [True, False])
def test_if_runs_one_branch(predicate):
    a = np.linspace(-1, 1, 5, dtype=np.float32)
    (got,) = xlac.compile(_IF).run(np.bool_(predicate), a)
    np.testing.assert_allclose(got, np.exp(a) if predicate else -a, rtol=1e-6)


_CASE = """
func.func @main(%i: tensor<i32>, %a: tensor<4xi32>) -> tensor<4xi32> {
  %r = "stablehlo.case"(%i) ({
    stablehlo.return %a : tensor<4xi32>
  }, {
    %n = stablehlo.negate %a : tensor<4xi32>
    stablehlo.return %n : tensor<4xi32>
  }, {
    %m = stablehlo.multiply %a, %a : tensor<4xi32>
    stablehlo.return %m : tensor<4xi32>
  }) : (tensor<i32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}"""


@pytest.mark.parametrize("index", [-1, 0, 1, 2, 3, 100])
def test_case_clamps_out_of_range_index_to_last_branch(index):
    a = np.arange(-2, 2, dtype=np.int32)
    branches = [a, -a, a * a]
    expected = branches[index] if 0 <= index < len(branches) else branches[-1]
    (got,) = xlac.compile(_CASE).run(np.int32(index), a)
    np.testing.assert_array_equal(got, expected)


_TUPLES_AND_BARRIER = """
func.func @main(%a: tensor<3xf32>, %b: tensor<i64>) -> (tensor<3xf32>, tensor<i64>) {
  %inner = stablehlo.tuple %b : tuple<tensor<i64>>
  %t = stablehlo.tuple %a, %inner : tuple<tensor<3xf32>, tuple<tensor<i64>>>
  %x = stablehlo.get_tuple_element %t[0] : (tuple<tensor<3xf32>, tuple<tensor<i64>>>) -> tensor<3xf32>
  %s = stablehlo.get_tuple_element %t[1] : (tuple<tensor<3xf32>, tuple<tensor<i64>>>) -> tuple<tensor<i64>>
  %y = stablehlo.get_tuple_element %s[0] : (tuple<tensor<i64>>) -> tensor<i64>
  %bx, %by = stablehlo.optimization_barrier %x, %y : tensor<3xf32>, tensor<i64>
  %z = stablehlo.add %bx, %bx : tensor<3xf32>
  return %z, %by : tensor<3xf32>, tensor<i64>
}"""


def test_tuples_and_optimization_barrier_fold_away():
    a = np.array([1.5, -2.0, 3.25], np.float32)
    z, y = xlac.compile(_TUPLES_AND_BARRIER).run(a, np.int64(7))
    np.testing.assert_array_equal(z, a + a)
    assert y == 7


_DYNAMIC_UPDATE_EMPTY = """
func.func @main(%a: tensor<4x3x2xf32>, %u: tensor<2x0x1xf32>, %i: tensor<i64>) -> tensor<4x3x2xf32> {
  %r = stablehlo.dynamic_update_slice %a, %u, %i, %i, %i
    : (tensor<4x3x2xf32>, tensor<2x0x1xf32>, tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4x3x2xf32>
  return %r : tensor<4x3x2xf32>
}"""


def test_zero_element_argument_in_the_middle_dimension():
    a = np.random.default_rng(0).standard_normal((4, 3, 2)).astype(np.float32)
    (got,) = xlac.compile(_DYNAMIC_UPDATE_EMPTY).run(a, np.zeros((2, 0, 1), np.float32),
                                                     np.int64(1))
    np.testing.assert_array_equal(got, a)


_DYNAMIC_RESHAPE = """
func.func @main(%a: tensor<2x6xi32>) -> tensor<3x4xi32> {
  %shape = stablehlo.constant dense<[3, 4]> : tensor<2xi64>
  %r = stablehlo.dynamic_reshape %a, %shape : (tensor<2x6xi32>, tensor<2xi64>) -> tensor<3x4xi32>
  return %r : tensor<3x4xi32>
}"""


def test_dynamic_reshape_with_constant_shape():
    a = np.arange(12, dtype=np.int32).reshape(2, 6)
    (got,) = xlac.compile(_DYNAMIC_RESHAPE).run(a)
    np.testing.assert_array_equal(got, a.reshape(3, 4))


LOOP_INVARIANT_CONCAT = """
func.func @main(%w1: tensor<16x32xf32>, %w2: tensor<16x32xf32>, %x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %trips = stablehlo.constant dense<3> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %h = %x) : tensor<i32>, tensor<4x32xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %trips : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %w = stablehlo.concatenate %w1, %w2, dim = 0 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<32x32xf32>
      %d = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0] : (tensor<4x32xf32>, tensor<32x32xf32>) -> tensor<4x32xf32>
      %t = stablehlo.tanh %d : tensor<4x32xf32>
      %n = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %n, %t : tensor<i32>, tensor<4x32xf32>
    }
  return %r#1 : tensor<4x32xf32>
}
"""


def test_loop_invariant_work_leaves_the_while_body():
    """An RNN's weight concatenation runs once, before the loop, not per step."""
    exe = xlac.compile(LOOP_INVARIANT_CONCAT)
    linalg = exe.as_text("linalg")
    assert "tensor<32x32xf32>" in linalg.split("scf.while")[0]      # the concat, hoisted
    assert "tensor<32x32xf32>) outs" not in linalg.split("scf.while")[1].split("linalg.matmul")[0]
    rng = np.random.default_rng(0)
    w1, w2 = (rng.standard_normal((16, 32), dtype=np.float32) * 0.2 for _ in range(2))
    h = rng.standard_normal((4, 32), dtype=np.float32)
    expected = h
    for _ in range(3):
        expected = np.tanh(expected @ np.concatenate([w1, w2]))
    np.testing.assert_allclose(exe(w1, w2, h), expected, rtol=1e-5, atol=1e-5)
